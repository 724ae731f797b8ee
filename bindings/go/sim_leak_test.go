package sokovan

import (
	"runtime"
	"testing"
)

// simCycle loads, replays and (with closeThem) closes an openb workload and
// a job trace; without Close is the control: the finalizers are removed,
// so the C memory leaks for real.
func simCycle(t *testing.T, n int, closeThem bool) {
	for i := 0; i < n; i++ {
		w, err := ParseOpenb(simNodes, simPods)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := w.Run(OpenbRunOptions{Policy: "bestfit", Seed: uint64(i)}); err != nil || r.Events == 0 {
			t.Fatal(err)
		}
		j, err := ParseJobs(simJobs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Run(JobsRunOptions{Nodes: w}); err != nil {
			t.Fatal(err)
		}
		if closeThem {
			w.Close()
			j.Close()
		} else {
			runtime.SetFinalizer(w, nil)
			runtime.SetFinalizer(j, nil)
		}
	}
}

// Simulator handles created, run and closed over and over keep RSS flat;
// the same loop without Close grows past the bound.
func TestLeakSimulator(t *testing.T) {
	simCycle(t, 2000, true)
	before := rss(t)
	simCycle(t, 20000, true)
	grew := rss(t) - before
	t.Logf("20k closed simulator cycles: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 20k closed simulator cycles", grew>>10)
	}
	before = rss(t)
	simCycle(t, 20000, false)
	leaked := rss(t) - before
	t.Logf("control, 20k unclosed cycles: RSS grew %d KiB", leaked>>10)
	if leaked <= leakBound {
		t.Errorf("control leaked only %d KiB: the test cannot see a leak", leaked>>10)
	}
}
