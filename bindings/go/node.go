package sokovan

/*
#include <stdlib.h>
#include <sokovan/node.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Node is the node mapper (skv_node): it places a request on one machine's
// devices (accelerators first, then cores near them, then memory). It
// opens its own built-in plugins (cpu, mem, and optionally mock GPUs) and
// borrows its Topology. Alloc and Release are serialised by its mutex.
type Node struct {
	mu      sync.Mutex
	p       *C.skv_node
	topo    *Topology
	plugins []*C.skv_plugin
	live    int // placements not yet closed
}

// NodeOptions chooses the accelerator plugin of NewNode.
type NodeOptions struct {
	// GPUs: "" none; "topology" a mock plugin per GPU vendor the topology
	// shows (NVIDIA as cuda.*, AMD as rocm.*, as sokovan-topo --topo-gpus);
	// anything else is the mock plugin's config ("count=4,...").
	GPUs string
}

// NewNode builds the mapper over topo (which must stay open until the
// Node is closed); opts may be nil.
func NewNode(topo *Topology, opts *NodeOptions) (*Node, error) {
	const op = "NewNode"
	tp, err := topo.lend(op, 1)
	if err != nil {
		return nil, err
	}
	n := &Node{topo: topo}
	if err := n.open(op, tp, opts); err != nil {
		n.freePlugins()
		topo.lend(op, -1)
		return nil, err
	}
	runtime.SetFinalizer(n, (*Node).Close)
	return n, nil
}

func (n *Node) open(op string, tp *C.skv_topo, opts *NodeOptions) error {
	configs := [][2]string{{"cpu", ""}, {"mem", ""}}
	if opts != nil && opts.GPUs == "topology" {
		seen := map[string]bool{}
		for _, a := range n.topo.Accelerators() {
			if a.Compute && a.Prefix != "" && !seen[a.Prefix] {
				seen[a.Prefix] = true
				configs = append(configs, [2]string{"mock", "topology=1,prefix=" + a.Prefix})
			}
		}
	} else if opts != nil && opts.GPUs != "" {
		configs = append(configs, [2]string{"mock", opts.GPUs})
	}
	var a cArena
	defer a.free()
	for _, c := range configs {
		ctx := (*C.skv_plugin_context)(a.alloc(C.sizeof_skv_plugin_context))
		ctx.version, ctx.topo, ctx.config = C.SKV_PLUGIN_CONTEXT_VERSION, tp, a.optStr(c[1])
		var pl *C.skv_plugin
		var cerr C.skv_error
		if err := check(op, C.skv_plugin_open_builtin(&pl, a.str(c[0]), ctx, &cerr), &cerr); err != nil {
			return err
		}
		n.plugins = append(n.plugins, pl)
	}
	arr := (**C.skv_plugin)(a.alloc(uintptr(len(n.plugins)) * unsafe.Sizeof((*C.skv_plugin)(nil))))
	copy(unsafe.Slice(arr, len(n.plugins)), n.plugins)
	var cerr C.skv_error
	return check(op, C.skv_node_new(&n.p, tp, arr, C.size_t(len(n.plugins)), &cerr), &cerr)
}

func (n *Node) freePlugins() {
	for _, pl := range n.plugins {
		C.skv_plugin_free(pl)
	}
	n.plugins = nil
}

// Close frees the mapper and its plugins and gives the topology back;
// ErrBusy while placements are open. Idempotent.
func (n *Node) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		return nil
	}
	if n.live > 0 {
		return goError("Node.Close", C.SKV_EBUSY, "%d placement(s) still open", n.live)
	}
	C.skv_node_free(n.p)
	n.p = nil
	n.freePlugins()
	n.topo.lend("Node.Close", -1)
	runtime.SetFinalizer(n, nil)
	return nil
}

// Request parses a request with the node's slot registry (kinds decided
// by its plugins; a slot no plugin offers is ErrInvalid).
func (n *Node) Request(text string) (*Slots, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		return nil, closedError("Node.Request")
	}
	cs := C.CString(text)
	defer C.free(unsafe.Pointer(cs))
	var p *C.skv_slots
	var cerr C.skv_error
	if err := check("Node.Request", C.skv_slots_parse(&p, cs, C.skv_node_registry(n.p), &cerr), &cerr); err != nil {
		return nil, err
	}
	return wrapSlots(p), nil
}

// DeviceAmount is an exact amount to take (AllocOptions.Fixed).
type DeviceAmount struct {
	DeviceID, Slot string
	Qty            Qty
}

// AllocOptions tunes Alloc; nil is the default.
type AllocOptions struct {
	Policy        string // "" or "prefer-single-node", "interleaved"
	PlacementOnly bool   // skip the container configuration
	Fixed         []DeviceAmount
}

// Alloc places request. ErrNoSpace: not now; ErrRange: never fits here.
// Close the placement to give the resources back.
func (n *Node) Alloc(request *Slots, opts *AllocOptions) (*NodePlacement, error) {
	const op = "Node.Alloc"
	req, err := request.mustPtr(op)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		return nil, closedError(op)
	}
	var a cArena
	defer a.free()
	copts, err := allocOptions(&a, opts)
	if err != nil {
		return nil, err
	}
	var p *C.skv_node_placement
	var cerr C.skv_error
	if err := check(op, C.skv_node_alloc(&p, n.p, req, copts, &cerr), &cerr); err != nil {
		return nil, err
	}
	n.live++
	pl := &NodePlacement{p: p, node: n}
	runtime.SetFinalizer(pl, (*NodePlacement).Close)
	return pl, nil
}

func allocOptions(a *cArena, o *AllocOptions) (*C.skv_node_alloc_options, error) {
	c := (*C.skv_node_alloc_options)(a.alloc(C.sizeof_skv_node_alloc_options))
	c.version = C.SKV_NODE_ALLOC_OPTIONS_VERSION
	if o == nil {
		return c, nil
	}
	if o.Policy != "" {
		var cerr C.skv_error
		if err := check("Node.Alloc", C.skv_node_policy_parse(&c.policy, a.str(o.Policy), &cerr), &cerr); err != nil {
			return nil, err
		}
	}
	if o.PlacementOnly {
		c.flags = C.SKV_NODE_NO_CONFIG
	}
	c.nfixed = C.size_t(len(o.Fixed))
	c.fixed = (*C.skv_device_amount)(a.alloc(uintptr(len(o.Fixed)) * C.sizeof_skv_device_amount))
	for i, f := range o.Fixed {
		d := &unsafe.Slice(c.fixed, len(o.Fixed))[i]
		d.device_id, d.slot, d.qty = a.str(f.DeviceID), a.str(f.Slot), C.skv_qty(f.Qty)
	}
	return c, nil
}

// NodePlacement is one allocation on a Node.
type NodePlacement struct {
	p        *C.skv_node_placement
	node     *Node
	released bool
}

// Amount is one amount of a placement.
type Amount struct {
	Plugin, Slot, Device string
	NUMANode             int
	PCIBusID             string
	Qty                  Qty
}

// Release gives the resources back and keeps the record readable
// (ErrState when released twice).
func (pl *NodePlacement) Release() error {
	n := pl.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if pl.p == nil || n.p == nil {
		return closedError("NodePlacement.Release")
	}
	var cerr C.skv_error
	if err := check("NodePlacement.Release", C.skv_node_release(n.p, pl.p, &cerr), &cerr); err != nil {
		return err
	}
	pl.released = true
	return nil
}

// Close releases (if still held) and frees the placement. Idempotent.
func (pl *NodePlacement) Close() error {
	if pl == nil || pl.p == nil {
		return nil
	}
	n := pl.node
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	if !pl.released {
		var cerr C.skv_error
		err = check("NodePlacement.Close", C.skv_node_release(n.p, pl.p, &cerr), &cerr)
	}
	C.skv_node_placement_free(pl.p)
	pl.p = nil
	n.live--
	runtime.SetFinalizer(pl, nil)
	return err
}

// read runs f with the node locked (the placement's strings are borrowed
// from the node).
func (pl *NodePlacement) read(f func(p *C.skv_node_placement)) {
	pl.node.mu.Lock()
	defer pl.node.mu.Unlock()
	if pl.p != nil {
		f(pl.p)
	}
}

// CPUSet is the PUs of the cores taken ("0-3,24"), "" when none.
func (pl *NodePlacement) CPUSet() (s string) {
	pl.read(func(p *C.skv_node_placement) { s = C.GoString(C.skv_node_placement_cpuset(p)) })
	return s
}

// Mems is the memory nodeset ("0").
func (pl *NodePlacement) Mems() (s string) {
	pl.read(func(p *C.skv_node_placement) { s = C.GoString(C.skv_node_placement_mems(p)) })
	return s
}

// Amounts lists what was taken: accelerators, cores, memory.
func (pl *NodePlacement) Amounts() (out []Amount) {
	pl.read(func(p *C.skv_node_placement) {
		for i := 0; i < int(C.skv_node_placement_count(p)); i++ {
			var a C.skv_node_amount
			if C.skv_node_placement_at(p, C.size_t(i), &a) < 0 {
				break
			}
			out = append(out, Amount{optGoString(a.plugin), optGoString(a.slot), optGoString(a.device),
				int(a.numa_node), optGoString(a.pci_bus_id), Qty(a.qty)})
		}
	})
	return out
}

// Devices lists the device nodes of the container configuration
// ("/dev/nvidia3"); nil with PlacementOnly.
func (pl *NodePlacement) Devices() (out []string) {
	pl.read(func(p *C.skv_node_placement) {
		cfg := C.skv_node_placement_config(p)
		if cfg == nil {
			return
		}
		for i := 0; i < int(C.skv_container_config_device_count(cfg)); i++ {
			out = append(out, C.GoString(C.skv_container_config_device_at(cfg, C.size_t(i))))
		}
	})
	return out
}

// Env is the container environment the plugins set (CUDA_VISIBLE_DEVICES...).
func (pl *NodePlacement) Env() map[string]string {
	out := map[string]string{}
	pl.read(func(p *C.skv_node_placement) {
		cfg := C.skv_node_placement_config(p)
		if cfg == nil {
			return
		}
		for i := 0; i < int(C.skv_container_config_env_count(cfg)); i++ {
			var k, v *C.char
			if C.skv_container_config_env_at(cfg, C.size_t(i), &k, &v) == 0 {
				out[C.GoString(k)] = C.GoString(v)
			}
		}
	})
	return out
}
