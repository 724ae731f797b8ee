package sokovan

/*
#include <stdlib.h>
#include <sokovan/sched.h>
*/
import "C"

import (
	"runtime"
	"sort"
	"strconv"
	"sync"
	"unsafe"
)

// Scheduler is the library's I/O-free scheduler (skv_sched): groups,
// agents, owners' policies, sessions and passes. The C object is not
// thread-safe at all (reads refresh cached usage), so every method holds
// the Scheduler's mutex: goroutines may share one Scheduler. Times are the
// caller's clock in milliseconds; the library reads none.
type Scheduler struct {
	mu sync.Mutex
	p  *C.skv_sched
	// devices: agent id -> device ids in spec order, to name the devices
	// of a placement (the C result gives indexes only).
	devices map[string][]string
}

// NewScheduler creates a scheduler; opts may be nil.
func NewScheduler(opts *SchedulerOptions) (*Scheduler, error) {
	copts := C.skv_sched_options{version: C.SKV_SCHED_OPTIONS_VERSION, fairshare_half_life_ms: 3600000}
	if opts != nil && opts.FairshareHalfLifeMs != 0 {
		copts.fairshare_half_life_ms = C.int64_t(opts.FairshareHalfLifeMs)
	}
	var p *C.skv_sched
	var cerr C.skv_error
	if err := check("NewScheduler", C.skv_sched_new(&p, &copts, &cerr), &cerr); err != nil {
		return nil, err
	}
	s := &Scheduler{p: p, devices: map[string][]string{}}
	runtime.SetFinalizer(s, (*Scheduler).Close)
	return s, nil
}

// Close frees the scheduler; idempotent.
func (s *Scheduler) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		C.skv_sched_free(s.p)
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// call runs f with the lock held and an skv_error, converting the result.
func (s *Scheduler) call(op string, f func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return closedError(op)
	}
	var a cArena
	defer a.free()
	var cerr C.skv_error
	return check(op, f(s.p, &a, &cerr), &cerr)
}

// AddGroup adds a resource group; opts may be nil.
func (s *Scheduler) AddGroup(name string, opts *GroupOptions) error {
	return s.call("Scheduler.AddGroup", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		if opts != nil {
			if rc := ensureSelector(p, a, opts.Selector, e); rc < 0 {
				return rc
			}
		}
		return C.skv_sched_group_add(p, a.str(name), groupOptions(a, opts), e)
	})
}

func groupOptions(a *cArena, o *GroupOptions) *C.skv_sched_group_options {
	c := (*C.skv_sched_group_options)(a.alloc(C.sizeof_skv_sched_group_options))
	c.version = C.SKV_SCHED_GROUP_OPTIONS_VERSION
	c.max_reservations = 1
	if o == nil {
		return c
	}
	c.sequencer, c.sequencer_config = a.optStr(o.Sequencer), a.optStr(o.SequencerConfig)
	c.selector, c.selector_config = a.optStr(o.Selector), a.optStr(o.SelectorConfig)
	c.aging_ms = C.int64_t(o.AgingMs)
	if o.MaxReservations > 0 {
		c.max_reservations = C.uint32_t(o.MaxReservations)
	} else if o.MaxReservations < 0 {
		c.max_reservations = 0
	}
	c.preemption = C.bool(o.Preemption)
	c.preempt_min_runtime_ms = C.int64_t(o.PreemptMinRuntimeMs)
	return c
}

// RemoveGroup removes an empty group (ErrBusy otherwise).
func (s *Scheduler) RemoveGroup(name string) error {
	return s.call("Scheduler.RemoveGroup", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_group_remove(p, a.str(name), e)
	})
}

// SetSelector replaces a group's agent selector in place (a SimPolicies
// name is registered on first use, as in AddGroup).
func (s *Scheduler) SetSelector(group, selector, config string) error {
	return s.call("Scheduler.SetSelector", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		if rc := ensureSelector(p, a, selector, e); rc < 0 {
			return rc
		}
		return C.skv_sched_group_set_selector(p, a.str(group), a.str(selector), a.optStr(config), e)
	})
}

// AddAgent adds an agent to its group.
func (s *Scheduler) AddAgent(spec AgentSpec) error {
	return s.agentCall("Scheduler.AddAgent", spec, func(p *C.skv_sched, c *C.skv_sched_agent_spec, e *C.skv_error) C.int {
		return C.skv_sched_agent_add(p, c, e)
	})
}

// UpdateAgent replaces an agent's description (ErrBusy when its
// allocations would no longer fit).
func (s *Scheduler) UpdateAgent(spec AgentSpec) error {
	return s.agentCall("Scheduler.UpdateAgent", spec, func(p *C.skv_sched, c *C.skv_sched_agent_spec, e *C.skv_error) C.int {
		return C.skv_sched_agent_update(p, c, e)
	})
}

type agentFn func(p *C.skv_sched, c *C.skv_sched_agent_spec, e *C.skv_error) C.int

func (s *Scheduler) agentCall(op string, spec AgentSpec, f agentFn) error {
	capacity, err := spec.Capacity.ptr(op)
	if err != nil {
		return err
	}
	return s.call(op, func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		rc := f(p, agentSpec(a, spec, capacity), e)
		if rc == 0 {
			s.devices[spec.ID] = deviceIDs(spec.Devices)
		}
		return rc
	})
}

func deviceIDs(devs []Device) []string {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.ID
		if d.ID == "" {
			ids[i] = strconv.Itoa(i)
		}
	}
	return ids
}

func agentSpec(a *cArena, g AgentSpec, capacity *C.skv_slots) *C.skv_sched_agent_spec {
	c := (*C.skv_sched_agent_spec)(a.alloc(C.sizeof_skv_sched_agent_spec))
	c.version = C.SKV_SCHED_AGENT_SPEC_VERSION
	c.id, c.resource_group = a.str(g.ID), a.str(g.Group)
	c.architecture, c.gpu_model = a.optStr(g.Architecture), a.optStr(g.GPUModel)
	c.schedulable = C.bool(!g.Unschedulable)
	c.capacity = capacity
	c.n_devices = C.size_t(len(g.Devices))
	c.devices = (*C.skv_sched_device_spec)(a.alloc(uintptr(len(g.Devices)) * C.sizeof_skv_sched_device_spec))
	devs := unsafe.Slice(c.devices, len(g.Devices))
	for i, d := range g.Devices {
		devs[i].id, devs[i].whole_slot = a.optStr(d.ID), a.str(d.WholeSlot)
		devs[i].share_slot = a.optStr(d.ShareSlot)
		devs[i].share_capacity = C.skv_qty(d.ShareCapacity)
	}
	c.n_labels = C.size_t(len(g.Labels))
	c.labels = labels(a, g.Labels)
	return c
}

// labels copies a map into a C array in key order (deterministic).
func labels(a *cArena, m map[string]string) *C.skv_sched_label {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p := (*C.skv_sched_label)(a.alloc(uintptr(len(m)) * C.sizeof_skv_sched_label))
	arr := unsafe.Slice(p, len(m))
	for i, k := range keys {
		arr[i].key, arr[i].value = a.str(k), a.str(m[k])
	}
	return p
}

// strArray copies strings into a C array of char pointers.
func strArray(a *cArena, ss []string) **C.char {
	p := (**C.char)(a.alloc(uintptr(len(ss)) * unsafe.Sizeof((*C.char)(nil))))
	arr := unsafe.Slice(p, len(ss))
	for i, v := range ss {
		arr[i] = a.str(v)
	}
	return p
}

// SetSchedulable toggles whether an agent gets new work.
func (s *Scheduler) SetSchedulable(id string, on bool) error {
	return s.call("Scheduler.SetSchedulable", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_agent_set_schedulable(p, a.str(id), C.bool(on), e)
	})
}

// RemoveAgent removes an idle agent (ErrBusy while sessions hold resources).
func (s *Scheduler) RemoveAgent(id string) error {
	return s.call("Scheduler.RemoveAgent", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return s.forgetOnSuccess(id, C.skv_sched_agent_remove(p, a.str(id), e))
	})
}

// AgentLost removes a vanished agent; its sessions end LOST. It returns
// how many sessions were lost.
func (s *Scheduler) AgentLost(id string, nowMs int64) (int, error) {
	var n C.size_t
	err := s.call("Scheduler.AgentLost", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return s.forgetOnSuccess(id, C.skv_sched_agent_lost(p, &n, a.str(id), C.int64_t(nowMs), e))
	})
	return int(n), err
}

// forgetOnSuccess drops a removed agent's device ids (lock held).
func (s *Scheduler) forgetOnSuccess(id string, rc C.int) C.int {
	if rc == 0 {
		delete(s.devices, id)
	}
	return rc
}

// SetPolicy sets (replaces) an owner's policy; nil removes it.
func (s *Scheduler) SetPolicy(scope Scope, name string, pol *Policy) error {
	const op = "Scheduler.SetPolicy"
	var limit, guar, borrow *C.skv_slots
	if pol != nil {
		var err error
		if limit, err = pol.Limit.ptr(op); err != nil {
			return err
		}
		if guar, err = pol.Guaranteed.ptr(op); err != nil {
			return err
		}
		if borrow, err = pol.BorrowLimit.ptr(op); err != nil {
			return err
		}
	}
	return s.call(op, func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		var c *C.skv_sched_policy
		if pol != nil {
			c = (*C.skv_sched_policy)(a.alloc(C.sizeof_skv_sched_policy))
			c.version = C.SKV_SCHED_POLICY_VERSION
			c.limit, c.guaranteed, c.borrow_limit = limit, guar, borrow
			c.max_concurrent = C.uint32_t(pol.MaxConcurrent)
			c.max_pending = C.uint32_t(pol.MaxPending)
		}
		return C.skv_sched_policy_set(p, C.skv_sched_scope(scope), a.str(name), c, e)
	})
}

// OwnerUsage is an owner's current use (zeros for an unknown owner).
func (s *Scheduler) OwnerUsage(scope Scope, name string) (OwnerUsage, error) {
	var u *C.skv_slots
	var active, pending C.uint32_t
	err := s.call("Scheduler.OwnerUsage", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_owner_usage(&u, &active, &pending, p, C.skv_sched_scope(scope), a.str(name), e)
	})
	if err != nil {
		return OwnerUsage{}, err
	}
	return OwnerUsage{Usage: wrapSlots(u), Active: uint32(active), Pending: uint32(pending)}, nil
}

// AgentUsage gives an agent's current use and capacity (caller closes both).
func (s *Scheduler) AgentUsage(id string) (used, capacity *Slots, err error) {
	var u, c *C.skv_slots
	err = s.call("Scheduler.AgentUsage", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_agent_usage(&u, &c, p, a.str(id), e)
	})
	if err != nil {
		return nil, nil, err
	}
	return wrapSlots(u), wrapSlots(c), nil
}

// Check recomputes the scheduler's accounts (ErrState on a mismatch).
func (s *Scheduler) Check() error {
	return s.call("Scheduler.Check", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_check(p, e)
	})
}
