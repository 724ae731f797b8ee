package sokovan

/*
#include <stdlib.h>
#include <sokovan/sched.h>
*/
import "C"

import "unsafe"

// Submit adds a pending session submitted at nowMs. Refused, nothing kept:
// ErrExist (duplicate id), ErrNotFound (unknown group), ErrNoSpace (owner's
// max_pending reached), ErrInvalid (bad spec; the message names the field).
func (s *Scheduler) Submit(spec SessionSpec, nowMs int64) error {
	const op = "Scheduler.Submit"
	reqs := spec.Kernels
	if len(reqs) == 0 {
		if spec.Request == nil {
			return goError(op, C.SKV_EINVAL, "session %q: no Request and no Kernels", spec.ID)
		}
		reqs = []*Slots{spec.Request}
	}
	creqs := make([]*C.skv_slots, len(reqs))
	for i, r := range reqs {
		p, err := r.mustPtr(op)
		if err != nil {
			return err
		}
		creqs[i] = p
	}
	return s.call(op, func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_submit(p, sessionSpec(a, spec, creqs), C.int64_t(nowMs), e)
	})
}

func sessionSpec(a *cArena, g SessionSpec, reqs []*C.skv_slots) *C.skv_sched_session_spec {
	c := (*C.skv_sched_session_spec)(a.alloc(C.sizeof_skv_sched_session_spec))
	c.version = C.SKV_SCHED_SESSION_SPEC_VERSION
	c.id, c.resource_group = a.str(g.ID), a.str(g.Group)
	c.domain, c.project, c.user = a.optStr(g.Domain), a.optStr(g.Project), a.optStr(g.User)
	c._type = C.skv_sched_session_type(g.Type)
	c.priority = C.int32_t(g.Priority)
	c.cluster_mode = C.SKV_SCHED_SINGLE_NODE
	if g.MultiNode {
		c.cluster_mode = C.SKV_SCHED_MULTI_NODE
	}
	c.one_kernel_per_agent = C.bool(g.OneKernelPerAgent)
	c.n_kernels = C.size_t(len(reqs))
	c.kernels = (*C.skv_sched_kernel_spec)(a.alloc(uintptr(len(reqs)) * C.sizeof_skv_sched_kernel_spec))
	ks := unsafe.Slice(c.kernels, len(reqs))
	for i, r := range reqs {
		ks[i].role = C.SKV_SCHED_ROLE_SUB
		if i == 0 {
			ks[i].role = C.SKV_SCHED_ROLE_MAIN
		}
		ks[i].request = r
	}
	c.architecture = a.optStr(g.Architecture)
	c.n_gpu_models, c.gpu_models = C.size_t(len(g.GPUModels)), strArray(a, g.GPUModels)
	c.n_designated, c.designated_agents = C.size_t(len(g.DesignatedAgents)), strArray(a, g.DesignatedAgents)
	c.n_depends, c.depends_on = C.size_t(len(g.DependsOn)), strArray(a, g.DependsOn)
	c.not_before_ms = C.int64_t(g.NotBeforeMs)
	c.estimated_duration_ms = C.int64_t(g.EstimatedDurationMs)
	c.preemptible = C.bool(g.Preemptible)
	c.n_label_constraints, c.label_constraints = C.size_t(len(g.Labels)), labels(a, g.Labels)
	return c
}

type idFn func(p *C.skv_sched, id *C.char, e *C.skv_error) C.int

func (s *Scheduler) idCall(op, id string, f idFn) error {
	return s.call(op, func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return f(p, a.str(id), e)
	})
}

// Cancel ends a pending, scheduled or running session, freeing its resources.
func (s *Scheduler) Cancel(id string, nowMs int64) error {
	return s.idCall("Scheduler.Cancel", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_cancel(p, c, C.int64_t(nowMs), e)
	})
}

// MarkStarted moves a scheduled session to running.
func (s *Scheduler) MarkStarted(id string, nowMs int64) error {
	return s.idCall("Scheduler.MarkStarted", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_mark_started(p, c, C.int64_t(nowMs), e)
	})
}

// MarkFinished ends a scheduled or running session (FAILED when failed).
func (s *Scheduler) MarkFinished(id string, failed bool, nowMs int64) error {
	return s.idCall("Scheduler.MarkFinished", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_mark_finished(p, c, C.bool(failed), C.int64_t(nowMs), e)
	})
}

// Requeue puts a scheduled or running session back to pending.
func (s *Scheduler) Requeue(id string, nowMs int64) error {
	return s.idCall("Scheduler.Requeue", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_requeue(p, c, C.int64_t(nowMs), e)
	})
}

// Forget removes a session in a final state (ErrState otherwise).
func (s *Scheduler) Forget(id string) error {
	return s.idCall("Scheduler.Forget", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_session_remove(p, c, e)
	})
}

// State is a session's state (ErrNotFound for an unknown id).
func (s *Scheduler) State(id string) (State, error) {
	var st C.skv_sched_state
	err := s.idCall("Scheduler.State", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		return C.skv_sched_session_state(&st, p, c, e)
	})
	return State(st), err
}

// Reason says why a session is pending (ErrState when it is not).
func (s *Scheduler) Reason(id string) (Reason, error) {
	var out Reason
	err := s.idCall("Scheduler.Reason", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		var r C.skv_sched_reason
		if rc := C.skv_sched_session_reason(&r, p, c, e); rc < 0 {
			return rc
		}
		// The strings are borrowed until the scheduler changes: copy now,
		// under the lock.
		out = goReason(&r)
		var text *C.char
		rc := C.skv_sched_reason_format(&text, &r, e)
		if rc == 0 {
			out.Text = C.GoString(text)
			C.skv_free(unsafe.Pointer(text))
		}
		return rc
	})
	return out, err
}

func optGoString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func goReason(r *C.skv_sched_reason) Reason {
	out := Reason{
		Code: ReasonCode(r.code), Group: optGoString(r.resource_group),
		EvaluatedMs: int64(r.evaluated_ms), Detail: optGoString(r.detail),
		Scope: Scope(r.scope), Slot: optGoString(r.slot), Shortfall: Qty(r.shortfall),
		AgentsCandidate: uint32(r.agents_candidate), ReservedAtMs: int64(r.reserved_at_ms),
	}
	for i := 0; i < int(r.n_slots) && i < len(r.slots); i++ {
		sl := &r.slots[i]
		out.Slots = append(out.Slots, ReasonSlot{optGoString(sl.slot), uint32(sl.agents_short), Qty(sl.min_shortfall)})
	}
	return out
}

// Pass runs one scheduling pass at nowMs; opts may be nil. Placed sessions
// become Scheduled; preemption victims are only reported (the caller
// requeues, finishes or cancels them). On error nothing changes.
func (s *Scheduler) Pass(nowMs int64, opts *PassOptions) (*Result, error) {
	var out *Result
	err := s.call("Scheduler.Pass", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		c := (*C.skv_sched_pass_options)(a.alloc(C.sizeof_skv_sched_pass_options))
		c.version = C.SKV_SCHED_PASS_OPTIONS_VERSION
		if opts != nil {
			c.resource_group = a.optStr(opts.Group)
			c.max_placements = C.size_t(opts.MaxPlacements)
			c.full_walk = C.bool(opts.FullWalk)
		}
		var r *C.skv_sched_result
		rc := C.skv_sched_pass(&r, p, C.int64_t(nowMs), c, e)
		if rc == 0 {
			out = s.goResult(r)
			C.skv_sched_result_free(r)
		}
		return rc
	})
	return out, err
}

// Placement is where a scheduled or running session's kernels are
// (ErrState when it holds nothing).
func (s *Scheduler) Placement(id string) (Placement, error) {
	var out Placement
	err := s.idCall("Scheduler.Placement", id, func(p *C.skv_sched, c *C.char, e *C.skv_error) C.int {
		var r *C.skv_sched_result
		rc := C.skv_sched_session_placement(&r, p, c, e)
		if rc == 0 {
			if res := s.goResult(r); len(res.Placements) == 1 {
				out = res.Placements[0]
			}
			C.skv_sched_result_free(r)
		}
		return rc
	})
	return out, err
}

// goResult copies a C result (called with the lock held).
func (s *Scheduler) goResult(r *C.skv_sched_result) *Result {
	names := unsafe.Slice(r.slot_names, int(r.n_slots))
	out := &Result{NowMs: int64(r.now_ms), Considered: int(r.n_considered)}
	for _, pl := range unsafe.Slice(r.placements, int(r.n_placements)) {
		gp := Placement{SessionID: C.GoString(pl.session_id), Group: optGoString(pl.resource_group)}
		for _, k := range unsafe.Slice(pl.kernels, int(pl.n_kernels)) {
			gp.Kernels = append(gp.Kernels, s.goKernel(&k, names))
		}
		out.Placements = append(out.Placements, gp)
	}
	for _, v := range unsafe.Slice(r.preemptions, int(r.n_preemptions)) {
		out.Preemptions = append(out.Preemptions, Preemption{
			Victim: C.GoString(v.victim_id), ForSession: C.GoString(v.for_session_id),
			Cause: PreemptCause(v.cause)})
	}
	return out
}

func (s *Scheduler) goKernel(k *C.skv_sched_kernel_placement, names []*C.char) KernelPlacement {
	gk := KernelPlacement{Kernel: int(k.kernel), AgentID: C.GoString(k.agent_id)}
	ids := s.devices[gk.AgentID]
	for _, d := range unsafe.Slice(k.devices, int(k.n_devices)) {
		ds := DeviceShare{Index: int(d.device), Whole: bool(d.whole), Amount: Qty(d.amount)}
		if int(d.slot) < len(names) {
			ds.Slot = C.GoString(names[d.slot])
		}
		if ds.Index < len(ids) {
			ds.DeviceID = ids[ds.Index]
		}
		gk.Devices = append(gk.Devices, ds)
	}
	return gk
}
