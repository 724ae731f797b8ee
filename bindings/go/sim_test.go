package sokovan

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

const (
	simNodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,V100\nn1,32000,65536,2,V100\n"
	simPods  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" +
		"p0,1000,1024,1,500\np1,1000,1024,1,1000\np2,1000,1024,2,1000\np3,1000,1024,1,250\n"
	simJobs = "submit_time,duration,num_gpus,user\n0,100,1,a\n10,50,2,b\n20,10,8,a\n30,10,1,b\n"
)

// sharedData is ../shared/data as the other suites find it.
func sharedData(t *testing.T, rel string) string {
	t.Helper()
	base := "/work/shared/data"
	if src := os.Getenv("SKV_TEST_SRC_DIR"); src != "" {
		base = src + "/../shared/data"
	}
	path := base + "/" + rel
	if _, err := os.Stat(path); err != nil {
		t.Skipf("SKIP: needs %s (%v)", path, err)
	}
	return path
}

func TestSimPolicies(t *testing.T) {
	names := strings.Join(SimPolicies(), ",")
	for _, want := range []string{"frag", "fgd", "bestfit", "random"} {
		if !strings.Contains(","+names+",", ","+want+",") {
			t.Errorf("%s not in %s", want, names)
		}
	}
}

func TestSimOpenbInline(t *testing.T) {
	w, err := ParseOpenb(simNodes, simPods)
	must(t, err)
	defer w.Close()
	if w.Nodes() != 2 || w.Pods() != 4 || w.CapacityMilliGPU() != 4000 {
		t.Fatalf("nodes %d pods %d capacity %d", w.Nodes(), w.Pods(), w.CapacityMilliGPU())
	}
	r, err := w.Run(OpenbRunOptions{Policy: "bestfit", Seed: 1})
	must(t, err)
	if r.Events != len(r.Arrived) || r.Events != len(r.Allocated) || r.Placed+r.Dropped != r.Events ||
		r.Capacity != 4000 || r.Seed != 1 || r.Events < 4 {
		t.Errorf("result %+v", r)
	}
	for i, a := range r.Allocated {
		if a > 4000 || a > r.Arrived[i] || (i > 0 && r.Arrived[i] < r.Arrived[i-1]) {
			t.Errorf("event %d: allocated %d arrived %d", i, a, r.Arrived[i])
		}
	}
	if len(r.Columns) == 0 {
		t.Errorf("no table column: %+v", r.Columns)
	}
	for k, v := range r.Columns {
		if k%10 != 0 || v < 0 || v > 100 {
			t.Errorf("column %d = %f", k, v)
		}
	}
	again, err := w.Run(OpenbRunOptions{Policy: "bestfit", Seed: 1})
	must(t, err)
	if !reflect.DeepEqual(r, again) {
		t.Error("one seed, two different replays")
	}
	if _, err := w.Run(OpenbRunOptions{Policy: "no-such-policy"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown policy: %v", err)
	}
	_, err = ParseOpenb(simNodes, "name,cpu_milli\np0,abc\n")
	var e *Error
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.Message == "" {
		t.Errorf("bad pod list: %v", err)
	}
	if _, err := LoadOpenb("/nonexistent/nodes.csv", ""); err == nil {
		t.Error("loaded a missing file")
	}
	w.Close()
	w.Close()
	if _, err := w.Run(OpenbRunOptions{}); !errors.Is(err, ErrState) || w.Nodes() != 0 {
		t.Errorf("closed workload: %v", err)
	}
}

func TestSimOpenbTraceReplay(t *testing.T) {
	pods := sharedData(t, "traces/openb/openb_pod_list_default.csv")
	nodes := sharedData(t, "traces/openb/openb_node_list_gpu_node.csv")
	w, err := LoadOpenb(nodes, pods)
	must(t, err)
	defer w.Close()
	if w.Nodes() != 1213 {
		t.Errorf("%d nodes", w.Nodes())
	}
	a, err := w.Run(OpenbRunOptions{Policy: "frag", Seed: 42})
	must(t, err)
	b, err := w.Run(OpenbRunOptions{Policy: "frag", Seed: 42})
	must(t, err)
	if !reflect.DeepEqual(a, b) {
		t.Error("not deterministic for one seed")
	}
	if v, ok := a.Columns[100]; !ok || v <= 80 {
		t.Errorf("column 100: %v %v", v, ok)
	}
}

func TestSimJobs(t *testing.T) {
	j, err := ParseJobs(simJobs)
	must(t, err)
	defer j.Close()
	if j.Len() != 4 {
		t.Fatalf("%d jobs", j.Len())
	}
	r, err := j.Run(JobsRunOptions{NNodes: 1, Shape: NodeShape{CPU: 32000, Mem: 64 << 30, GPUs: 4}})
	must(t, err)
	if r.Jobs != 4 || r.Rejected != 1 || r.Completed != 3 || len(r.Owners) != 2 || r.DecisionsDigest == 0 ||
		r.Decisions != 3 || r.MakespanS <= 0 || r.Utilization <= 0 || r.Utilization > 1 {
		t.Errorf("result %+v", r)
	}
	names := map[string]bool{}
	for _, o := range r.Owners {
		names[o.Name] = true
	}
	if !names["a"] || !names["b"] {
		t.Errorf("owners %+v", r.Owners)
	}
	// the same jobs on an openb node list (2 x 2 GPUs): the 8-GPU job still never fits
	nodes, err := ParseOpenb(simNodes, "")
	must(t, err)
	defer nodes.Close()
	if _, err := nodes.Run(OpenbRunOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("openb run without pods: %v", err)
	}
	r2, err := j.Run(JobsRunOptions{Nodes: nodes, Policy: "frag"})
	must(t, err)
	if r2.Rejected != 1 || r2.Completed != 3 {
		t.Errorf("on openb nodes %+v", r2)
	}
	if _, err := j.Run(JobsRunOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no cluster: %v", err)
	}
	if _, err := j.Run(JobsRunOptions{NNodes: 1, Shape: NodeShape{GPUs: 4}, Policy: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown policy: %v", err)
	}
	if _, err := j.Run(JobsRunOptions{NNodes: 1, Shape: NodeShape{GPUs: 4}, MaxJobs: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative MaxJobs: %v", err)
	}
	if _, err := ParseJobs("submit_time,duration,num_gpus\n0,x,1\n"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad row: %v", err)
	}
	nodes.Close()
	if _, err := j.Run(JobsRunOptions{Nodes: nodes}); !errors.Is(err, ErrState) {
		t.Errorf("closed node list: %v", err)
	}
	j.Close()
	if _, err := j.Run(JobsRunOptions{NNodes: 1, Shape: NodeShape{GPUs: 4}}); !errors.Is(err, ErrState) || j.Len() != 0 {
		t.Errorf("closed trace: %v", err)
	}
}

func TestSimPhillyOnDGX2Nodes(t *testing.T) {
	philly := sharedData(t, "traces/philly/philly_vc_subset.csv")
	shape, err := NodeShapeFromXML(sharedData(t, "topologies/nvidia-dgx2.xml"))
	must(t, err)
	if shape.GPUs != 16 || shape.CPU <= 0 || shape.Mem <= 0 {
		t.Errorf("DGX-2 shape %+v", shape)
	}
	if _, err := NodeShapeFromXML("/nonexistent.xml"); err == nil {
		t.Error("shape of a missing file")
	}
	j, err := LoadJobs(philly)
	must(t, err)
	defer j.Close()
	r, err := j.Run(JobsRunOptions{NNodes: 4, Shape: shape, MaxJobs: 2000})
	must(t, err)
	if r.Jobs != 2000 || r.Utilization <= 0 {
		t.Errorf("philly %+v", r)
	}
}
