"""The cluster client (sokovan/client.h): one signed connection to a
sokovan-manager through the C client library (framing, signing, TLS and
failover are the library's; nothing of the protocol is re-implemented).

    with Client.connect("unix:/run/sokovan/manager.sock",
                        key_file="/var/lib/sokovan/manager/admin.key") as c:
        sid = c.submit(image="busybox", command=["echo", "hi"],
                       slots="cpu=0.1,mem=32m")
        c.wait(sid)
        print(c.logs(sid))

Messages are the C structures of sokovan/proto_msg.h, mirrored below and
checked against skv_proto_type_size() at import; requests are built from
dicts and replies come back as dicts with the same field names.
"""
from __future__ import annotations

import ctypes
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _lib
from ._lib import (c_int, c_uint, call, cp, enc, ep, fn, i64, size_t, u32,
                   u64, vp)
from .slots import Slots

POINTER = ctypes.POINTER
i32 = ctypes.c_int32
u8 = ctypes.c_uint8
STR, SLOTS, DATA = "str", "slots", "data"


class _Msg(ctypes.Structure):
    """A proto_msg.h structure. _spec lists (name, kind): a ctypes scalar,
    STR, SLOTS, DATA (bytes + data_len), a _Msg class (nested by value) or
    [elem] (pointer + n_<name> count, elem STR, u32 or a _Msg class)."""
    _spec: List[Tuple[str, Any]] = []


def _ctype(kind: Any) -> Any:
    return {STR: cp, SLOTS: vp}.get(kind, kind) if not isinstance(kind, str) \
        or kind in (STR, SLOTS) else kind


def msg(name: str, spec: List[Tuple[str, Any]]) -> type:
    fields: List[Tuple[str, Any]] = []
    for fname, kind in spec:
        if isinstance(kind, list):
            fields += [(fname, POINTER(_ctype(kind[0]))), ("n_" + fname, size_t)]
        elif kind == DATA:
            fields += [(fname, POINTER(u8)), (fname + "_len", size_t)]
        else:
            fields.append((fname, _ctype(kind)))
    return type(name, (_Msg,), {"_fields_": fields, "_spec": spec})


KV = msg("KV", [("key", STR), ("value", STR)])
Device = msg("Device", [("id", STR), ("kind", STR), ("numa_node", i32),
                        ("slots", SLOTS), ("model", STR), ("bus_id", STR)])
KernelSpec = msg("KernelSpec", [("role", STR), ("image", STR), ("slots", SLOTS)])
Mount = msg("Mount", [("folder", STR), ("target", STR), ("readonly", u8),
                      ("source", STR), ("folder_id", STR)])
Submit = msg("Submit", [
    ("name", STR), ("owner", STR), ("project", STR), ("resource_group", STR),
    ("session_type", STR), ("priority", i32), ("cluster_mode", STR),
    ("cluster_size", u32), ("image", STR), ("command", [STR]), ("env", [KV]),
    ("kernels", [KernelSpec]), ("constraints", [KV]), ("dependencies", [STR]),
    ("estimated_duration_ms", u64), ("preemptible", u8), ("client_token", STR),
    ("ports", [u32]), ("not_before_ms", i64), ("max_lifetime_ms", u64),
    ("mounts", [Mount]), ("services", [STR]), ("numa_policy", STR)])
SessionRef = msg("SessionRef", [("session_id", STR), ("status", STR)])
SessionList = msg("SessionList", [("owner", STR), ("resource_group", STR),
                                  ("statuses", [STR]), ("limit", u32),
                                  ("offset", u32)])
StatusChange = msg("StatusChange", [("status", STR), ("timestamp_ms", i64),
                                    ("reason", STR)])
PendingReason = msg("PendingReason", [
    ("resource_group", STR), ("predicate", STR), ("slot", STR),
    ("shortfall", i64), ("message", STR), ("estimated_start_ms", i64)])
KernelInfo = msg("KernelInfo", [
    ("kernel_id", STR), ("role", STR), ("idx", u32), ("agent_id", STR),
    ("container_id", STR), ("status", STR), ("exit_code", i32),
    ("slots", SLOTS), ("address", STR), ("published", [STR])])
SessionInfo = msg("SessionInfo", [
    ("session_id", STR), ("name", STR), ("owner", STR), ("project", STR),
    ("resource_group", STR), ("session_type", STR), ("status", STR),
    ("status_reason", STR), ("priority", i32), ("cluster_mode", STR),
    ("cluster_size", u32), ("image", STR), ("created_ms", i64),
    ("started_ms", i64), ("finished_ms", i64), ("exit_code", i32),
    ("slots", SLOTS), ("history", [StatusChange]),
    ("pending", [PendingReason]), ("kernels", [KernelInfo]),
    ("services", [STR])])
SessionListReply = msg("SessionListReply", [("sessions", [SessionInfo]),
                                            ("total", u64)])
SessionId = msg("SessionId", [("session_id", STR)])
ShowReply = msg("ShowReply", [("session", SessionInfo)])
Terminate = msg("Terminate", [("session_id", STR), ("reason", STR),
                              ("force", u8)])
LogsRequest = msg("LogsRequest", [("session_id", STR), ("kernel_id", STR),
                                  ("offset", u64), ("max_bytes", u32),
                                  ("stream", STR)])
LogsReply = msg("LogsReply", [("session_id", STR), ("kernel_id", STR),
                              ("data", DATA), ("next_offset", u64),
                              ("eof", u8)])
AgentList = msg("AgentList", [("resource_group", STR), ("include_lost", u8)])
DeviceFault = msg("DeviceFault", [("device_id", STR), ("reason", STR)])
AgentInfo = msg("AgentInfo", [
    ("agent_id", STR), ("resource_group", STR), ("architecture", STR),
    ("address", STR), ("status", STR), ("labels", [KV]), ("devices", [Device]),
    ("capacity", SLOTS), ("occupied", SLOTS), ("last_heartbeat_ms", i64),
    ("n_running", u32), ("admin_state", STR), ("drain_deadline_ms", i64),
    ("unhealthy", [DeviceFault])])
AdminAgent = msg("AdminAgent", [("agent_id", STR), ("action", STR)])
AgentListReply = msg("AgentListReply", [("agents", [AgentInfo])])
ImageList = msg("ImageList", [("architecture", STR)])
ImageInfo = msg("ImageInfo", [("name", STR), ("architecture", STR),
                              ("digest", STR), ("size_bytes", u64),
                              ("agents", [STR])])
ImageListReply = msg("ImageListReply", [("images", [ImageInfo])])
User = msg("User", [("name", STR), ("email", STR), ("role", STR),
                    ("domain", STR), ("projects", [STR]),
                    ("resource_policy", STR), ("description", STR),
                    ("active", u8)])
Keypair = msg("Keypair", [("access_key", STR), ("secret_key", STR),
                          ("user", STR), ("resource_policy", STR),
                          ("active", u8), ("created_ms", i64)])
Project = msg("Project", [("name", STR), ("domain", STR), ("description", STR),
                          ("resource_policy", STR), ("active", u8)])
Domain = msg("Domain", [("name", STR), ("description", STR),
                        ("resource_groups", [STR]), ("active", u8)])
ResourcePolicy = msg("ResourcePolicy", [
    ("name", STR), ("max_slots", SLOTS), ("max_concurrent_sessions", u32),
    ("max_pending_sessions", u32), ("max_cluster_size", u32),
    ("max_session_lifetime_ms", u64), ("idle_timeout_ms", u64)])
ResourceGroup = msg("ResourceGroup", [
    ("name", STR), ("description", STR), ("scheduler", STR),
    ("lost_batch_policy", STR), ("pending_timeout_ms", u64),
    ("session_types", [STR]), ("active", u8), ("selector", STR),
    ("preemption", STR), ("preempt_min_runtime_ms", i64),
    ("preempt_mode", STR), ("drain_action", STR), ("drain_grace_ms", i64),
    ("fault_action", STR), ("allow_unenforced_fractions", STR),
    ("idle_timeout_ms", i64), ("max_lifetime_ms", i64),
    ("preempt_order", STR)])
Quota = msg("Quota", [("scope", STR), ("owner", STR), ("resource_group", STR),
                      ("guaranteed", SLOTS), ("limit", SLOTS),
                      ("borrow_limit", SLOTS)])
QuotaTree = msg("QuotaTree", [("resource_group", STR)])
QuotaNode = msg("QuotaNode", [
    ("resource_group", STR), ("scope", STR), ("name", STR), ("parent", STR),
    ("guaranteed", SLOTS), ("limit", SLOTS), ("borrow_limit", SLOTS),
    ("used", SLOTS), ("borrowed", SLOTS), ("lent", SLOTS)])
QuotaTreeReply = msg("QuotaTreeReply", [("nodes", [QuotaNode])])

# admin kind -> (type name, object field, object struct, reply list field)
ADMIN = {
    "user": ("admin.user", "user", User, "users"),
    "keypair": ("admin.keypair", "keypair", Keypair, "keypairs"),
    "project": ("admin.project", "project", Project, "projects"),
    "domain": ("admin.domain", "domain", Domain, "domains"),
    "resource_policy": ("admin.resource_policy", "policy", ResourcePolicy,
                        "policies"),
    "resource_group": ("admin.resource_group", "group", ResourceGroup,
                       "groups"),
    "quota": ("admin.quota", "quota", Quota, "quotas"),
}
ADMIN_OPS = {"create": 1, "update": 2, "delete": 3, "list": 4}
_ADMIN_MSGS: Dict[str, Any] = {}
for _kind, (_t, _field, _obj, _list) in ADMIN.items():
    _ADMIN_MSGS[_t] = msg("Admin_" + _kind, [("op", u32), (_field, _obj)])
    _ADMIN_MSGS[_t + ".reply"] = msg("Admin_" + _kind + "_reply",
                                     [(_list, [_obj])])

_type_name = fn("skv_proto_type_name", cp, c_int)
_type_size = fn("skv_proto_type_size", size_t, c_int)
_body_free = fn("skv_proto_body_free", None, c_int, vp)
_slots_format = fn("skv_slots_format", c_int, POINTER(cp), vp, ep)

TYPES: Dict[str, int] = {}
for _i in range(1, 256):
    _n = _type_name(_i).decode()
    if _n == "?":
        break
    TYPES[_n] = _i

_BODIES: Dict[str, Any] = {
    "session.submit": Submit, "session.submit.reply": SessionRef,
    "session.list": SessionList, "session.list.reply": SessionListReply,
    "session.show": SessionId, "session.show.reply": ShowReply,
    "session.terminate": Terminate, "session.terminate.reply": SessionRef,
    "session.logs": LogsRequest, "logs.reply": LogsReply,
    "agent.list": AgentList, "agent.list.reply": AgentListReply,
    "admin.agent": AdminAgent,
    "image.list": ImageList, "image.list.reply": ImageListReply,
    "admin.quota_tree": QuotaTree, "admin.quota_tree.reply": QuotaTreeReply,
    **_ADMIN_MSGS,
}
# A layout that disagrees with the loaded library must never reach it.
for _n, _cls in _BODIES.items():
    if _n not in TYPES or _type_size(TYPES[_n]) != ctypes.sizeof(_cls):
        raise ImportError(f"sokovan.client: {_n} layout mismatch (binding "
                          f"{ctypes.sizeof(_cls)} bytes, library "
                          f"{_type_size(TYPES.get(_n, 0))}): rebuild both")


def _slots_text(ptr: Optional[int]) -> Optional[str]:
    if not ptr:
        return None
    out = cp()
    call(_slots_format, ctypes.byref(out), ptr)
    return _lib.take_string(out)


def to_dict(m: _Msg) -> Dict[str, Any]:
    """Copy a structure (and everything it points to) into Python."""
    d: Dict[str, Any] = {}
    for name, kind in m._spec:
        v = getattr(m, name)
        if isinstance(kind, list):
            n = getattr(m, "n_" + name)
            e = kind[0]
            items = [v[i] for i in range(n)]
            d[name] = [_lib.dec(x) if e == STR else
                       to_dict(x) if isinstance(e, type) and issubclass(e, _Msg)
                       else int(x) for x in items]
        elif kind == STR:
            d[name] = _lib.dec(v)
        elif kind == SLOTS:
            d[name] = _slots_text(v)
        elif kind == DATA:
            d[name] = ctypes.string_at(v, getattr(m, name + "_len")) if v else b""
        elif isinstance(kind, type) and issubclass(kind, _Msg):
            d[name] = to_dict(v)
        else:
            d[name] = v
    return d


def from_dict(cls: Any, d: Mapping[str, Any], keep: list) -> Any:
    """Build a structure from a dict; keep holds what it points to."""
    known = {name: kind for name, kind in cls._spec}
    for key in d:
        if key not in known:
            raise TypeError(f"{cls.__name__}: unknown field {key!r} "
                            f"(known: {', '.join(known)})")
    m = cls()
    for name, value in d.items():
        kind = known[name]
        if value is None:
            continue
        if isinstance(kind, list):
            e = kind[0]
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"{cls.__name__}.{name} must be a list")
            if e == STR:
                arr = _lib.str_array(list(value), keep)
            elif isinstance(e, type) and issubclass(e, _Msg):
                arr = (e * max(len(value), 1))(
                    *[from_dict(e, x, keep) for x in value])
            else:
                arr = (e * max(len(value), 1))(*value)
            keep.append(arr)
            setattr(m, name, ctypes.cast(arr, POINTER(_ctype(e))))
            setattr(m, "n_" + name, len(value))
        elif kind == STR:
            setattr(m, name, enc(value))
        elif kind == SLOTS:
            s = Slots.coerce(value)
            keep.append(s)
            setattr(m, name, s.ptr)
        elif isinstance(kind, type) and issubclass(kind, _Msg):
            setattr(m, name, from_dict(kind, value, keep))
        else:
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int):
                raise TypeError(f"{cls.__name__}.{name} must be an int, not "
                                f"{type(value).__name__}")
            setattr(m, name, value)
    return m


class _Options(ctypes.Structure):
    _fields_ = [("version", c_uint), ("endpoint", cp), ("access_key", cp),
                ("secret_key", cp), ("timeout_ms", c_int), ("max_frame", u32),
                ("tls_ca_file", cp), ("tls_pin", cp), ("failover_ms", c_int)]


_connect = fn("skv_client_connect", c_int, POINTER(vp), POINTER(_Options), ep)
_free = fn("skv_client_free", None, vp)
_call = fn("skv_client_call", c_int, vp, c_int, vp, vp, ep)
_usable = fn("skv_client_usable", c_int, vp)
_submit = fn("skv_client_submit", c_int, vp, POINTER(SessionRef),
             POINTER(Submit), ep)
_show = fn("skv_client_show", c_int, vp, POINTER(ShowReply), cp, ep)
_terminate = fn("skv_client_terminate", c_int, vp, POINTER(SessionRef), cp,
                cp, c_int, ep)
_logs = fn("skv_client_logs", c_int, vp, POINTER(LogsReply),
           POINTER(LogsRequest), ep)
_read_keyfile = fn("skv_client_read_keyfile", c_int, cp, cp, cp, ep)

FINAL = ("TERMINATED", "CANCELLED", "ERROR")


def read_keyfile(path: str) -> Tuple[str, str]:
    """(access_key, secret_key) of a key file the manager wrote."""
    ak = ctypes.create_string_buffer(64)
    sk = ctypes.create_string_buffer(128)
    try:
        call(_read_keyfile, ak, sk, enc(str(path)))
        return ak.value.decode(), sk.value.decode()
    finally:
        ctypes.memset(sk, 0, 128)


class Client(_lib.Handle):
    """A blocking client of one manager. Not thread-safe (one per thread)."""

    _free = _free

    @classmethod
    def connect(cls, endpoint: str, *, key_file: Optional[str] = None,
                access_key: Optional[str] = None,
                secret_key: Optional[str] = None, timeout_ms: int = 0,
                tls_ca_file: Optional[str] = None,
                tls_pin: Optional[str] = None,
                failover_ms: int = 0) -> "Client":
        """endpoint: "unix:/path", "host:port", "tls:host:port" or a comma
        list; credentials from key_file or access_key + secret_key."""
        if key_file is not None:
            access_key, secret_key = read_keyfile(key_file)
        if not access_key or not secret_key:
            raise TypeError("connect needs key_file or access_key and secret_key")
        o = _Options(3, enc(endpoint), enc(access_key), enc(secret_key),
                     timeout_ms, 0, enc(tls_ca_file), enc(tls_pin), failover_ms)
        out = vp()
        call(_connect, ctypes.byref(out), ctypes.byref(o))
        return cls(out)

    @property
    def usable(self) -> bool:
        return not self.closed and bool(_usable(self.ptr))

    def request(self, type_name: str, body: Mapping[str, Any] = {}) -> Dict[str, Any]:
        """Any request by its type name ("agent.list", "admin.user", ...)
        with its body as a dict; the reply as a dict."""
        if type_name not in TYPES:
            raise ValueError(f"unknown message type {type_name!r}")
        t = TYPES[type_name]
        reply_name = {"session.logs": "logs.reply",
                      "admin.agent": "agent.list.reply"}.get(
                          type_name, type_name + ".reply")
        if type_name not in _BODIES or reply_name not in _BODIES:
            raise ValueError(f"{type_name} is not a client request this "
                             "binding knows")
        keep: list = []
        req = from_dict(_BODIES[type_name], body, keep)
        rep = _BODIES[reply_name]()
        return self._exchange(TYPES[reply_name], rep, _call, self.ptr, t,
                              ctypes.byref(req), ctypes.byref(rep))

    @staticmethod
    def _exchange(reply_type: int, rep: Any, f: Any, *args: Any) -> Dict[str, Any]:
        call(f, *args)
        try:
            return to_dict(rep)
        finally:
            _body_free(reply_type, ctypes.byref(rep))

    # -- sessions -------------------------------------------------------------
    def submit(self, *, image: str, command: Sequence[str], slots: Any,
               name: Optional[str] = None, cluster_size: int = 1,
               cluster_mode: str = "single-node",
               session_type: str = "batch", **more: Any) -> str:
        """session.submit with one kernel spec of `slots`; more: any other
        field of the message (env=[{"key","value"}], priority, owner,
        resource_group, client_token, ...). Returns the session id."""
        if isinstance(command, (str, bytes)):
            raise TypeError("command is a list of arguments, e.g. "
                            "[\"sh\", \"-c\", script], not a string")
        body = {"name": name, "image": image, "command": list(command),
                "session_type": session_type, "cluster_mode": cluster_mode,
                "cluster_size": cluster_size,
                "kernels": [{"role": "main", "slots": slots}], **more}
        keep: list = []
        req = from_dict(Submit, body, keep)
        rep = SessionRef()
        d = self._exchange(TYPES["session.submit.reply"], rep, _submit,
                           self.ptr, ctypes.byref(rep), ctypes.byref(req))
        return str(d["session_id"])

    def list(self, *, owner: Optional[str] = None,
             resource_group: Optional[str] = None,
             statuses: Sequence[str] = (), limit: int = 0,
             offset: int = 0) -> List[Dict[str, Any]]:
        """session.list ("ps"): sessions as dicts."""
        return self.request("session.list", {
            "owner": owner, "resource_group": resource_group,
            "statuses": list(statuses), "limit": limit,
            "offset": offset})["sessions"]

    ps = list

    def show(self, session_id: str) -> Dict[str, Any]:
        """session.show: the session with history, kernels and pending
        reasons."""
        rep = ShowReply()
        return self._exchange(TYPES["session.show.reply"], rep, _show,
                              self.ptr, ctypes.byref(rep),
                              enc(session_id))["session"]

    def terminate(self, session_id: str, reason: Optional[str] = None,
                  force: bool = False) -> str:
        """session.terminate; returns the status the manager reports."""
        rep = SessionRef()
        d = self._exchange(TYPES["session.terminate.reply"], rep, _terminate,
                           self.ptr, ctypes.byref(rep), enc(session_id),
                           enc(reason), int(force))
        return str(d["status"])

    def wait(self, session_id: str, *, timeout_s: float = 60.0,
             until: Sequence[str] = FINAL) -> Dict[str, Any]:
        """Poll show until the status is one of `until`; TimeoutError."""
        end = time.monotonic() + timeout_s
        while True:
            s = self.show(session_id)
            if s["status"] in until:
                return s
            if time.monotonic() >= end:
                raise TimeoutError(f"session {session_id} still "
                                   f"{s['status']} after {timeout_s} s")
            time.sleep(0.05)

    def log_chunks(self, session_id: str, *, kernel_id: Optional[str] = None,
                   stream: str = "stdout", offset: int = 0,
                   follow: bool = False, poll_s: float = 0.2) -> Iterator[bytes]:
        """Stream a kernel's output as it arrives (session.logs). Without
        follow: what is there now; with follow: until the kernel ends."""
        while True:
            rep = LogsReply()
            req = LogsRequest(enc(session_id), enc(kernel_id), offset, 0,
                              enc(stream))
            d = self._exchange(TYPES["logs.reply"], rep, _logs, self.ptr,
                               ctypes.byref(rep), ctypes.byref(req))
            if d["data"]:
                yield d["data"]
            moved = d["next_offset"] != offset
            offset = d["next_offset"]
            if d["eof"] and not d["data"]:
                return
            if not moved:
                if not follow:
                    return
                time.sleep(poll_s)

    def logs(self, session_id: str, **kw: Any) -> bytes:
        """All output available now (see log_chunks)."""
        return b"".join(self.log_chunks(session_id, **kw))

    # -- cluster --------------------------------------------------------------
    def agent_admin(self, agent_id: str, action: str) -> Dict[str, Any]:
        """cordon, drain or uncordon an agent; its agent.list entry."""
        return self.request("admin.agent", {"agent_id": agent_id,
                                            "action": action})["agents"][0]

    def agents(self, *, resource_group: Optional[str] = None,
               include_lost: bool = False) -> List[Dict[str, Any]]:
        return self.request("agent.list", {"resource_group": resource_group,
                                           "include_lost": include_lost})["agents"]

    def quota_tree(self, resource_group: Optional[str] = None
                   ) -> List[Dict[str, Any]]:
        """admin.quota_tree: per resource group, domains -> projects ->
        users with their quota, use, borrowed and lent slots."""
        return self.request("admin.quota_tree",
                            {"resource_group": resource_group})["nodes"]

    def images(self, architecture: Optional[str] = None) -> List[Dict[str, Any]]:
        return self.request("image.list",
                            {"architecture": architecture})["images"]

    def admin(self, kind: str, op: str, **fields: Any) -> List[Dict[str, Any]]:
        """admin.<kind> (user, keypair, project, domain, resource_policy,
        resource_group, quota) with op create/update/delete/list and the
        object's fields; the resulting objects."""
        if kind not in ADMIN:
            raise ValueError(f"unknown admin kind {kind!r}; one of "
                             f"{sorted(ADMIN)}")
        if op not in ADMIN_OPS:
            raise ValueError(f"unknown admin op {op!r}; one of "
                             f"{sorted(ADMIN_OPS)}")
        tname, field, _obj, lst = ADMIN[kind]
        return self.request(tname, {"op": ADMIN_OPS[op], field: fields})[lst]
