package sokovan

/*
#include <sokovan/sched.h>
#include <sokovan/sim.h>
*/
import "C"

// ensureSelector registers a simulator placement policy (SimPolicies:
// "frag", "fgd", "bestfit", ...) on first use as a group's selector, as
// the Python binding and sokovan-sim do; a built-in or already registered
// name (SKV_EEXIST) and any other name are left to the call that uses it
// (lock held).
func ensureSelector(p *C.skv_sched, a *cArena, name string, e *C.skv_error) C.int {
	if name == "" {
		return 0
	}
	table := C.skv_sim_policy(a.str(name))
	if table == nil {
		return 0
	}
	if rc := C.skv_sched_register_selector(p, table, e); rc < 0 && rc != C.SKV_EEXIST {
		return rc
	}
	*e = C.skv_error{}
	return 0
}

// LoadPlugin dlopens a selector and/or sequencer plugin (a shared object
// exporting skv_sched_selector_plugin / skv_sched_sequencer_plugin) and
// registers it for groups added later; it stays loaded until Close.
// ErrNotFound when it exports neither, ErrVersion on an ABI mismatch,
// ErrExist when a name is taken, ErrSys/ErrIO when it cannot be opened.
func (s *Scheduler) LoadPlugin(path string) error {
	return s.call("Scheduler.LoadPlugin", func(p *C.skv_sched, a *cArena, e *C.skv_error) C.int {
		return C.skv_sched_load_plugin(p, a.str(path), e)
	})
}
