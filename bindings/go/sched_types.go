package sokovan

/*
#include <sokovan/sched.h>
*/
import "C"

// SessionType is a session's type (skv_sched_session_type).
type SessionType int

// Session types.
const (
	Interactive SessionType = C.SKV_SCHED_INTERACTIVE
	Batch       SessionType = C.SKV_SCHED_BATCH
	Inference   SessionType = C.SKV_SCHED_INFERENCE
)

// Scope names the owner level a policy applies to.
type Scope int

// Owner scopes.
const (
	ScopeDomain  Scope = C.SKV_SCHED_SCOPE_DOMAIN
	ScopeProject Scope = C.SKV_SCHED_SCOPE_PROJECT
	ScopeUser    Scope = C.SKV_SCHED_SCOPE_USER
)

func (s Scope) String() string {
	switch s {
	case ScopeDomain:
		return "domain"
	case ScopeProject:
		return "project"
	case ScopeUser:
		return "user"
	}
	return "?"
}

// State is a session's state in the scheduler.
type State int

// Session states.
const (
	Pending   State = C.SKV_SCHED_PENDING
	Scheduled State = C.SKV_SCHED_SCHEDULED
	Running   State = C.SKV_SCHED_RUNNING
	Finished  State = C.SKV_SCHED_FINISHED
	Failed    State = C.SKV_SCHED_FAILED
	Cancelled State = C.SKV_SCHED_CANCELLED
	Lost      State = C.SKV_SCHED_LOST
)

func (s State) String() string { return C.GoString(C.skv_sched_state_name(C.skv_sched_state(s))) }

// ReasonCode says why a session is still pending.
type ReasonCode int

// Pending reasons (skv_sched_reason_code).
const (
	ReasonNone              ReasonCode = C.SKV_SCHED_REASON_NONE
	ReasonNotBefore         ReasonCode = C.SKV_SCHED_REASON_NOT_BEFORE
	ReasonDependency        ReasonCode = C.SKV_SCHED_REASON_DEPENDENCY
	ReasonDependencyFailed  ReasonCode = C.SKV_SCHED_REASON_DEPENDENCY_FAILED
	ReasonDependencyUnknown ReasonCode = C.SKV_SCHED_REASON_DEPENDENCY_UNKNOWN
	ReasonQuota             ReasonCode = C.SKV_SCHED_REASON_QUOTA
	ReasonConcurrency       ReasonCode = C.SKV_SCHED_REASON_CONCURRENCY
	ReasonNoAgent           ReasonCode = C.SKV_SCHED_REASON_NO_AGENT
	ReasonResources         ReasonCode = C.SKV_SCHED_REASON_RESOURCES
	ReasonReserved          ReasonCode = C.SKV_SCHED_REASON_RESERVED
	ReasonPreempting        ReasonCode = C.SKV_SCHED_REASON_PREEMPTING
	ReasonHasReservation    ReasonCode = C.SKV_SCHED_REASON_HAS_RESERVATION
	ReasonPassLimit         ReasonCode = C.SKV_SCHED_REASON_PASS_LIMIT
)

func (r ReasonCode) String() string {
	return C.GoString(C.skv_sched_reason_name(C.skv_sched_reason_code(r)))
}

// PreemptCause says why a victim was chosen.
type PreemptCause int

// Preemption causes.
const (
	PreemptPriority PreemptCause = C.SKV_SCHED_PREEMPT_PRIORITY
	PreemptReclaim  PreemptCause = C.SKV_SCHED_PREEMPT_RECLAIM
)

func (c PreemptCause) String() string {
	if c == PreemptReclaim {
		return "reclaim"
	}
	return "priority"
}

// SchedulerOptions configures NewScheduler; the zero value is the default.
type SchedulerOptions struct {
	FairshareHalfLifeMs int64 // 0 = the library default (1 h)
}

// GroupOptions configures a resource group; the zero value is the
// library's default (fifo, concentrated, one reservation, no preemption).
type GroupOptions struct {
	Sequencer, SequencerConfig string // "" = "fifo"
	Selector, SelectorConfig   string // "" = "concentrated"; also "dispersed", "roundrobin", a SimPolicies name, a LoadPlugin one
	AgingMs                    int64
	// MaxReservations: 0 = the default (1); negative = none (pure greedy).
	MaxReservations     int
	Preemption          bool
	PreemptMinRuntimeMs int64
}

// Device is one accelerator of an agent.
type Device struct {
	ID            string // "" = its index
	WholeSlot     string // e.g. "cuda.device" (required)
	ShareSlot     string // e.g. "cuda.shares"; "" = not shareable
	ShareCapacity Qty    // share units (1000 = 1.0); 0 = 1000
}

// AgentSpec describes an agent. Capacity is borrowed for the call only.
type AgentSpec struct {
	ID, Group              string
	Architecture, GPUModel string
	Unschedulable          bool // keeps running work, gets none
	Capacity               *Slots
	Devices                []Device
	Labels                 map[string]string
}

// SessionSpec describes a session. Request is the single kernel's request;
// Kernels (when set) lists a cluster's requests, the first being the main
// kernel. Slots are borrowed for the call only.
type SessionSpec struct {
	ID                    string
	Domain, Project, User string
	Group                 string
	Type                  SessionType
	Priority              int32
	MultiNode             bool
	OneKernelPerAgent     bool
	Request               *Slots
	Kernels               []*Slots
	Architecture          string
	GPUModels             []string
	DesignatedAgents      []string
	DependsOn             []string
	NotBeforeMs           int64
	EstimatedDurationMs   int64
	Preemptible           bool
	Labels                map[string]string // agent labels required
}

// Policy is an owner's resource policy. Nil vectors mean unlimited/none.
type Policy struct {
	Limit, Guaranteed, BorrowLimit *Slots
	MaxConcurrent, MaxPending      uint32
}

// PassOptions restricts a pass; nil runs every group without a limit.
type PassOptions struct {
	Group         string // "" = every group, in name order
	MaxPlacements int    // 0 = unlimited
	FullWalk      bool
}

// DeviceShare is a device-level part of a placement.
type DeviceShare struct {
	Index    int    // in the agent's device list
	DeviceID string // the agent's device id
	Slot     string // whole_slot or share_slot
	Whole    bool
	Amount   Qty // 1000 for whole, else share units
}

// KernelPlacement is where one kernel goes.
type KernelPlacement struct {
	Kernel  int
	AgentID string
	Devices []DeviceShare
}

// Placement is one placed session.
type Placement struct {
	SessionID string
	Group     string
	Kernels   []KernelPlacement
}

// Agents lists the agents of the placement's kernels, in kernel order.
func (p Placement) Agents() []string {
	out := make([]string, len(p.Kernels))
	for i, k := range p.Kernels {
		out[i] = k.AgentID
	}
	return out
}

// Preemption is a victim chosen for a waiting session.
type Preemption struct {
	Victim, ForSession string
	Cause              PreemptCause
}

// Result is one pass's decisions, copied into Go memory.
type Result struct {
	NowMs       int64
	Placements  []Placement
	Preemptions []Preemption
	Considered  int
}

// ReasonSlot is one short slot of a ReasonResources.
type ReasonSlot struct {
	Slot         string
	AgentsShort  uint32
	MinShortfall Qty
}

// Reason says why a session is pending.
type Reason struct {
	Code            ReasonCode
	Group           string
	EvaluatedMs     int64
	Detail          string // dependency, owner, or reservation holder
	Scope           Scope  // quota / concurrency
	Slot            string // quota: the slot over the limit
	Shortfall       Qty    // quota: by how much
	AgentsCandidate uint32
	Slots           []ReasonSlot
	ReservedAtMs    int64
	Text            string // the library's one-line explanation
}

// OwnerUsage is an owner's current use.
type OwnerUsage struct {
	Usage           *Slots // caller closes
	Active, Pending uint32
}
