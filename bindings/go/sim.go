package sokovan

/*
#include <stdlib.h>
#include <sokovan/sim.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// The trace simulator (sokovan/sim.h): replays workloads through the real
// scheduler, as the sokovan-sim program does. Loaded traces are immutable:
// any number of goroutines may run replays of one at a time (each run uses
// its own scheduler); Close waits for runs in progress. Results are copied
// into Go values before a run returns.

// SimPolicies lists the simulator's placement policies: the FGD paper's
// baselines and libsokovan's "frag" (usable as scheduler selectors too).
func SimPolicies() []string {
	n := int(C.skv_sim_policy_count())
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, C.GoString(C.skv_sim_policy_name(C.size_t(i))))
	}
	return out
}

// OpenbWorkload is an openb node list plus (optionally) a pod list: the
// FGD experiment's input, or a cluster for JobTrace.Run.
type OpenbWorkload struct {
	mu sync.RWMutex
	p  *C.skv_sim_openb
}

type openbLoader func(out **C.skv_sim_openb, nodes, pods *C.char, e *C.skv_error) C.int

func newOpenb(op, nodes, pods string, f openbLoader) (*OpenbWorkload, error) {
	var a cArena
	defer a.free()
	var p *C.skv_sim_openb
	var cerr C.skv_error
	if err := check(op, f(&p, a.str(nodes), a.optStr(pods), &cerr), &cerr); err != nil {
		return nil, err
	}
	w := &OpenbWorkload{p: p}
	runtime.SetFinalizer(w, (*OpenbWorkload).Close)
	return w, nil
}

// LoadOpenb loads a node list CSV (sn,cpu_milli,memory_mib,gpu,model) and
// a pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]);
// podsCSV "" loads the nodes only. A bad row is ErrInvalid naming file,
// line and field.
func LoadOpenb(nodesCSV, podsCSV string) (*OpenbWorkload, error) {
	return newOpenb("LoadOpenb", nodesCSV, podsCSV, func(o **C.skv_sim_openb, n, p *C.char, e *C.skv_error) C.int {
		return C.skv_sim_openb_load(o, n, p, e)
	})
}

// ParseOpenb is LoadOpenb from CSV text (podsText "" = nodes only).
func ParseOpenb(nodesText, podsText string) (*OpenbWorkload, error) {
	return newOpenb("ParseOpenb", nodesText, podsText, func(o **C.skv_sim_openb, n, p *C.char, e *C.skv_error) C.int {
		return C.skv_sim_openb_parse(o, n, p, e)
	})
}

// Close frees the workload; idempotent. It waits for runs in progress.
func (w *OpenbWorkload) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p != nil {
		C.skv_sim_openb_free(w.p)
		w.p = nil
		runtime.SetFinalizer(w, nil)
	}
	return nil
}

// read runs f under the read lock, refusing a closed workload.
func (w *OpenbWorkload) read(op string, f func(p *C.skv_sim_openb) error) error {
	if w == nil {
		return closedError(op)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.p == nil {
		return closedError(op)
	}
	return f(w.p)
}

// Nodes is the number of nodes (0 for a closed workload).
func (w *OpenbWorkload) Nodes() int {
	n := 0
	w.read("OpenbWorkload.Nodes", func(p *C.skv_sim_openb) error {
		n = int(C.skv_sim_openb_node_count(p))
		return nil
	})
	return n
}

// Pods is the number of pods (0 for a closed workload).
func (w *OpenbWorkload) Pods() int {
	n := 0
	w.read("OpenbWorkload.Pods", func(p *C.skv_sim_openb) error {
		n = int(C.skv_sim_openb_pod_count(p))
		return nil
	})
	return n
}

// CapacityMilliGPU is the nodes' total GPU capacity in milli-GPU (0 for a
// closed workload).
func (w *OpenbWorkload) CapacityMilliGPU() Qty {
	var q Qty
	w.read("OpenbWorkload.CapacityMilliGPU", func(p *C.skv_sim_openb) error {
		q = Qty(C.skv_sim_openb_capacity(p))
		return nil
	})
	return q
}

// OpenbRunOptions configures one openb replay; the zero value is the
// library's default.
type OpenbRunOptions struct {
	Policy       string // a SimPolicies name or a built-in selector; "" = "frag"
	PolicyConfig string // appended to the selector config ("mu=1")
	Seed         uint64 // shuffle, resampling and random ties
	DemandPct    uint32 // stop once arrived demand passes this % of capacity; 0 = 130
	// Columns of the published table to compute (arrived %); nil = 0, 10,
	// ..., 130.
	Columns []int
}

// OpenbResult is one openb replay, copied into Go memory.
type OpenbResult struct {
	Seed                    uint64
	Capacity                Qty // milli-GPU
	Events, Placed, Dropped int
	Arrived, Allocated      []Qty // after event i: GPU demand arrived / GPU allocated
	// Columns: k -> the mean allocated % over the events whose arrived %
	// rounds to k; a k no event rounds to is absent.
	Columns map[int]float64
}

// Run replays every pod in a seeded random order, then resampled pods
// until DemandPct; a pod the pass cannot place is dropped. ErrNotFound
// for an unknown policy; ErrInvalid for a workload without pods.
func (w *OpenbWorkload) Run(opts OpenbRunOptions) (*OpenbResult, error) {
	const op = "OpenbWorkload.Run"
	var out *OpenbResult
	err := w.read(op, func(p *C.skv_sim_openb) error {
		var a cArena
		defer a.free()
		o := (*C.skv_sim_openb_options)(a.alloc(C.sizeof_skv_sim_openb_options))
		o.version = C.SKV_SIM_OPENB_OPTIONS_VERSION
		o.policy, o.policy_config = a.optStr(opts.Policy), a.optStr(opts.PolicyConfig)
		o.seed, o.demand_pct = C.uint64_t(opts.Seed), C.uint32_t(opts.DemandPct)
		var r *C.skv_sim_openb_result
		var cerr C.skv_error
		if err := check(op, C.skv_sim_openb_run(&r, p, o, &cerr), &cerr); err != nil {
			return err
		}
		defer C.skv_sim_openb_result_free(r)
		out = goOpenbResult(r, opts.Columns)
		return nil
	})
	return out, err
}

func goOpenbResult(r *C.skv_sim_openb_result, cols []int) *OpenbResult {
	n := int(r.n_events)
	out := &OpenbResult{Seed: uint64(r.seed), Capacity: Qty(r.capacity), Events: n,
		Placed: int(r.n_placed), Dropped: int(r.n_dropped),
		Arrived: make([]Qty, n), Allocated: make([]Qty, n), Columns: map[int]float64{}}
	for i, v := range unsafe.Slice(r.arrived, n) {
		out.Arrived[i] = Qty(v)
	}
	for i, v := range unsafe.Slice(r.allocated, n) {
		out.Allocated[i] = Qty(v)
	}
	if cols == nil {
		for k := 0; k <= 130; k += 10 {
			cols = append(cols, k)
		}
	}
	for _, k := range cols {
		var v C.double
		if C.skv_sim_openb_column(&v, r, C.int(k)) == 0 {
			out.Columns[k] = float64(v)
		}
	}
	return out
}
