package sokovan

/*
#include <stdlib.h>
#include <sokovan/topo.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Topology is a machine's topology (skv_topo): NUMA nodes, cores, PUs and
// accelerators. It is immutable once loaded, so any number of goroutines
// may read it; Nodes borrow it, and Close refuses (ErrBusy) while one does.
type Topology struct {
	mu      sync.RWMutex
	p       *C.skv_topo
	lenders int // open Nodes built over it
}

// NUMANode is one NUMA node of a topology.
type NUMANode struct {
	ID          int
	MemoryBytes uint64
	CPUSet      string // "0-3,8"
}

// Accelerator is one accelerator a topology shows.
type Accelerator struct {
	Index       int
	Name        string // main OS device name ("nvml0")
	PCIBusID    string
	NUMANode    int // -1 unknown
	Vendor      string
	Model       string
	UUID        string
	Compute     bool   // usable for compute
	Prefix      string // device-slot prefix: "cuda", "rocm" or ""
	MemoryBytes uint64
}

type topoLoader func(out **C.skv_topo, arg *C.char, e *C.skv_error) C.int

func loadTopology(op, arg string, f topoLoader) (*Topology, error) {
	cs := C.CString(arg)
	defer C.free(unsafe.Pointer(cs))
	var p *C.skv_topo
	var cerr C.skv_error
	if err := check(op, f(&p, cs, &cerr), &cerr); err != nil {
		return nil, err
	}
	t := &Topology{p: p}
	runtime.SetFinalizer(t, (*Topology).Close)
	return t, nil
}

// LoadTopologyXML loads an hwloc XML export (e.g. nvidia-dgx2.xml).
func LoadTopologyXML(path string) (*Topology, error) {
	return loadTopology("LoadTopologyXML", path, func(o **C.skv_topo, a *C.char, e *C.skv_error) C.int {
		return C.skv_topo_load_xml(o, a, e)
	})
}

// LoadTopologySynthetic builds a topology from an hwloc synthetic
// description ("pack:2 numa:1 core:4 pu:2").
func LoadTopologySynthetic(desc string) (*Topology, error) {
	return loadTopology("LoadTopologySynthetic", desc, func(o **C.skv_topo, a *C.char, e *C.skv_error) C.int {
		return C.skv_topo_load_synthetic(o, a, e)
	})
}

// Close frees the topology; ErrBusy while a Node still borrows it.
func (t *Topology) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lenders > 0 {
		return goError("Topology.Close", C.SKV_EBUSY, "%d node(s) still use this topology", t.lenders)
	}
	if t.p != nil {
		C.skv_topo_free(t.p)
		t.p = nil
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

// lend marks one more borrower (a Node); ErrState when closed.
func (t *Topology) lend(op string, delta int) (*C.skv_topo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p == nil {
		return nil, closedError(op)
	}
	t.lenders += delta
	return t.p, nil
}

// read runs f on the C topology under the read lock (so Close cannot free
// it meanwhile); f is not run on a closed topology.
func (t *Topology) read(f func(p *C.skv_topo)) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.p != nil {
		f(t.p)
	}
}

// Source says where the topology came from.
func (t *Topology) Source() string {
	var v string
	t.read(func(p *C.skv_topo) { v = C.GoString(C.skv_topo_source(p)) })
	return v
}

// CPUSet is every allowed PU ("0-95").
func (t *Topology) CPUSet() string {
	var v string
	t.read(func(p *C.skv_topo) { v = C.GoString(C.skv_topo_cpuset(p)) })
	return v
}

// MemoryBytes is the machine's memory.
func (t *Topology) MemoryBytes() uint64 {
	var v uint64
	t.read(func(p *C.skv_topo) { v = uint64(C.skv_topo_memory_bytes(p)) })
	return v
}

// Cores counts the allowed cores.
func (t *Topology) Cores() int {
	var v int
	t.read(func(p *C.skv_topo) { v = int(C.skv_topo_core_count(p)) })
	return v
}

// PUs counts the allowed processing units (hardware threads).
func (t *Topology) PUs() int {
	var v int
	t.read(func(p *C.skv_topo) { v = int(C.skv_topo_pu_count(p)) })
	return v
}

// NUMANodes lists the NUMA nodes.
func (t *Topology) NUMANodes() []NUMANode {
	var out []NUMANode
	t.read(func(p *C.skv_topo) { out = numaNodes(p) })
	return out
}

func numaNodes(p *C.skv_topo) []NUMANode {
	var out []NUMANode
	for i := 0; i < int(C.skv_topo_numa_count(p)); i++ {
		n := C.skv_topo_numa_at(p, C.size_t(i))
		out = append(out, NUMANode{int(n.id), uint64(n.memory_bytes), C.GoString(n.cpuset)})
	}
	return out
}

// Accelerators lists the accelerators in PCI bus id order.
func (t *Topology) Accelerators() []Accelerator {
	var out []Accelerator
	t.read(func(p *C.skv_topo) { out = accelerators(p) })
	return out
}

func accelerators(p *C.skv_topo) []Accelerator {
	var out []Accelerator
	for i := 0; i < int(C.skv_topo_accel_count(p)); i++ {
		a := C.skv_topo_accel_at(p, C.size_t(i))
		out = append(out, Accelerator{
			Index: int(a.index), Name: optGoString(a.name), PCIBusID: optGoString(a.pci_bus_id),
			NUMANode: int(a.numa_node), Vendor: optGoString(a.vendor), Model: optGoString(a.model),
			UUID: optGoString(a.uuid), Compute: a.compute != 0,
			Prefix: optGoString(C.skv_topo_accel_prefix(a)), MemoryBytes: uint64(a.memory_bytes)})
	}
	return out
}
