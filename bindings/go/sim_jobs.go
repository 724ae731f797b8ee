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

// JobTrace is a generic job table (submit time, duration, GPUs, optional
// CPUs, memory and owner) for replays with arrivals and departures.
type JobTrace struct {
	mu sync.RWMutex
	p  *C.skv_sim_jobs
}

func newJobTrace(op, arg string, f func(out **C.skv_sim_jobs, a *C.char, e *C.skv_error) C.int) (*JobTrace, error) {
	cs := C.CString(arg)
	defer C.free(unsafe.Pointer(cs))
	var p *C.skv_sim_jobs
	var cerr C.skv_error
	if err := check(op, f(&p, cs, &cerr), &cerr); err != nil {
		return nil, err
	}
	j := &JobTrace{p: p}
	runtime.SetFinalizer(j, (*JobTrace).Close)
	return j, nil
}

// LoadJobs loads a job table CSV with a header row (columns by name:
// timestamp/submit_time/submit, duration, num_gpus/gpus, optional cpus,
// memory_mib, cluster/vc/user). A bad row is ErrInvalid naming line and
// field.
func LoadJobs(path string) (*JobTrace, error) {
	return newJobTrace("LoadJobs", path, func(o **C.skv_sim_jobs, a *C.char, e *C.skv_error) C.int {
		return C.skv_sim_jobs_load(o, a, e)
	})
}

// ParseJobs is LoadJobs from CSV text.
func ParseJobs(text string) (*JobTrace, error) {
	return newJobTrace("ParseJobs", text, func(o **C.skv_sim_jobs, a *C.char, e *C.skv_error) C.int {
		return C.skv_sim_jobs_parse(o, a, e)
	})
}

// Close frees the trace; idempotent. It waits for runs in progress.
func (j *JobTrace) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.p != nil {
		C.skv_sim_jobs_free(j.p)
		j.p = nil
		runtime.SetFinalizer(j, nil)
	}
	return nil
}

// Len is the number of jobs (0 for a closed trace).
func (j *JobTrace) Len() int {
	if j == nil {
		return 0
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.p == nil {
		return 0
	}
	return int(C.skv_sim_jobs_count(j.p))
}

// NodeShape is one node of a homogeneous simulated cluster.
type NodeShape struct {
	CPU  Qty // milli-cores
	Mem  Qty // bytes
	GPUs uint32
}

// NodeShapeFromXML is the machine of an hwloc XML topology (cores, memory,
// GPU OS devices) as a node shape.
func NodeShapeFromXML(path string) (NodeShape, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var sh C.skv_sim_node_shape
	var cerr C.skv_error
	if err := check("NodeShapeFromXML", C.skv_sim_node_shape_from_xml(&sh, cs, &cerr), &cerr); err != nil {
		return NodeShape{}, err
	}
	return NodeShape{CPU: Qty(sh.cpu), Mem: Qty(sh.mem), GPUs: uint32(sh.gpus)}, nil
}

// JobsRunOptions configures a job replay. The cluster is NNodes copies of
// Shape, or the nodes of an openb node list (Nodes, borrowed for the run).
type JobsRunOptions struct {
	Policy    string // selector; "" = "concentrated" (SimPolicies names too)
	Sequencer string // "" = "fifo"
	Seed      uint64 // for random selectors
	NNodes    uint32
	Shape     NodeShape
	Nodes     *OpenbWorkload
	// MaxReservations: 0 = the default (1); negative = none.
	MaxReservations int
	MaxJobs         int // replay only the first jobs; 0 = all
	// CPU and memory per GPU for jobs without those columns; 0 = none.
	CPUPerGPU, MemPerGPU Qty
	StrictFIFO           bool // one job at a time in submit order, no backfill
	FullWalk             bool // passes with full_walk (same decisions, slower)
}

// OwnerStats is one owner's (user or VC) share of a replay.
type OwnerStats struct {
	Name         string
	Jobs         int
	GPUSeconds   float64 // service received
	MeanSlowdown float64 // mean of JCT / duration
}

// JobsResult is a job replay's statistics, copied into Go memory.
type JobsResult struct {
	Jobs, Completed, Rejected        int // replayed; completed; never fit
	MakespanS, Utilization           float64
	QueueMeanS, QueueP50S, QueueP99S float64
	JCTMeanS, JCTP50S, JCTP99S       float64
	JainFairness                     float64 // over owners' 1 / mean slowdown
	Passes, Decisions                int
	PassSeconds, PassCPUSeconds      float64 // wall / CPU time inside the passes
	Owners                           []OwnerStats
	DecisionsDigest                  uint64 // equal digests, equal decisions
}

// Run replays the trace. ErrInvalid for a cluster that is neither NNodes
// x Shape nor Nodes, ErrNotFound for an unknown policy or sequencer;
// ErrState for a closed trace or node list.
func (j *JobTrace) Run(opts JobsRunOptions) (*JobsResult, error) {
	const op = "JobTrace.Run"
	if j == nil {
		return nil, closedError(op)
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.p == nil {
		return nil, closedError(op)
	}
	if opts.Nodes == nil {
		return j.run(op, opts, nil)
	}
	var out *JobsResult
	err := opts.Nodes.read(op, func(nodes *C.skv_sim_openb) error {
		var err error
		out, err = j.run(op, opts, nodes)
		return err
	})
	return out, err
}

// run calls the library with both read locks held.
func (j *JobTrace) run(op string, g JobsRunOptions, nodes *C.skv_sim_openb) (*JobsResult, error) {
	var a cArena
	defer a.free()
	o := (*C.skv_sim_jobs_options)(a.alloc(C.sizeof_skv_sim_jobs_options))
	o.version = C.SKV_SIM_JOBS_OPTIONS_VERSION
	o.policy, o.sequencer = a.optStr(g.Policy), a.optStr(g.Sequencer)
	o.seed, o.n_nodes = C.uint64_t(g.Seed), C.uint32_t(g.NNodes)
	o.shape = C.skv_sim_node_shape{cpu: C.skv_qty(g.Shape.CPU), mem: C.skv_qty(g.Shape.Mem), gpus: C.uint32_t(g.Shape.GPUs)}
	o.nodes = nodes
	o.max_reservations = 1
	if g.MaxReservations > 0 {
		o.max_reservations = C.uint32_t(g.MaxReservations)
	} else if g.MaxReservations < 0 {
		o.max_reservations = 0
	}
	if g.MaxJobs < 0 {
		return nil, goError(op, C.SKV_EINVAL, "MaxJobs %d is negative", g.MaxJobs)
	}
	o.max_jobs = C.size_t(g.MaxJobs)
	o.cpu_per_gpu, o.mem_per_gpu = C.skv_qty(g.CPUPerGPU), C.skv_qty(g.MemPerGPU)
	o.strict_fifo, o.full_walk = C.bool(g.StrictFIFO), C.bool(g.FullWalk)
	var r *C.skv_sim_jobs_result
	var cerr C.skv_error
	if err := check(op, C.skv_sim_jobs_run(&r, j.p, o, &cerr), &cerr); err != nil {
		return nil, err
	}
	defer C.skv_sim_jobs_result_free(r)
	return goJobsResult(r), nil
}

func goJobsResult(r *C.skv_sim_jobs_result) *JobsResult {
	out := &JobsResult{Jobs: int(r.n_jobs), Completed: int(r.n_completed), Rejected: int(r.n_rejected),
		MakespanS: float64(r.makespan_s), Utilization: float64(r.utilization),
		QueueMeanS: float64(r.queue_mean_s), QueueP50S: float64(r.queue_p50_s), QueueP99S: float64(r.queue_p99_s),
		JCTMeanS: float64(r.jct_mean_s), JCTP50S: float64(r.jct_p50_s), JCTP99S: float64(r.jct_p99_s),
		JainFairness: float64(r.jain_fairness), Passes: int(r.n_passes), Decisions: int(r.n_decisions),
		PassSeconds: float64(r.pass_seconds), PassCPUSeconds: float64(r.pass_cpu_seconds),
		DecisionsDigest: uint64(r.decisions_digest)}
	for _, o := range unsafe.Slice(r.owners, int(r.n_owners)) {
		out.Owners = append(out.Owners, OwnerStats{Name: optGoString(o.name), Jobs: int(o.n_jobs),
			GPUSeconds: float64(o.gpu_seconds), MeanSlowdown: float64(o.mean_slowdown)})
	}
	return out
}
