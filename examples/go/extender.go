// Command sokovan-extender is a scheduler extender in the shape Kubernetes
// uses (filter, score, bind over a list of nodes) whose decisions come from
// libsokovan's scheduler, embedded through the Go binding. It keeps its own
// node list and bindings; no daemon is involved.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"

	sokovan "github.com/libsokovan/libsokovan/bindings/go"
)

// Node is one node of the list the extender schedules over.
type Node struct {
	Name     string            `json:"name"`
	Capacity string            `json:"capacity"` // slots, e.g. "cpu=16,mem=64g"
	GPUs     int               `json:"gpus"`     // devices: cuda.device / cuda.shares
	Labels   map[string]string `json:"labels,omitempty"`
}

// Pod is what a request asks to place.
type Pod struct {
	Name    string            `json:"name"`
	Request string            `json:"request"`          // slots, e.g. "cpu=2,cuda.device=1"
	Labels  map[string]string `json:"labels,omitempty"` // node labels required
}

// Args is the body of /filter and /score.
type Args struct {
	Pod       Pod      `json:"pod"`
	NodeNames []string `json:"nodeNames"`
}

// FilterResult answers /filter: the nodes that fit and why the others do not.
type FilterResult struct {
	NodeNames   []string          `json:"nodeNames"`
	FailedNodes map[string]string `json:"failedNodes"`
	Error       string            `json:"error,omitempty"`
}

// HostPriority is one entry of the /score answer (0..MaxScore).
type HostPriority struct {
	Host  string `json:"host"`
	Score int    `json:"score"`
}

// MaxScore is the best score (Kubernetes' MaxExtenderPriority).
const MaxScore = 10

// BindArgs is the body of /bind and /release.
type BindArgs struct {
	Pod  Pod    `json:"pod"`
	Node string `json:"node"`
}

const group = "nodes"

// Extender holds the scheduler. Its mutex makes each probe sequence
// (submit, pass, withdraw) atomic; the Scheduler locks only per call.
type Extender struct {
	mu    sync.Mutex
	sched *sokovan.Scheduler
	nodes map[string]Node
	now   int64 // logical clock for the scheduler, one tick per request
}

// NewExtender builds a scheduler with one group holding the nodes.
func NewExtender(nodes []Node, selector string) (*Extender, error) {
	s, err := sokovan.NewScheduler(nil)
	if err != nil {
		return nil, err
	}
	e := &Extender{sched: s, nodes: map[string]Node{}}
	if err := s.AddGroup(group, &sokovan.GroupOptions{Selector: selector, MaxReservations: -1}); err != nil {
		s.Close()
		return nil, err
	}
	for _, n := range nodes {
		if err := e.addNode(n); err != nil {
			s.Close()
			return nil, fmt.Errorf("node %q: %w", n.Name, err)
		}
	}
	return e, nil
}

func (e *Extender) addNode(n Node) error {
	capa, err := sokovan.ParseSlots(n.Capacity)
	if err != nil {
		return err
	}
	defer capa.Close()
	devs := make([]sokovan.Device, n.GPUs)
	for i := range devs {
		devs[i] = sokovan.Device{ID: fmt.Sprintf("gpu%d", i), WholeSlot: "cuda.device", ShareSlot: "cuda.shares"}
	}
	err = e.sched.AddAgent(sokovan.AgentSpec{ID: n.Name, Group: group, Capacity: capa, Devices: devs, Labels: n.Labels})
	if err == nil {
		e.nodes[n.Name] = n
	}
	return err
}

// Close frees the scheduler.
func (e *Extender) Close() error { return e.sched.Close() }

func (e *Extender) tick() int64 { e.now++; return e.now }

// probe submits the pod once per candidate node (designated to it), runs
// one pass, and withdraws every probe. It returns where each probe was
// placed (the node, with its GPUs) and the library's reason for the rest.
func (e *Extender) probe(pod Pod, nodes []string) (map[string]sokovan.Placement, map[string]string, error) {
	req, err := sokovan.ParseSlots(pod.Request)
	if err != nil {
		return nil, nil, err
	}
	defer req.Close()
	now := e.tick()
	ids := map[string]string{} // probe id -> node
	defer e.withdraw(ids, now)
	failed := map[string]string{}
	for _, n := range nodes {
		if _, ok := e.nodes[n]; !ok {
			failed[n] = "unknown node"
			continue
		}
		id := "probe/" + pod.Name + "/" + n
		err := e.sched.Submit(sokovan.SessionSpec{ID: id, Group: group, Request: req,
			DesignatedAgents: []string{n}, Labels: pod.Labels}, now)
		if err != nil {
			return nil, nil, err
		}
		ids[id] = n
	}
	res, err := e.sched.Pass(now, &sokovan.PassOptions{Group: group})
	if err != nil {
		return nil, nil, err
	}
	placed := map[string]sokovan.Placement{}
	for _, p := range res.Placements {
		placed[ids[p.SessionID]] = p
	}
	for id, n := range ids {
		if _, ok := placed[n]; !ok {
			why, err := e.sched.Reason(id)
			if err != nil {
				return nil, nil, err
			}
			failed[n] = why.Text
		}
	}
	return placed, failed, nil
}

// withdraw cancels and forgets the probes, returning their resources.
func (e *Extender) withdraw(ids map[string]string, now int64) {
	for id := range ids {
		if e.sched.Cancel(id, now) == nil {
			e.sched.Forget(id)
		}
	}
}

// Filter keeps the nodes where the scheduler can place the pod.
func (e *Extender) Filter(a Args) (FilterResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	placed, failed, err := e.probe(a.Pod, a.NodeNames)
	if err != nil {
		return FilterResult{}, err
	}
	out := FilterResult{NodeNames: []string{}, FailedNodes: failed}
	for _, n := range a.NodeNames {
		if _, ok := placed[n]; ok {
			out.NodeNames = append(out.NodeNames, n)
		}
	}
	return out, nil
}

// Score ranks the candidate nodes: 0 where the pod does not fit, else the
// node's dominant share once the pod is on it, scaled to 1..MaxScore-1
// (fuller scores higher: packing), and MaxScore for the node the group's
// selector picks itself when it may choose among all candidates.
func (e *Extender) Score(a Args) ([]HostPriority, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	placed, _, err := e.probe(a.Pod, a.NodeNames)
	if err != nil {
		return nil, err
	}
	best, err := e.selectorChoice(a.Pod, placed)
	if err != nil {
		return nil, err
	}
	out := make([]HostPriority, 0, len(a.NodeNames))
	for _, n := range a.NodeNames {
		score := 0
		if _, ok := placed[n]; ok {
			if score, err = e.packScore(n, a.Pod); err != nil {
				return nil, err
			}
		}
		if n == best {
			score = MaxScore
		}
		out = append(out, HostPriority{Host: n, Score: score})
	}
	return out, nil
}

// selectorChoice is the node the selector picks among the fitting ones.
func (e *Extender) selectorChoice(pod Pod, fitting map[string]sokovan.Placement) (string, error) {
	if len(fitting) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(fitting))
	for n := range fitting {
		names = append(names, n)
	}
	sort.Strings(names)
	req, err := sokovan.ParseSlots(pod.Request)
	if err != nil {
		return "", err
	}
	defer req.Close()
	now := e.tick()
	id := "choice/" + pod.Name
	if err := e.sched.Submit(sokovan.SessionSpec{ID: id, Group: group, Request: req,
		DesignatedAgents: names, Labels: pod.Labels}, now); err != nil {
		return "", err
	}
	defer e.withdraw(map[string]string{id: ""}, now)
	res, err := e.sched.Pass(now, &sokovan.PassOptions{Group: group})
	if err != nil || len(res.Placements) != 1 {
		return "", err
	}
	return res.Placements[0].Kernels[0].AgentID, nil
}

// packScore: the node's dominant share with the pod added, 1..MaxScore-1.
func (e *Extender) packScore(node string, pod Pod) (int, error) {
	used, capa, err := e.sched.AgentUsage(node)
	if err != nil {
		return 0, err
	}
	defer used.Close()
	defer capa.Close()
	req, err := sokovan.ParseSlots(pod.Request)
	if err != nil {
		return 0, err
	}
	defer req.Close()
	if err := used.Add(req); err != nil {
		return 0, err
	}
	share, _, err := sokovan.DominantShare(used, capa)
	if err != nil {
		return 0, err
	}
	if share > 1 {
		share = 1
	}
	return 1 + int(share*float64(MaxScore-2)+0.5), nil
}

// Bind places the pod on the node for real (it stays until Release).
func (e *Extender) Bind(b BindArgs) (sokovan.Placement, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	req, err := sokovan.ParseSlots(b.Pod.Request)
	if err != nil {
		return sokovan.Placement{}, err
	}
	defer req.Close()
	now := e.tick()
	id := "pod/" + b.Pod.Name
	if err := e.sched.Submit(sokovan.SessionSpec{ID: id, Group: group, Request: req,
		DesignatedAgents: []string{b.Node}, Labels: b.Pod.Labels}, now); err != nil {
		return sokovan.Placement{}, err
	}
	res, err := e.sched.Pass(now, &sokovan.PassOptions{Group: group})
	if err == nil && len(res.Placements) == 1 {
		return res.Placements[0], e.sched.MarkStarted(id, now)
	}
	why, rerr := e.sched.Reason(id)
	e.withdraw(map[string]string{id: b.Node}, now)
	if err != nil {
		return sokovan.Placement{}, err
	}
	if rerr != nil {
		return sokovan.Placement{}, rerr
	}
	return sokovan.Placement{}, fmt.Errorf("pod %q does not fit on %q: %s", b.Pod.Name, b.Node, why.Text)
}

// Release ends a bound pod, returning its resources.
func (e *Extender) Release(b BindArgs) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := "pod/" + b.Pod.Name
	if err := e.sched.MarkFinished(id, false, e.tick()); err != nil {
		return err
	}
	return e.sched.Forget(id)
}

// Handler serves POST /filter, /score, /bind and /release with JSON.
func (e *Extender) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/filter", post(func(a Args) (any, error) { return e.Filter(a) }))
	mux.HandleFunc("/score", post(func(a Args) (any, error) { return e.Score(a) }))
	mux.HandleFunc("/bind", post(func(b BindArgs) (any, error) { return e.Bind(b) }))
	mux.HandleFunc("/release", post(func(b BindArgs) (any, error) { return struct{}{}, e.Release(b) }))
	return mux
}

// post decodes the JSON body into T, calls f and writes its answer; bad
// JSON is 400, a refusal by the library 422 with its message.
func post[T any](f func(T) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		var in T
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		out, err := f(in)
		if err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
