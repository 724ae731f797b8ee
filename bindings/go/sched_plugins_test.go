package sokovan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A simulator placement policy works as a group's selector: registered on
// first use (AddGroup, SetSelector); an unknown selector stays ErrNotFound.
func TestSchedulerSimulatorPolicyAsSelector(t *testing.T) {
	s := cluster(t, &GroupOptions{Selector: "bestfit"}) // not built in: registered here
	defer s.Close()
	must(t, submit(t, s, SessionSpec{ID: "x", Group: "g"}, "cuda.shares=0.5", 0))
	r, err := s.Pass(0, nil)
	must(t, err)
	if len(r.Placements) != 1 || len(r.Placements[0].Kernels[0].Devices) != 1 ||
		r.Placements[0].Kernels[0].Devices[0].Amount != 500 {
		t.Fatalf("bestfit selector placed %+v", r.Placements)
	}
	for _, pol := range SimPolicies() {
		must(t, s.SetSelector("g", pol, ""))
	}
	must(t, s.AddGroup("h", &GroupOptions{Selector: "fgd"}))
	if err := s.SetSelector("g", "no-such-selector", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown selector: %v", err)
	}
	if err := s.AddGroup("bad", &GroupOptions{Selector: "no-such-selector"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown selector at AddGroup: %v", err)
	}
	must(t, s.Check())
}

// LoadPlugin: the test plugin of the C suite (a selector preferring the
// last agent, a sequencer by descending id) decides a pass; a second load,
// a bad ABI and a missing file are refused by code.
func TestSchedulerLoadPlugin(t *testing.T) {
	build := os.Getenv("SKV_TEST_BUILD_DIR")
	if build == "" {
		build, _ = filepath.Abs("../../build")
	}
	so := filepath.Join(build, "tests", "so", "sched_plugin.so")
	if _, err := os.Stat(so); err != nil {
		t.Skipf("SKIP: needs %s (make %s)", so, "tests/so")
	}
	s, err := NewScheduler(nil)
	must(t, err)
	defer s.Close()
	must(t, s.LoadPlugin(so))
	if err := s.LoadPlugin(so); !errors.Is(err, ErrExist) {
		t.Errorf("second load: %v", err)
	}
	err = s.LoadPlugin(filepath.Join(build, "tests", "so", "sched_plugin_badabi.so"))
	var e *Error
	if !errors.Is(err, ErrVersion) || !errors.As(err, &e) || !strings.Contains(e.Message, "ABI 999") {
		t.Errorf("bad ABI: %v", err)
	}
	if err := s.LoadPlugin("/nonexistent.so"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing plugin: %v", err)
	}
	must(t, s.AddGroup("g", &GroupOptions{Selector: "test-last", Sequencer: "test-reverse-id"}))
	capa := MustParseSlots("cpu=4")
	defer capa.Close()
	for _, id := range []string{"x0", "x1", "x2"} {
		must(t, s.AddAgent(AgentSpec{ID: id, Group: "g", Capacity: capa}))
	}
	must(t, submit(t, s, SessionSpec{ID: "aa", Group: "g"}, "cpu=1", 0))
	must(t, submit(t, s, SessionSpec{ID: "bb", Group: "g"}, "cpu=1", 1))
	r, err := s.Pass(2, nil)
	must(t, err)
	if len(r.Placements) != 2 || r.Placements[0].SessionID != "bb" || byID(r, "aa").Kernels[0].AgentID != "x2" {
		t.Errorf("plugin pass: %+v", r.Placements)
	}
	s.Close()
	if err := s.LoadPlugin(so); !errors.Is(err, ErrState) {
		t.Errorf("closed scheduler: %v", err)
	}
}
