package sokovan

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rss is this process's resident set in bytes (/proc/self/statm).
func rss(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("SKIP: no /proc/self/statm (%v)", err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// slotsCycle makes and uses handles; closeThem false is the control: the
// handles are dropped with their finalizers removed, so their C memory
// leaks for real.
func slotsCycle(t *testing.T, n int, closeThem bool) {
	for i := 0; i < n; i++ {
		a, err := ParseSlots("cpu=4,mem=16g,cuda.shares=0.5,cuda.device=1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := a.Clone()
		if err := b.Add(a); err != nil || b.String() == "" {
			t.Fatal(err)
		}
		if closeThem {
			a.Close()
			b.Close()
		} else {
			runtime.SetFinalizer(a, nil)
			runtime.SetFinalizer(b, nil)
		}
	}
}

const leakBound = 8 << 20 // bytes of RSS growth allowed over the loop

// 100k create/use/Close cycles keep RSS flat; the same loop without Close
// grows past the bound, so the measurement can see a leak.
func TestLeakSlots(t *testing.T) {
	slotsCycle(t, 20000, true) // warm up allocator and Go heap
	before := rss(t)
	slotsCycle(t, 100000, true)
	grew := rss(t) - before
	t.Logf("100k closed cycles: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 100k closed cycles", grew>>10)
	}
	before = rss(t)
	slotsCycle(t, 100000, false)
	leaked := rss(t) - before
	t.Logf("control, 100k unclosed cycles: RSS grew %d KiB", leaked>>10)
	if leaked <= leakBound {
		t.Errorf("control leaked only %d KiB: the test cannot see a leak", leaked>>10)
	}
}

// Schedulers with groups, agents, sessions and passes: created and closed
// over and over, RSS stays bounded.
func TestLeakScheduler(t *testing.T) {
	cycle := func(n int) {
		for i := 0; i < n; i++ {
			s := cluster(t, nil)
			must(t, submit(t, s, SessionSpec{ID: "j", Group: "g"}, "cpu=1,cuda.device=1", 0))
			must(t, submit(t, s, SessionSpec{ID: "big", Group: "g"}, "cuda.device=9", 0))
			if _, err := s.Pass(1, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Reason("big"); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
	}
	cycle(2000)
	before := rss(t)
	cycle(10000)
	grew := rss(t) - before
	t.Logf("10k scheduler cycles: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 10k scheduler cycles", grew>>10)
	}
}

// A handle dropped without Close is freed by its finalizer (the safety
// net): many dropped vectors do not grow RSS without bound.
func TestFinalizerSafetyNet(t *testing.T) {
	drop := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := ParseSlots("cpu=4,mem=16g,cuda.shares=0.5,cuda.device=1"); err != nil {
				t.Fatal(err)
			}
			if i%2000 == 0 {
				runtime.GC()
			}
		}
		// Finalizers run on one goroutine after a GC: give it time.
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	drop(20000)
	before := rss(t)
	drop(200000)
	grew := rss(t) - before
	t.Logf("200k dropped vectors: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("finalizers did not free dropped vectors: RSS grew %d KiB", grew>>10)
	}
}
