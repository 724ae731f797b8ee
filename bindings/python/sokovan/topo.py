"""Hardware topology and the node mapper (sokovan/topo.h, sokovan/node.h).

    with Topology.from_xml("nvidia-dgx2.xml") as topo, \\
         Node(topo, gpus="topology") as node:
        with node.alloc("cuda.device=2,cpu=2,mem=32g") as p:
            print(p.cpuset, p.mems, p.devices("cuda.device"))

A Node borrows its Topology and Plugins: they refuse to close while the
node is open (BusyError), and the node keeps them alive.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._lib import call, cp, enc, ep, fn, i64, size_t, u64, vp, c_int, c_uint
from .slots import Slots, SlotsLike

POINTER = ctypes.POINTER


class _Numa(ctypes.Structure):
    _fields_ = [("id", c_int), ("memory_bytes", u64), ("cpus", POINTER(c_int)),
                ("ncpus", size_t), ("cpuset", cp)]


class _Core(ctypes.Structure):
    _fields_ = [("index", size_t), ("os_index", c_int), ("package", c_int),
                ("numa_node", c_int), ("pus", POINTER(c_int)), ("npus", size_t)]


class _Accel(ctypes.Structure):
    _fields_ = [("index", size_t), ("name", cp), ("os_devices", POINTER(cp)),
                ("nos_devices", size_t), ("pci_bus_id", cp),
                ("vendor_id", c_uint), ("device_id", c_uint),
                ("pci_class", c_uint), ("numa_node", c_int),
                ("memory_bytes", u64), ("vendor", cp), ("model", cp),
                ("uuid", cp), ("compute", c_int), ("nvml_index", c_int),
                ("cuda_index", c_int)]


class _DeviceSlot(ctypes.Structure):
    _fields_ = [("slot", cp), ("qty", i64)]


class _Device(ctypes.Structure):
    _fields_ = [("id", cp), ("numa_node", c_int), ("pci_bus_id", cp),
                ("memory_bytes", u64), ("processing_units", ctypes.c_uint32),
                ("model", cp), ("slots", POINTER(_DeviceSlot)),
                ("nslots", size_t)]


class _PluginContext(ctypes.Structure):
    _fields_ = [("version", c_uint), ("topo", vp), ("config", cp)]


class _DeviceAmount(ctypes.Structure):
    _fields_ = [("device_id", cp), ("slot", cp), ("qty", i64)]


class _AllocOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("policy", c_int), ("flags", c_uint),
                ("fixed", POINTER(_DeviceAmount)), ("nfixed", size_t)]


class _Amount(ctypes.Structure):
    _fields_ = [("plugin", cp), ("slot", cp), ("device", cp),
                ("numa_node", c_int), ("pci_bus_id", cp), ("qty", i64)]


PP = POINTER(vp)
_load_xml = fn("skv_topo_load_xml", c_int, PP, cp, ep)
_load_buf = fn("skv_topo_load_xml_buffer", c_int, PP, cp, size_t, ep)
_load_syn = fn("skv_topo_load_synthetic", c_int, PP, cp, ep)
_load_live = fn("skv_topo_load_live", c_int, PP, ep)
_topo_free = fn("skv_topo_free", None, vp)
_source = fn("skv_topo_source", cp, vp)
_numa_count = fn("skv_topo_numa_count", size_t, vp)
_numa_at = fn("skv_topo_numa_at", POINTER(_Numa), vp, size_t)
_numa_dist = fn("skv_topo_numa_distance", c_uint, vp, c_int, c_int)
_core_count = fn("skv_topo_core_count", size_t, vp)
_core_at = fn("skv_topo_core_at", POINTER(_Core), vp, size_t)
_pu_count = fn("skv_topo_pu_count", size_t, vp)
_cpuset = fn("skv_topo_cpuset", cp, vp)
_memory = fn("skv_topo_memory_bytes", u64, vp)
_accel_count = fn("skv_topo_accel_count", size_t, vp)
_accel_at = fn("skv_topo_accel_at", POINTER(_Accel), vp, size_t)
_accel_prefix = fn("skv_topo_accel_prefix", cp, POINTER(_Accel))
_accel_link = fn("skv_topo_accel_link", c_int, vp, size_t, size_t)
_link_name = fn("skv_topo_link_name", cp, c_int)
_nvlink = fn("skv_topo_accel_nvlink_bw", u64, vp, size_t, size_t)

_plugin_open = fn("skv_plugin_open_builtin", c_int, PP, cp,
                  POINTER(_PluginContext), ep)
_plugin_free = fn("skv_plugin_free", None, vp)
_plugin_name = fn("skv_plugin_name", cp, vp)
_plugin_devices = fn("skv_plugin_devices", vp, vp)
_devlist_count = fn("skv_device_list_count", size_t, vp)
_devlist_at = fn("skv_device_list_at", POINTER(_Device), vp, size_t)

_node_new = fn("skv_node_new", c_int, PP, vp, POINTER(vp), size_t, ep)
_node_free = fn("skv_node_free", None, vp)
_node_registry = fn("skv_node_registry", vp, vp)
_node_alloc = fn("skv_node_alloc", c_int, PP, vp, vp, POINTER(_AllocOptions), ep)
_node_release = fn("skv_node_release", c_int, vp, vp, ep)
_pl_free = fn("skv_node_placement_free", None, vp)
_pl_count = fn("skv_node_placement_count", size_t, vp)
_pl_at = fn("skv_node_placement_at", c_int, vp, size_t, POINTER(_Amount))
_pl_cpuset = fn("skv_node_placement_cpuset", cp, vp)
_pl_mems = fn("skv_node_placement_mems", cp, vp)
_pl_config = fn("skv_node_placement_config", vp, vp)
_policy_parse = fn("skv_node_policy_parse", c_int, POINTER(c_int), cp, ep)
_cc_dev_count = fn("skv_container_config_device_count", size_t, vp)
_cc_dev_at = fn("skv_container_config_device_at", cp, vp, size_t)
_cc_env_count = fn("skv_container_config_env_count", size_t, vp)
_cc_env_at = fn("skv_container_config_env_at", c_int, vp, size_t,
                POINTER(cp), POINTER(cp))


def _s(raw: Optional[bytes]) -> str:
    return (raw or b"").decode(errors="replace")


@dataclass(frozen=True)
class NumaNode:
    id: int
    memory_bytes: int
    cpus: Tuple[int, ...]
    cpuset: str


@dataclass(frozen=True)
class Core:
    index: int
    os_index: int
    package: int
    numa_node: int
    pus: Tuple[int, ...]


@dataclass(frozen=True)
class Device:
    """One device of a plugin; capacity per slot in raw units."""
    id: str
    numa_node: int
    pci_bus_id: str
    memory_bytes: int
    model: str
    capacity: Dict[str, int]


@dataclass(frozen=True)
class Accelerator:
    index: int
    name: str
    os_devices: Tuple[str, ...]
    pci_bus_id: str
    vendor_id: int
    device_id: int
    numa_node: int
    memory_bytes: int
    vendor: str
    model: str
    uuid: str
    compute: bool
    prefix: Optional[str]


class Topology(_lib.Handle):
    """A machine's topology, immutable once loaded."""

    _free = _topo_free

    def __init__(self, ptr: vp) -> None:
        super().__init__(ptr)

    @classmethod
    def _load(cls, f, *args) -> "Topology":  # type: ignore[no-untyped-def]
        out = vp()
        call(f, ctypes.byref(out), *args)
        return cls(out)

    @classmethod
    def from_xml(cls, path: str) -> "Topology":
        """An hwloc XML file (lstopo output). NotFoundError when missing."""
        return cls._load(_load_xml, enc(str(path)))

    @classmethod
    def from_xml_string(cls, text: Union[str, bytes]) -> "Topology":
        data = text.encode() if isinstance(text, str) else bytes(text)
        return cls._load(_load_buf, data, len(data))

    @classmethod
    def synthetic(cls, description: str) -> "Topology":
        """hwloc synthetic, e.g. "pack:2 numa:1 core:4 pu:2"."""
        return cls._load(_load_syn, enc(description))

    @classmethod
    def live(cls) -> "Topology":
        return cls._load(_load_live)

    @property
    def source(self) -> str:
        return _s(_source(self.ptr))

    @property
    def cpuset(self) -> str:
        return _s(_cpuset(self.ptr))

    @property
    def memory_bytes(self) -> int:
        return int(_memory(self.ptr))

    @property
    def pu_count(self) -> int:
        return int(_pu_count(self.ptr))

    def numa_nodes(self) -> List[NumaNode]:
        out = []
        for i in range(_numa_count(self.ptr)):
            n = _numa_at(self.ptr, i).contents
            out.append(NumaNode(n.id, n.memory_bytes,
                                tuple(n.cpus[k] for k in range(n.ncpus)),
                                _s(n.cpuset)))
        return out

    def numa_distance(self, a: int, b: int) -> int:
        return int(_numa_dist(self.ptr, a, b))

    def cores(self) -> List[Core]:
        out = []
        for i in range(_core_count(self.ptr)):
            c = _core_at(self.ptr, i).contents
            out.append(Core(c.index, c.os_index, c.package, c.numa_node,
                            tuple(c.pus[k] for k in range(c.npus))))
        return out

    def accelerators(self) -> List[Accelerator]:
        out = []
        for i in range(_accel_count(self.ptr)):
            p = _accel_at(self.ptr, i)
            a = p.contents
            out.append(Accelerator(
                a.index, _s(a.name),
                tuple(_s(a.os_devices[k]) for k in range(a.nos_devices)),
                _s(a.pci_bus_id), a.vendor_id, a.device_id, a.numa_node,
                a.memory_bytes, _s(a.vendor), _s(a.model), _s(a.uuid),
                bool(a.compute), _lib.dec(_accel_prefix(p))))
        return out

    def link(self, a: int, b: int) -> str:
        """PCIe proximity of accelerators a and b: "self", "pix" ... "sys"."""
        return _s(_link_name(_accel_link(self.ptr, a, b)))

    def nvlink_bandwidth(self, a: int, b: int) -> int:
        """NVLink MB/s between accelerators a and b (0: none)."""
        return int(_nvlink(self.ptr, a, b))


class Plugin(_lib.Handle):
    """A built-in compute plugin: "cpu", "mem", "cuda", "mock"."""

    _free = _plugin_free

    def __init__(self, name: str, topology: Optional[Topology] = None,
                 config: Optional[str] = None) -> None:
        ctx = _PluginContext(1, topology.ptr if topology else None, enc(config))
        out = vp()
        call(_plugin_open, ctypes.byref(out), enc(name), ctypes.byref(ctx))
        super().__init__(out)
        self.topology = topology
        if topology is not None:
            topology._lend(self)

    @property
    def name(self) -> str:
        return _s(_plugin_name(self.ptr))

    def devices(self) -> List["Device"]:
        """The devices the plugin listed when it was opened."""
        lst = _plugin_devices(self.ptr)
        out = []
        for i in range(_devlist_count(lst) if lst else 0):
            d = _devlist_at(lst, i).contents
            out.append(Device(_s(d.id), d.numa_node, _s(d.pci_bus_id),
                              d.memory_bytes, _s(d.model),
                              {_s(x.slot): x.qty for x in d.slots[:d.nslots]}))
        return out


_POLICIES = {"prefer-single-node": 1, "interleaved": 2}


class Node(_lib.Handle):
    """The node mapper over a topology and plugins. By default it opens
    the cpu and mem plugins; gpus="topology" adds a mock accelerator
    plugin for the GPUs the topology shows (as sokovan-topo --topo-gpus:
    NVIDIA as "cuda", AMD as "rocm"); gpus="count=4,..." a configured mock;
    plugins=[...] replaces the whole list."""

    _free = _node_free

    def __init__(self, topology: Topology, *, gpus: Optional[str] = None,
                 plugins: Optional[Sequence[Plugin]] = None) -> None:
        owned: List[Plugin] = []
        if plugins is None:
            owned = [Plugin("cpu", topology), Plugin("mem", topology)]
            owned += self._gpu_plugins(topology, gpus)
            plugins = owned
        arr = (vp * max(len(plugins), 1))(*[p.ptr for p in plugins])
        out = vp()
        try:
            call(_node_new, ctypes.byref(out), topology.ptr, arr, len(plugins))
        except BaseException:
            for p in owned:
                p.close()
            raise
        super().__init__(out)
        self.topology = topology
        self.plugins = list(plugins)
        self._owned = owned
        topology._lend(self)
        for p in self.plugins:
            p._lend(self)

    @staticmethod
    def _gpu_plugins(topo: Topology, gpus: Optional[str]) -> List[Plugin]:
        if gpus is None:
            return []
        if gpus != "topology":
            return [Plugin("mock", topo, gpus)]
        prefixes = sorted({a.prefix for a in topo.accelerators()
                           if a.compute and a.prefix})
        return [Plugin("mock", topo, f"topology=1,prefix={p}")
                for p in prefixes]

    def close(self) -> None:
        super().close()
        for p in self._owned:
            p.close()

    def _registry_ptr(self) -> vp:
        return _node_registry(self.ptr)

    def request(self, spec: SlotsLike) -> Slots:
        """A request parsed with the node's slot registry (kinds decided
        by the plugins; unknown slots are InvalidArgumentError)."""
        if isinstance(spec, str):
            return Slots(spec, registry=self)
        return Slots.coerce(spec)

    def alloc(self, request: SlotsLike, *, policy: str = "prefer-single-node",
              placement_only: bool = False,
              fixed: Sequence[Tuple[str, str, int]] = ()) -> "Placement":
        """Place request: accelerators, then cores near them, then memory.
        fixed: (device id, slot, raw qty) amounts to take exactly.
        NoSpaceError: not now; RangeError: never fits this node."""
        if policy not in _POLICIES:
            code = c_int()
            call(_policy_parse, ctypes.byref(code), enc(policy))
        req = self.request(request)
        keep = [_DeviceAmount(enc(d), enc(s), int(q)) for d, s, q in fixed]
        arr = (_DeviceAmount * max(len(keep), 1))(*keep)
        opts = _AllocOptions(2, _POLICIES[policy], 1 if placement_only else 0,
                             ctypes.cast(arr, POINTER(_DeviceAmount)), len(keep))
        out = vp()
        call(_node_alloc, ctypes.byref(out), self.ptr, req.ptr,
             ctypes.byref(opts))
        return Placement(out, self)


@dataclass(frozen=True)
class Amount:
    plugin: str
    slot: str
    device: str
    numa_node: int
    pci_bus_id: str
    qty: int  # raw: milli-units or bytes


class Placement(_lib.Handle):
    """One allocation on a node. Leaving `with`, close() or garbage
    collection gives the resources back and frees the record; release()
    gives them back and keeps the record readable."""

    _free = _pl_free

    def __init__(self, ptr: vp, node: Node) -> None:
        super().__init__(ptr)
        self.node = node
        self.released = False
        node._lend(self)

    def release(self) -> None:
        """Give the resources back to the node (StateError when twice)."""
        call(_node_release, self.node.ptr, self.ptr)
        self.released = True

    def close(self) -> None:
        if not self.closed and not self.released and not self.node.closed:
            self.release()
        super().close()

    def __del__(self) -> None:
        # Like a file: a placement dropped without close() gives its
        # resources back (the node outlives it: it holds the node).
        try:
            if getattr(self, "_ptr", None) and not self.released and \
                    not self.node.closed:
                _node_release(self.node._ptr, self._ptr, None)
                self.released = True
        finally:
            super().__del__()

    @property
    def cpuset(self) -> str:
        return _s(_pl_cpuset(self.ptr))

    @property
    def mems(self) -> str:
        return _s(_pl_mems(self.ptr))

    def amounts(self) -> List[Amount]:
        out = []
        am = _Amount()
        for i in range(_pl_count(self.ptr)):
            rc = _pl_at(self.ptr, i, ctypes.byref(am))
            if rc:
                _lib.raise_code(rc)
            out.append(Amount(_s(am.plugin), _s(am.slot), _s(am.device),
                              am.numa_node, _s(am.pci_bus_id), am.qty))
        return out

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.amounts())

    def devices(self, slot: str) -> List[str]:
        """Device ids taken for one slot ("cuda.device" -> ["0", "1"])."""
        return [a.device for a in self.amounts() if a.slot == slot]

    def container_config(self) -> Dict[str, object]:
        """{"devices": [...], "env": {...}, "cpus": ..., "mems": ...}; empty
        with placement_only."""
        cfg = _pl_config(self.ptr)
        if not cfg:
            return {}
        env: Dict[str, str] = {}
        k, v = cp(), cp()
        for i in range(_cc_env_count(cfg)):
            if _cc_env_at(cfg, i, ctypes.byref(k), ctypes.byref(v)) == 0:
                env[_s(k.value)] = _s(v.value)
        return {"devices": [_s(_cc_dev_at(cfg, i))
                            for i in range(_cc_dev_count(cfg))],
                "env": env, "cpus": self.cpuset, "mems": self.mems}
