package sokovan

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func gpus(n int) []Device {
	d := make([]Device, n)
	for i := range d {
		d[i] = Device{ID: fmt.Sprintf("gpu%d", i), WholeSlot: "cuda.device", ShareSlot: "cuda.shares"}
	}
	return d
}

// cluster: group g, agents n0 (zone a) and n1 (zone b), each 16 cores,
// 64 GiB and four GPUs.
func cluster(t *testing.T, g *GroupOptions) *Scheduler {
	t.Helper()
	s, err := NewScheduler(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroup("g", g); err != nil {
		t.Fatal(err)
	}
	capa := MustParseSlots("cpu=16,mem=64g")
	defer capa.Close()
	for i, zone := range []string{"a", "b"} {
		err := s.AddAgent(AgentSpec{ID: fmt.Sprintf("n%d", i), Group: "g", Capacity: capa,
			Devices: gpus(4), Labels: map[string]string{"zone": zone}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func submit(t *testing.T, s *Scheduler, spec SessionSpec, req string, now int64) error {
	t.Helper()
	if req != "" {
		spec.Request = MustParseSlots(req)
		defer spec.Request.Close()
	}
	return s.Submit(spec, now)
}

func byID(r *Result, id string) *Placement {
	for i := range r.Placements {
		if r.Placements[i].SessionID == id {
			return &r.Placements[i]
		}
	}
	return nil
}

// A small known case: the decisions are the library's, checked in full.
func TestSchedulerPassDecisions(t *testing.T) {
	s := cluster(t, &GroupOptions{Selector: "concentrated"})
	defer s.Close()
	must(t, submit(t, s, SessionSpec{ID: "j1", Group: "g", User: "ann"}, "cuda.device=2,cpu=4,mem=8g", 0))
	k1, k2 := MustParseSlots("cpu=1"), MustParseSlots("cpu=1")
	defer k1.Close()
	defer k2.Close()
	must(t, s.Submit(SessionSpec{ID: "j2", Group: "g", Kernels: []*Slots{k1, k2},
		MultiNode: true, OneKernelPerAgent: true}, 0))
	must(t, submit(t, s, SessionSpec{ID: "j3", Group: "g", Labels: map[string]string{"zone": "b"}},
		"cuda.shares=0.5,cpu=1", 0))
	r, err := s.Pass(1000, nil)
	must(t, err)
	if r.NowMs != 1000 || r.Considered != 3 || len(r.Placements) != 3 {
		t.Fatalf("result: %+v", r)
	}
	j1 := byID(r, "j1")
	devs := j1.Kernels[0].Devices
	if len(devs) != 2 {
		t.Fatalf("j1 devices: %+v", devs)
	}
	for _, d := range devs {
		if d.Slot != "cuda.device" || !d.Whole || d.Amount != 1000 || !strings.HasPrefix(d.DeviceID, "gpu") {
			t.Errorf("j1 device %+v", d)
		}
	}
	if devs[0].DeviceID == devs[1].DeviceID {
		t.Errorf("j1 got one GPU twice: %+v", devs)
	}
	j2 := byID(r, "j2").Agents()
	sort.Strings(j2)
	if !reflect.DeepEqual(j2, []string{"n0", "n1"}) {
		t.Errorf("j2 (one kernel per agent) on %v", j2)
	}
	j3 := byID(r, "j3")
	if !reflect.DeepEqual(j3.Agents(), []string{"n1"}) || j3.Kernels[0].Devices[0].Amount != 500 ||
		j3.Kernels[0].Devices[0].Slot != "cuda.shares" || j3.Kernels[0].Devices[0].Whole {
		t.Errorf("j3 (zone b, half a GPU): %+v", j3)
	}
	st, _ := s.State("j1")
	if st != Scheduled || st.String() != "scheduled" {
		t.Errorf("j1 state %v", st)
	}
	must(t, s.MarkStarted("j1", 1100))
	agent := j1.Kernels[0].AgentID
	used, capa, err := s.AgentUsage(agent)
	must(t, err)
	defer used.Close()
	defer capa.Close()
	if q, _ := used.Get("cpu"); q < 4000 {
		t.Errorf("used cpu on %s: %s", agent, used)
	}
	if q, _ := used.Get("cuda.device"); q != 2000 {
		t.Errorf("used GPUs on %s: %s", agent, used)
	}
	pl, err := s.Placement("j1")
	must(t, err)
	if !reflect.DeepEqual(pl, *j1) {
		t.Errorf("Placement(j1) = %+v, pass said %+v", pl, *j1)
	}
	must(t, s.MarkFinished("j1", false, 2000))
	must(t, s.Forget("j1"))
	if _, err := s.State("j1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("forgotten j1: %v", err)
	}
	must(t, s.Check())
}

func TestSchedulerReasonsAndQuota(t *testing.T) {
	s := cluster(t, nil)
	defer s.Close()
	limit := MustParseSlots("cpu=2")
	defer limit.Close()
	must(t, s.SetPolicy(ScopeUser, "bob", &Policy{Limit: limit, MaxPending: 2}))
	must(t, submit(t, s, SessionSpec{ID: "big", Group: "g"}, "cuda.device=5", 0))
	must(t, submit(t, s, SessionSpec{ID: "q", Group: "g", User: "bob"}, "cpu=4", 0))
	must(t, submit(t, s, SessionSpec{ID: "ok", Group: "g", User: "bob"}, "cpu=1", 0))
	if err := submit(t, s, SessionSpec{ID: "third", Group: "g", User: "bob"}, "cpu=1", 0); !errors.Is(err, ErrNoSpace) {
		t.Errorf("third pending for bob: %v", err)
	}
	r, err := s.Pass(10, nil)
	must(t, err)
	if len(r.Placements) != 1 || r.Placements[0].SessionID != "ok" {
		t.Fatalf("placements %+v", r.Placements)
	}
	big, err := s.Reason("big")
	must(t, err)
	if big.Code != ReasonResources && big.Code != ReasonHasReservation {
		t.Errorf("big: %v", big.Code)
	}
	if !strings.Contains(big.Text, "cuda.device") {
		t.Errorf("big text %q", big.Text)
	}
	q, err := s.Reason("q")
	must(t, err)
	if q.Code != ReasonQuota || q.Scope != ScopeUser || q.Detail != "bob" || q.Slot != "cpu" ||
		q.Shortfall != 2000 || !strings.Contains(q.Text, "bob") || q.Code.String() != "quota" {
		t.Errorf("q reason %+v", q)
	}
	if _, err := s.Reason("ok"); !errors.Is(err, ErrState) {
		t.Errorf("Reason of a scheduled session: %v", err)
	}
	u, err := s.OwnerUsage(ScopeUser, "bob")
	must(t, err)
	defer u.Usage.Close()
	one := MustParseSlots("cpu=1")
	defer one.Close()
	if u.Active != 1 || u.Pending != 1 || !u.Usage.Equal(one) {
		t.Errorf("bob usage %+v %s", u, u.Usage)
	}
}

func TestSchedulerPreemption(t *testing.T) {
	s := cluster(t, &GroupOptions{Preemption: true})
	defer s.Close()
	for _, id := range []string{"low", "low2"} {
		must(t, submit(t, s, SessionSpec{ID: id, Group: "g", Preemptible: true}, "cuda.device=4,cpu=1", 0))
	}
	_, err := s.Pass(0, nil)
	must(t, err)
	must(t, s.MarkStarted("low", 0))
	must(t, s.MarkStarted("low2", 0))
	must(t, submit(t, s, SessionSpec{ID: "high", Group: "g", Priority: 10}, "cuda.device=4", 0))
	r, err := s.Pass(100000, nil)
	must(t, err)
	if len(r.Placements) != 0 || len(r.Preemptions) != 1 {
		t.Fatalf("result %+v", r)
	}
	p := r.Preemptions[0]
	if (p.Victim != "low" && p.Victim != "low2") || p.ForSession != "high" || p.Cause != PreemptPriority {
		t.Errorf("plan %+v", p)
	}
	if why, _ := s.Reason("high"); why.Code != ReasonPreempting {
		t.Errorf("high waits for %v", why.Code)
	}
	must(t, s.Requeue(p.Victim, 100001))
	r, err = s.Pass(100002, nil)
	must(t, err)
	if len(r.Placements) != 1 || r.Placements[0].SessionID != "high" {
		t.Errorf("after requeue: %+v", r.Placements)
	}
}

func TestSchedulerAgents(t *testing.T) {
	s := cluster(t, nil)
	defer s.Close()
	must(t, submit(t, s, SessionSpec{ID: "j", Group: "g"}, "cpu=1", 0))
	_, err := s.Pass(0, nil)
	must(t, err)
	pl, err := s.Placement("j")
	must(t, err)
	agent := pl.Kernels[0].AgentID
	if err := s.RemoveAgent(agent); !errors.Is(err, ErrBusy) {
		t.Errorf("RemoveAgent busy: %v", err)
	}
	n, err := s.AgentLost(agent, 5)
	if err != nil || n != 1 {
		t.Errorf("AgentLost = %d %v", n, err)
	}
	if st, _ := s.State("j"); st != Lost {
		t.Errorf("j state %v", st)
	}
	other := "n0"
	if agent == "n0" {
		other = "n1"
	}
	must(t, s.SetSchedulable(other, false))
	must(t, submit(t, s, SessionSpec{ID: "k", Group: "g"}, "cpu=1", 6))
	r, err := s.Pass(6, &PassOptions{Group: "g"})
	must(t, err)
	if len(r.Placements) != 0 {
		t.Errorf("placed on an unschedulable agent: %+v", r.Placements)
	}
	if why, _ := s.Reason("k"); why.Code != ReasonNoAgent {
		t.Errorf("k: %v", why.Code)
	}
	if err := s.Cancel("k", 7); err != nil {
		t.Error(err)
	}
	must(t, s.RemoveAgent(other))
	must(t, s.RemoveGroup("g"))
	must(t, s.Check())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
