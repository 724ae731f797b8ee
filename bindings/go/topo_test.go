package sokovan

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
)

// dgx2 is the DGX-2 hwloc export; SKV_TEST_SRC_DIR/../shared/data as the
// other suites find it, or SKV_TOPO_DGX2.
func dgx2(t *testing.T) string {
	t.Helper()
	path := os.Getenv("SKV_TOPO_DGX2")
	if path == "" {
		path = "/work/shared/data/topologies/nvidia-dgx2.xml"
		if src := os.Getenv("SKV_TEST_SRC_DIR"); src != "" {
			path = src + "/../shared/data/topologies/nvidia-dgx2.xml"
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("SKIP: no DGX-2 topology (%v); set SKV_TOPO_DGX2", err)
	}
	return path
}

func TestTopologySynthetic(t *testing.T) {
	topo, err := LoadTopologySynthetic("pack:2 numa:1 core:4 pu:2")
	must(t, err)
	defer topo.Close()
	nodes := topo.NUMANodes()
	if topo.PUs() != 16 || topo.Cores() != 8 || topo.CPUSet() != "0-15" || len(nodes) != 2 ||
		nodes[1].ID != 1 || len(topo.Accelerators()) != 0 {
		t.Errorf("pus %d cores %d cpuset %s numa %+v", topo.PUs(), topo.Cores(), topo.CPUSet(), nodes)
	}
	if _, err := LoadTopologySynthetic("bogus:what"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bogus synthetic: %v", err)
	}
	if _, err := LoadTopologyXML("/nonexistent.xml"); err == nil {
		t.Error("missing XML loaded")
	}
}

func TestDGX2Allocation(t *testing.T) {
	topo, err := LoadTopologyXML(dgx2(t))
	must(t, err)
	defer topo.Close()
	var gpus []Accelerator
	for _, a := range topo.Accelerators() {
		if a.Compute {
			gpus = append(gpus, a)
		}
	}
	if len(gpus) != 16 || gpus[0].Prefix != "cuda" || !strings.Contains(gpus[0].Model, "V100") ||
		!strings.HasPrefix(topo.Source(), "xml:") {
		t.Fatalf("DGX-2 GPUs: %d %+v (source %s)", len(gpus), gpus[0], topo.Source())
	}
	node, err := NewNode(topo, &NodeOptions{GPUs: "topology"})
	must(t, err)
	defer node.Close()
	req, err := node.Request("cuda.device=2,cpu=2,mem=32g")
	must(t, err)
	defer req.Close()
	p, err := node.Alloc(req, nil)
	must(t, err)
	numa := map[int]bool{}
	var memTaken Qty
	ngpu := 0
	for _, a := range p.Amounts() {
		switch a.Slot {
		case "cuda.device":
			ngpu++
			numa[a.NUMANode] = true
		case "mem":
			memTaken += a.Qty
		}
	}
	if ngpu != 2 || len(numa) != 1 || memTaken != 32<<30 {
		t.Errorf("amounts %+v", p.Amounts())
	}
	if p.CPUSet() == "" || p.Mems() == "" || p.Env()["CUDA_VISIBLE_DEVICES"] == "" {
		t.Errorf("cpuset %q mems %q env %v", p.CPUSet(), p.Mems(), p.Env())
	}
	t.Logf("DGX-2: cpuset %s mems %s devices %v env %v", p.CPUSet(), p.Mems(), p.Devices(), p.Env())
	must(t, p.Close())
	all, _ := node.Request("cuda.device=16")
	defer all.Close()
	p, err = node.Alloc(all, &AllocOptions{PlacementOnly: true})
	must(t, err)
	if len(p.Amounts()) != 16 || p.Env()["CUDA_VISIBLE_DEVICES"] != "" {
		t.Errorf("all 16 GPUs after release: %+v", p.Amounts())
	}
	must(t, p.Close())
}

func TestNodeErrorsAndOwnership(t *testing.T) {
	topo, err := LoadTopologySynthetic("pack:1 numa:1 core:2 pu:1")
	must(t, err)
	node, err := NewNode(topo, nil)
	must(t, err)
	if _, err := node.Request("cuda.device=1"); !errors.Is(err, ErrInvalid) {
		t.Errorf("slot no plugin offers: %v", err)
	}
	three, _ := node.Request("cpu=3")
	two, _ := node.Request("cpu=2")
	defer three.Close()
	defer two.Close()
	if _, err := node.Alloc(three, nil); !errors.Is(err, ErrRange) {
		t.Errorf("never fits: %v", err)
	}
	if _, err := node.Alloc(two, &AllocOptions{Policy: "nearest"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad policy: %v", err)
	}
	p, err := node.Alloc(two, nil)
	must(t, err)
	if p.CPUSet() != "0-1" {
		t.Errorf("cpuset %q", p.CPUSet())
	}
	if _, err := node.Alloc(two, nil); !errors.Is(err, ErrNoSpace) {
		t.Errorf("not now: %v", err)
	}
	if err := topo.Close(); !errors.Is(err, ErrBusy) {
		t.Errorf("topology closed under a node: %v", err)
	}
	if err := node.Close(); !errors.Is(err, ErrBusy) {
		t.Errorf("node closed under a placement: %v", err)
	}
	must(t, p.Release())
	if err := p.Release(); !errors.Is(err, ErrState) {
		t.Errorf("second release: %v", err)
	}
	must(t, p.Close())
	must(t, p.Close())
	must(t, node.Close())
	must(t, node.Close())
	if _, err := node.Alloc(two, nil); !errors.Is(err, ErrState) {
		t.Errorf("alloc on closed node: %v", err)
	}
	must(t, topo.Close())
	if _, err := NewNode(topo, nil); !errors.Is(err, ErrState) {
		t.Errorf("node over closed topology: %v", err)
	}
}

// A placement dropped without Close gives its cores back once the
// finalizer (the safety net) runs.
func TestDroppedPlacementFinalizer(t *testing.T) {
	topo, _ := LoadTopologySynthetic("pack:1 numa:1 core:2 pu:1")
	defer topo.Close()
	node, err := NewNode(topo, nil)
	must(t, err)
	defer node.Close()
	two, _ := node.Request("cpu=2")
	defer two.Close()
	func() {
		if _, err := node.Alloc(two, nil); err != nil {
			t.Fatal(err)
		}
	}()
	for i := 0; i < 5; i++ {
		runtime.GC()
		if p, err := node.Alloc(two, nil); err == nil {
			p.Close()
			return
		}
	}
	t.Error("the dropped placement's cores never came back")
}
