"""The cluster scheduler (sokovan/sched.h), embedded: resource groups,
agents, owners' quotas, sessions, passes, pending reasons, preemption.

Time is the caller's: every call that needs it takes now_ms, so runs are
deterministic. A Scheduler is not thread-safe (like the C object).

    with Scheduler() as s:
        s.add_group("gpu", selector="concentrated", preemption=True)
        s.add_agent("n1", "gpu", capacity="cpu=32,mem=256g",
                    devices=[{"id": f"gpu{i}", "whole_slot": "cuda.device"}
                             for i in range(8)])
        s.submit("job1", "gpu", "cuda.device=2,cpu=4,mem=32g", user="ann")
        result = s.run_pass(now_ms=0)
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _lib
from ._lib import (c_bool, c_int, c_uint, call, cp, enc, ep, fn, i64, size_t,
                   str_array, u32, vp)
from .slots import Quantity, Slots, SlotsLike, default_kind

POINTER = ctypes.POINTER
u8 = ctypes.c_uint8


class _Options(ctypes.Structure):
    _fields_ = [("version", c_uint), ("fairshare_half_life_ms", i64)]


class _GroupOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("sequencer", cp),
                ("sequencer_config", cp), ("selector", cp),
                ("selector_config", cp), ("aging_ms", i64),
                ("max_reservations", u32), ("preemption", c_bool),
                ("preempt_min_runtime_ms", i64)]


class _DeviceSpec(ctypes.Structure):
    _fields_ = [("id", cp), ("whole_slot", cp), ("share_slot", cp),
                ("share_capacity", i64)]


class _Label(ctypes.Structure):
    _fields_ = [("key", cp), ("value", cp)]


class _AgentSpec(ctypes.Structure):
    _fields_ = [("version", c_uint), ("id", cp), ("resource_group", cp),
                ("architecture", cp), ("gpu_model", cp),
                ("schedulable", c_bool), ("capacity", vp),
                ("n_devices", size_t), ("devices", POINTER(_DeviceSpec)),
                ("n_labels", size_t), ("labels", POINTER(_Label))]


class _Policy(ctypes.Structure):
    _fields_ = [("version", c_uint), ("limit", vp), ("max_concurrent", u32),
                ("max_pending", u32), ("guaranteed", vp),
                ("borrow_limit", vp)]


class _KernelSpec(ctypes.Structure):
    _fields_ = [("role", c_int), ("request", vp)]


class _SessionSpec(ctypes.Structure):
    _fields_ = [("version", c_uint), ("id", cp), ("domain", cp),
                ("project", cp), ("user", cp), ("resource_group", cp),
                ("type", c_int), ("priority", ctypes.c_int32),
                ("cluster_mode", c_int), ("one_kernel_per_agent", c_bool),
                ("n_kernels", size_t), ("kernels", POINTER(_KernelSpec)),
                ("architecture", cp), ("n_gpu_models", size_t),
                ("gpu_models", POINTER(cp)), ("n_designated", size_t),
                ("designated_agents", POINTER(cp)), ("n_depends", size_t),
                ("depends_on", POINTER(cp)), ("not_before_ms", i64),
                ("estimated_duration_ms", i64), ("preemptible", c_bool),
                ("n_label_constraints", size_t),
                ("label_constraints", POINTER(_Label))]


class _ReasonSlot(ctypes.Structure):
    _fields_ = [("slot", cp), ("agents_short", u32), ("min_shortfall", i64)]


class _Reason(ctypes.Structure):
    _fields_ = [("code", c_int), ("resource_group", cp),
                ("evaluated_ms", i64), ("detail", cp), ("scope", c_int),
                ("slot", cp), ("shortfall", i64),
                ("agents_candidate", u32), ("n_slots", size_t),
                ("slots", _ReasonSlot * 8), ("reserved_at_ms", i64)]


class _PassOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("resource_group", cp),
                ("max_placements", size_t), ("filter", vp),
                ("filter_payload", vp), ("full_walk", c_bool)]


class _DeviceShare(ctypes.Structure):
    _fields_ = [("device", u32), ("slot", u8), ("whole", c_bool),
                ("amount", i64)]


class _KernelPlacement(ctypes.Structure):
    _fields_ = [("kernel", u32), ("agent_id", cp), ("n_devices", size_t),
                ("devices", POINTER(_DeviceShare))]


class _Placement(ctypes.Structure):
    _fields_ = [("session_id", cp), ("resource_group", cp),
                ("n_kernels", size_t), ("kernels", POINTER(_KernelPlacement))]


class _Preemption(ctypes.Structure):
    _fields_ = [("victim_id", cp), ("for_session_id", cp), ("cause", c_int)]


class _Result(ctypes.Structure):
    _fields_ = [("now_ms", i64), ("n_placements", size_t),
                ("placements", POINTER(_Placement)),
                ("n_preemptions", size_t),
                ("preemptions", POINTER(_Preemption)),
                ("n_considered", size_t), ("n_slots", size_t),
                ("slot_names", POINTER(cp))]


PP = POINTER(vp)
RP = POINTER(POINTER(_Result))
_new = fn("skv_sched_new", c_int, PP, POINTER(_Options), ep)
_free = fn("skv_sched_free", None, vp)
_group_add = fn("skv_sched_group_add", c_int, vp, cp, POINTER(_GroupOptions), ep)
_group_remove = fn("skv_sched_group_remove", c_int, vp, cp, ep)
_group_selector = fn("skv_sched_group_set_selector", c_int, vp, cp, cp, cp, ep)
_agent_add = fn("skv_sched_agent_add", c_int, vp, POINTER(_AgentSpec), ep)
_agent_update = fn("skv_sched_agent_update", c_int, vp, POINTER(_AgentSpec), ep)
_agent_sched = fn("skv_sched_agent_set_schedulable", c_int, vp, cp, c_bool, ep)
_agent_remove = fn("skv_sched_agent_remove", c_int, vp, cp, ep)
_agent_lost = fn("skv_sched_agent_lost", c_int, vp, POINTER(size_t), cp, i64, ep)
_policy_set = fn("skv_sched_policy_set", c_int, vp, c_int, cp, POINTER(_Policy), ep)
_owner_usage = fn("skv_sched_owner_usage", c_int, PP, POINTER(u32),
                  POINTER(u32), vp, c_int, cp, ep)
_submit = fn("skv_sched_submit", c_int, vp, POINTER(_SessionSpec), i64, ep)
_cancel = fn("skv_sched_cancel", c_int, vp, cp, i64, ep)
_started = fn("skv_sched_mark_started", c_int, vp, cp, i64, ep)
_finished = fn("skv_sched_mark_finished", c_int, vp, cp, c_bool, i64, ep)
_requeue = fn("skv_sched_requeue", c_int, vp, cp, i64, ep)
_sess_remove = fn("skv_sched_session_remove", c_int, vp, cp, ep)
_state = fn("skv_sched_session_state", c_int, POINTER(c_int), vp, cp, ep)
_state_name = fn("skv_sched_state_name", cp, c_int)
_reason = fn("skv_sched_session_reason", c_int, POINTER(_Reason), vp, cp, ep)
_reason_fmt = fn("skv_sched_reason_format", c_int, POINTER(cp),
                 POINTER(_Reason), ep)
_reason_name = fn("skv_sched_reason_name", cp, c_int)
_pass = fn("skv_sched_pass", c_int, RP, vp, i64, POINTER(_PassOptions), ep)
_result_free = fn("skv_sched_result_free", None, POINTER(_Result))
_check = fn("skv_sched_check", c_int, vp, ep)
_agent_usage = fn("skv_sched_agent_usage", c_int, PP, PP, vp, cp, ep)
_placement = fn("skv_sched_session_placement", c_int, RP, vp, cp, ep)
_sim_policy = fn("skv_sim_policy", vp, cp)
_register_sel = fn("skv_sched_register_selector", c_int, vp, vp, ep)
_load_plugin = fn("skv_sched_load_plugin", c_int, vp, cp, ep)

SCOPES = {"domain": 0, "project": 1, "user": 2}
TYPES = {"interactive": 0, "batch": 1, "inference": 2}
MODES = {"single-node": 0, "multi-node": 1}
ROLES = {"main": 0, "sub": 1}
CAUSES = {0: "priority", 1: "reclaim"}


def _choice(table: Mapping[str, int], value: str, what: str) -> int:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if value not in table:
        raise ValueError(f"unknown {what} {value!r}; one of {sorted(table)}")
    return table[value]


def _s(raw: Optional[bytes]) -> str:
    return (raw or b"").decode(errors="replace")


@dataclass(frozen=True)
class PendingReason:
    """Why a session waits (skv_sched_reason) plus the library's one-line
    text. code is the reason's name ("resources", "quota", ...)."""
    code: str
    text: str
    resource_group: str
    evaluated_ms: int
    detail: str
    scope: str
    slot: str
    shortfall: int
    agents_candidate: int
    short_slots: Tuple[Tuple[str, int, int], ...]  # (slot, agents, min short)
    reserved_at_ms: int


@dataclass
class PassResult:
    """A pass's decisions as plain data. placements: [{"session_id",
    "resource_group", "kernels": [{"kernel", "agent_id", "devices":
    [{"device", "slot", "whole", "amount"}]}]}]; preemptions: [{"victim",
    "for_session", "cause"}]."""
    now_ms: int
    placements: List[Dict[str, Any]] = field(default_factory=list)
    preemptions: List[Dict[str, str]] = field(default_factory=list)
    considered: int = 0

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def agents_of(self, session_id: str) -> List[str]:
        for p in self.placements:
            if p["session_id"] == session_id:
                return [k["agent_id"] for k in p["kernels"]]
        raise KeyError(session_id)


def _take_result(ptr: Any) -> PassResult:
    """Copy a skv_sched_result into Python objects, then free it. The
    hottest Python code of the binding (a pass over 100k sessions places
    tens of thousands): ctypes field reads are hoisted and strings that
    repeat (groups, agents, slot names) are decoded once."""
    try:
        r = ptr.contents
        names = [_s(r.slot_names[i]) for i in range(r.n_slots)]
        res = PassResult(r.now_ms, considered=r.n_considered)
        strings: Dict[bytes, str] = {}

        def text(raw: Optional[bytes]) -> str:
            got = strings.get(raw or b"")
            if got is None:
                got = strings[raw or b""] = _s(raw)
            return got

        append = res.placements.append
        pls = r.placements
        for i in range(r.n_placements):
            p = pls[i]
            kernels = []
            ks = p.kernels
            for k in range(p.n_kernels):
                kp = ks[k]
                dv = kp.devices
                devs = []
                for j in range(kp.n_devices):
                    d = dv[j]
                    devs.append({"device": d.device, "slot": names[d.slot],
                                 "whole": d.whole, "amount": d.amount})
                kernels.append({"kernel": kp.kernel,
                                "agent_id": text(kp.agent_id), "devices": devs})
            append({"session_id": _s(p.session_id),
                    "resource_group": text(p.resource_group),
                    "kernels": kernels})
        for i in range(r.n_preemptions):
            v = r.preemptions[i]
            res.preemptions.append({"victim": _s(v.victim_id),
                                    "for_session": _s(v.for_session_id),
                                    "cause": CAUSES.get(v.cause, "?")})
        return res
    finally:
        _result_free(ptr)


class Scheduler(_lib.Handle):
    """One scheduler model (see the module docstring)."""

    _free = _free

    def __init__(self, *, fairshare_half_life_ms: int = 3600000) -> None:
        opts = _Options(1, fairshare_half_life_ms)
        out = vp()
        call(_new, ctypes.byref(out), ctypes.byref(opts))
        super().__init__(out)

    # -- groups ---------------------------------------------------------------
    def add_group(self, name: str, *, sequencer: Optional[str] = None,
                  selector: Optional[str] = None,
                  sequencer_config: Optional[str] = None,
                  selector_config: Optional[str] = None, aging_ms: int = 0,
                  max_reservations: int = 1, preemption: bool = False,
                  preempt_min_runtime_ms: int = 0) -> None:
        """A resource group. sequencer: fifo, lifo, priority, drf, fairshare;
        selector: concentrated, dispersed, roundrobin, or a simulator policy
        (frag, fgd, bestfit, ...), registered on first use."""
        if selector is not None:
            self._ensure_selector(selector)
        o = _GroupOptions(1, enc(sequencer), enc(sequencer_config),
                          enc(selector), enc(selector_config), aging_ms,
                          max_reservations, preemption, preempt_min_runtime_ms)
        call(_group_add, self.ptr, enc(name), ctypes.byref(o))

    def _ensure_selector(self, name: str) -> None:
        table = _sim_policy(enc(name))
        if table and name not in getattr(self, "_registered", set()):
            err = _lib.Error()
            rc = _register_sel(self.ptr, table, ctypes.byref(err))
            if rc not in (0, -5):        # SKV_EEXIST: a built-in name
                _lib.raise_code(rc, err)
            self.__dict__.setdefault("_registered", set()).add(name)

    def remove_group(self, name: str) -> None:
        call(_group_remove, self.ptr, enc(name))

    def set_selector(self, group: str, selector: str,
                     config: Optional[str] = None) -> None:
        self._ensure_selector(selector)
        call(_group_selector, self.ptr, enc(group), enc(selector), enc(config))

    def load_plugin(self, path: str) -> None:
        """dlopen a selector/sequencer plugin (skv_sched_load_plugin)."""
        call(_load_plugin, self.ptr, enc(path))

    # -- agents ---------------------------------------------------------------
    def _agent_spec(self, keep: list, id: str, group: str, capacity: SlotsLike,
                    devices: Sequence[Mapping[str, Any]],
                    labels: Mapping[str, str], architecture: Optional[str],
                    gpu_model: Optional[str], schedulable: bool) -> _AgentSpec:
        cap = Slots.coerce(capacity)
        devs = []
        for i, d in enumerate(devices):
            if not isinstance(d, Mapping):
                raise TypeError("a device is a mapping with whole_slot, "
                                f"share_slot, share_capacity, id; not "
                                f"{type(d).__name__}")
            share = d.get("share_capacity", 0)
            if isinstance(share, str):
                share = Quantity.parse(share).raw
            devs.append(_DeviceSpec(enc(d.get("id", str(i))),
                                    enc(d["whole_slot"]),
                                    enc(d.get("share_slot")), int(share)))
        darr = (_DeviceSpec * max(len(devs), 1))(*devs)
        larr = (_Label * max(len(labels), 1))(
            *[_Label(enc(k), enc(v)) for k, v in labels.items()])
        keep += [cap, darr, larr]
        return _AgentSpec(1, enc(id), enc(group), enc(architecture),
                          enc(gpu_model), schedulable, cap.ptr, len(devs),
                          darr, len(labels), larr)

    def add_agent(self, id: str, group: str, capacity: SlotsLike, *,
                  devices: Sequence[Mapping[str, Any]] = (),
                  labels: Mapping[str, str] = {},
                  architecture: Optional[str] = None,
                  gpu_model: Optional[str] = None,
                  schedulable: bool = True) -> None:
        """An agent: pooled capacity ("cpu=32,mem=256g") and accelerators,
        each {"id", "whole_slot": "cuda.device", "share_slot":
        "cuda.shares", "share_capacity": 1000}."""
        keep: list = []
        spec = self._agent_spec(keep, id, group, capacity, devices, labels,
                                architecture, gpu_model, schedulable)
        call(_agent_add, self.ptr, ctypes.byref(spec))

    def update_agent(self, id: str, group: str, capacity: SlotsLike, *,
                     devices: Sequence[Mapping[str, Any]] = (),
                     labels: Mapping[str, str] = {},
                     architecture: Optional[str] = None,
                     gpu_model: Optional[str] = None,
                     schedulable: bool = True) -> None:
        keep: list = []
        spec = self._agent_spec(keep, id, group, capacity, devices, labels,
                                architecture, gpu_model, schedulable)
        call(_agent_update, self.ptr, ctypes.byref(spec))

    def set_schedulable(self, agent_id: str, schedulable: bool) -> None:
        call(_agent_sched, self.ptr, enc(agent_id), schedulable)

    def remove_agent(self, agent_id: str) -> None:
        call(_agent_remove, self.ptr, enc(agent_id))

    def agent_lost(self, agent_id: str, now_ms: int) -> int:
        """The agent is gone; returns how many sessions were lost."""
        n = size_t()
        call(_agent_lost, self.ptr, ctypes.byref(n), enc(agent_id), now_ms)
        return n.value

    def agent_usage(self, agent_id: str) -> Tuple[Slots, Slots]:
        """(used, capacity) of one agent."""
        used, cap = vp(), vp()
        call(_agent_usage, ctypes.byref(used), ctypes.byref(cap), self.ptr,
             enc(agent_id))
        return Slots._adopt(used), Slots._adopt(cap)

    # -- owners and quotas ----------------------------------------------------
    def set_policy(self, scope: str, name: str, *,
                   limit: Optional[SlotsLike] = None, max_concurrent: int = 0,
                   max_pending: int = 0,
                   guaranteed: Optional[SlotsLike] = None,
                   borrow_limit: Optional[SlotsLike] = None) -> None:
        """Quota of one owner (scope "domain", "project" or "user")."""
        vecs = [None if v is None else Slots.coerce(v)
                for v in (limit, guaranteed, borrow_limit)]
        ptrs = [None if v is None else v.ptr for v in vecs]
        p = _Policy(1, ptrs[0], max_concurrent, max_pending, ptrs[1], ptrs[2])
        call(_policy_set, self.ptr, _choice(SCOPES, scope, "scope"),
             enc(name), ctypes.byref(p))

    def clear_policy(self, scope: str, name: str) -> None:
        call(_policy_set, self.ptr, _choice(SCOPES, scope, "scope"),
             enc(name), None)

    def owner_usage(self, scope: str, name: str) -> Dict[str, Any]:
        """{"usage": Slots, "active": n, "pending": n}."""
        usage, act, pend = vp(), u32(), u32()
        call(_owner_usage, ctypes.byref(usage), ctypes.byref(act),
             ctypes.byref(pend), self.ptr, _choice(SCOPES, scope, "scope"),
             enc(name))
        return {"usage": Slots._adopt(usage), "active": act.value,
                "pending": pend.value}

    # -- sessions -------------------------------------------------------------
    def submit(self, id: str, group: str,
               request: Optional[SlotsLike] = None, *,
               kernels: Optional[Sequence[SlotsLike]] = None,
               now_ms: int = 0, user: Optional[str] = None,
               project: Optional[str] = None, domain: Optional[str] = None,
               type: str = "batch", priority: int = 0,
               cluster_mode: str = "single-node",
               one_kernel_per_agent: bool = False,
               architecture: Optional[str] = None,
               gpu_models: Sequence[str] = (),
               designated_agents: Sequence[str] = (),
               depends_on: Sequence[str] = (), not_before_ms: int = 0,
               estimated_duration_ms: int = 0, preemptible: bool = False,
               labels: Mapping[str, str] = {}) -> None:
        """A pending session: one kernel of `request`, or `kernels` (the
        first is the main one)."""
        reqs = list(kernels) if kernels is not None else [request]
        if not reqs or any(r is None for r in reqs):
            raise ValueError("submit needs a request or kernels")
        keep: list = [Slots.coerce(r) for r in reqs]
        karr = (_KernelSpec * len(reqs))(
            *[_KernelSpec(0 if i == 0 else 1, v.ptr) for i, v in enumerate(keep)])
        larr = (_Label * max(len(labels), 1))(
            *[_Label(enc(k), enc(v)) for k, v in labels.items()])
        keep += [karr, larr]
        spec = _SessionSpec(
            2, enc(id), enc(domain), enc(project), enc(user), enc(group),
            _choice(TYPES, type, "session type"), priority,
            _choice(MODES, cluster_mode, "cluster mode"),
            one_kernel_per_agent, len(reqs), karr, enc(architecture),
            len(gpu_models), str_array(gpu_models, keep),
            len(designated_agents), str_array(designated_agents, keep),
            len(depends_on), str_array(depends_on, keep), not_before_ms,
            estimated_duration_ms, preemptible, len(labels), larr)
        call(_submit, self.ptr, ctypes.byref(spec), now_ms)

    def cancel(self, id: str, now_ms: int = 0) -> None:
        call(_cancel, self.ptr, enc(id), now_ms)

    def mark_started(self, id: str, now_ms: int = 0) -> None:
        call(_started, self.ptr, enc(id), now_ms)

    def mark_finished(self, id: str, now_ms: int = 0, *,
                      failed: bool = False) -> None:
        call(_finished, self.ptr, enc(id), failed, now_ms)

    def requeue(self, id: str, now_ms: int = 0) -> None:
        call(_requeue, self.ptr, enc(id), now_ms)

    def forget(self, id: str) -> None:
        """Drop a session in a final state."""
        call(_sess_remove, self.ptr, enc(id))

    def state(self, id: str) -> str:
        """The library's state name: "pending", "scheduled", "running", "finished", "failed", "cancelled", "lost"."""
        out = c_int()
        call(_state, ctypes.byref(out), self.ptr, enc(id))
        return _s(_state_name(out.value))

    def reason(self, id: str) -> PendingReason:
        """Why a pending session waits (StateError when not pending)."""
        r = _Reason()
        call(_reason, ctypes.byref(r), self.ptr, enc(id))
        text = cp()
        call(_reason_fmt, ctypes.byref(text), ctypes.byref(r))
        scope = {v: k for k, v in SCOPES.items()}.get(r.scope, "?")
        return PendingReason(
            _s(_reason_name(r.code)), _lib.take_string(text),
            _s(r.resource_group), r.evaluated_ms, _s(r.detail), scope,
            _s(r.slot), r.shortfall, r.agents_candidate,
            tuple((_s(x.slot), x.agents_short, x.min_shortfall)
                  for x in r.slots[:r.n_slots]), r.reserved_at_ms)

    # -- the pass -------------------------------------------------------------
    def run_pass(self, now_ms: int = 0, *, group: Optional[str] = None,
                 max_placements: int = 0, full_walk: bool = False) -> PassResult:
        """One scheduling pass: placements and preemption decisions."""
        o = _PassOptions(2, enc(group), max_placements, None, None, full_walk)
        out = POINTER(_Result)()
        call(_pass, ctypes.byref(out), self.ptr, now_ms, ctypes.byref(o))
        return _take_result(out)

    def placement(self, id: str) -> Dict[str, Any]:
        """Where a scheduled or running session's kernels are."""
        out = POINTER(_Result)()
        call(_placement, ctypes.byref(out), self.ptr, enc(id))
        return _take_result(out).placements[0]

    def check(self) -> None:
        """Verify the accounting (StateError naming the first mismatch)."""
        call(_check, self.ptr)
