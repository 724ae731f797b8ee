"""The trace simulator's library API (sokovan/sim.h): replays through the
real scheduler. The sokovan-sim program adds only argument parsing, seed
ranges and table printing on top; results here are plain dicts."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional

from . import _lib
from ._lib import (c_bool, c_int, c_uint, call, cp, enc, ep, fn, i64, size_t,
                   u32, u64, vp)

POINTER = ctypes.POINTER
c_double = ctypes.c_double


class _OpenbOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("policy", cp), ("policy_config", cp),
                ("seed", u64), ("demand_pct", u32)]


class _OpenbResult(ctypes.Structure):
    _fields_ = [("seed", u64), ("capacity", i64), ("n_events", size_t),
                ("n_placed", size_t), ("n_dropped", size_t),
                ("arrived", POINTER(i64)), ("allocated", POINTER(i64))]


class _Shape(ctypes.Structure):
    _fields_ = [("cpu", i64), ("mem", i64), ("gpus", u32)]


class _JobsOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("policy", cp), ("sequencer", cp),
                ("seed", u64), ("n_nodes", u32), ("shape", _Shape),
                ("nodes", vp), ("max_reservations", u32),
                ("max_jobs", size_t), ("cpu_per_gpu", i64),
                ("mem_per_gpu", i64), ("strict_fifo", c_bool),
                ("full_walk", c_bool)]


class _OwnerStats(ctypes.Structure):
    _fields_ = [("name", cp), ("n_jobs", size_t), ("gpu_seconds", c_double),
                ("mean_slowdown", c_double)]


class _JobsResult(ctypes.Structure):
    _fields_ = [("n_jobs", size_t), ("n_completed", size_t),
                ("n_rejected", size_t), ("makespan_s", c_double),
                ("utilization", c_double), ("queue_mean_s", c_double),
                ("queue_p50_s", c_double), ("queue_p99_s", c_double),
                ("jct_mean_s", c_double), ("jct_p50_s", c_double),
                ("jct_p99_s", c_double), ("jain_fairness", c_double),
                ("n_passes", size_t), ("n_decisions", size_t),
                ("pass_seconds", c_double), ("n_owners", size_t),
                ("owners", POINTER(_OwnerStats)), ("decisions_digest", u64),
                ("pass_cpu_seconds", c_double)]


PP = POINTER(vp)
_policy_count = fn("skv_sim_policy_count", size_t)
_policy_name = fn("skv_sim_policy_name", cp, size_t)
_openb_load = fn("skv_sim_openb_load", c_int, PP, cp, cp, ep)
_openb_parse = fn("skv_sim_openb_parse", c_int, PP, cp, cp, ep)
_openb_free = fn("skv_sim_openb_free", None, vp)
_openb_nodes = fn("skv_sim_openb_node_count", size_t, vp)
_openb_pods = fn("skv_sim_openb_pod_count", size_t, vp)
_openb_cap = fn("skv_sim_openb_capacity", i64, vp)
_openb_run = fn("skv_sim_openb_run", c_int, POINTER(POINTER(_OpenbResult)),
                vp, POINTER(_OpenbOptions), ep)
_openb_result_free = fn("skv_sim_openb_result_free", None,
                        POINTER(_OpenbResult))
_openb_column = fn("skv_sim_openb_column", c_int, POINTER(c_double),
                   POINTER(_OpenbResult), c_int)
_jobs_load = fn("skv_sim_jobs_load", c_int, PP, cp, ep)
_jobs_parse = fn("skv_sim_jobs_parse", c_int, PP, cp, ep)
_jobs_free = fn("skv_sim_jobs_free", None, vp)
_jobs_count = fn("skv_sim_jobs_count", size_t, vp)
_shape_xml = fn("skv_sim_node_shape_from_xml", c_int, POINTER(_Shape), cp, ep)
_jobs_run = fn("skv_sim_jobs_run", c_int, POINTER(POINTER(_JobsResult)), vp,
               POINTER(_JobsOptions), ep)
_jobs_result_free = fn("skv_sim_jobs_result_free", None, POINTER(_JobsResult))


def sim_policies() -> List[str]:
    """The FGD paper's placement policies and libsokovan's "frag"."""
    return [_policy_name(i).decode() for i in range(_policy_count())]


class OpenbWorkload(_lib.Handle):
    """An openb node list plus pod list (the FGD experiment's input)."""

    _free = _openb_free

    def __init__(self, nodes_csv: str, pods_csv: Optional[str] = None, *,
                 text: bool = False) -> None:
        """Paths, or CSV text itself with text=True."""
        out = vp()
        call(_openb_parse if text else _openb_load, ctypes.byref(out),
             enc(str(nodes_csv)), enc(None if pods_csv is None else str(pods_csv)))
        super().__init__(out)

    @property
    def nodes(self) -> int:
        return int(_openb_nodes(self.ptr))

    @property
    def pods(self) -> int:
        return int(_openb_pods(self.ptr))

    @property
    def capacity_milli_gpu(self) -> int:
        return int(_openb_cap(self.ptr))

    def run(self, policy: str = "frag", *, seed: int = 0,
            demand_pct: int = 0, policy_config: Optional[str] = None,
            columns: range = range(0, 131, 10)) -> Dict[str, Any]:
        """One replay: {"seed", "capacity", "events", "placed", "dropped",
        "arrived": [...], "allocated": [...], "columns": {k: % or None}}.
        columns: the published table's columns (mean allocated % where the
        arrived % rounds to k)."""
        o = _OpenbOptions(1, enc(policy), enc(policy_config), seed, demand_pct)
        out = POINTER(_OpenbResult)()
        call(_openb_run, ctypes.byref(out), self.ptr, ctypes.byref(o))
        try:
            r = out.contents
            n = r.n_events
            cols: Dict[int, Optional[float]] = {}
            val = c_double()
            for k in columns:
                rc = _openb_column(ctypes.byref(val), out, k)
                cols[k] = val.value if rc == 0 else None
            return {"seed": r.seed, "capacity": r.capacity, "events": n,
                    "placed": r.n_placed, "dropped": r.n_dropped,
                    "arrived": r.arrived[:n], "allocated": r.allocated[:n],
                    "columns": cols}
        finally:
            _openb_result_free(out)


class JobTrace(_lib.Handle):
    """A generic job table (submit time, duration, GPUs, ...)."""

    _free = _jobs_free

    def __init__(self, path_or_text: str, *, text: bool = False) -> None:
        out = vp()
        call(_jobs_parse if text else _jobs_load, ctypes.byref(out),
             enc(str(path_or_text)))
        super().__init__(out)

    def __len__(self) -> int:
        return int(_jobs_count(self.ptr))

    def run(self, *, policy: Optional[str] = None,
            sequencer: Optional[str] = None, seed: int = 0,
            n_nodes: int = 0, node_xml: Optional[str] = None,
            shape: Optional[Dict[str, int]] = None,
            nodes: Optional[OpenbWorkload] = None, max_reservations: int = 1,
            max_jobs: int = 0, cpu_per_gpu: int = 0, mem_per_gpu: int = 0,
            strict_fifo: bool = False, full_walk: bool = False) -> Dict[str, Any]:
        """Replay on n_nodes copies of node_xml's machine (or of shape
        {"cpu": milli, "mem": bytes, "gpus": n}), or on an openb node list.
        Returns the skv_sim_jobs_result fields as a dict."""
        sh = _Shape()
        if node_xml is not None:
            call(_shape_xml, ctypes.byref(sh), enc(str(node_xml)))
        elif shape is not None:
            sh = _Shape(shape.get("cpu", 0), shape.get("mem", 0),
                        shape.get("gpus", 0))
        o = _JobsOptions(2, enc(policy), enc(sequencer), seed, n_nodes, sh,
                         nodes.ptr if nodes is not None else None,
                         max_reservations, max_jobs, cpu_per_gpu, mem_per_gpu,
                         strict_fifo, full_walk)
        out = POINTER(_JobsResult)()
        call(_jobs_run, ctypes.byref(out), self.ptr, ctypes.byref(o))
        try:
            r = out.contents
            d = {name: getattr(r, name) for name, _ in _JobsResult._fields_
                 if name not in ("owners", "n_owners")}
            d["decisions_digest"] = f"{r.decisions_digest:016x}"
            d["owners"] = [{"name": (o.name or b"").decode(), "jobs": o.n_jobs,
                            "gpu_seconds": o.gpu_seconds,
                            "mean_slowdown": o.mean_slowdown}
                           for o in r.owners[:r.n_owners]]
            return d
        finally:
            _jobs_result_free(out)
