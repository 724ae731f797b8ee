"""Python bindings for libsokovan (ctypes over the C ABI, libsokovan.so.0).

Areas: resource slots (Slots, Quantity); topology and node mapper
(Topology, Node, Placement); the cluster scheduler (Scheduler) and the
trace simulator (OpenbWorkload, JobTrace); the cluster client (Client,
through the C client library). Errors raise SokovanError subclasses named
after the SKV_E* codes (sokovan.errors).
"""
from __future__ import annotations

from . import errors
from ._lib import lib as _clib, fn as _fn, cp as _cp
from .errors import SokovanError
from .slots import Quantity, Slots
from .topo import Accelerator, Node, Placement, Plugin, Topology
from .sched import PassResult, PendingReason, Scheduler
from .sim import JobTrace, OpenbWorkload, sim_policies
from .client import Client

__all__ = ["errors", "SokovanError", "Quantity", "Slots", "Topology",
           "Accelerator", "Plugin", "Node", "Placement", "Scheduler",
           "PassResult", "PendingReason", "OpenbWorkload", "JobTrace",
           "sim_policies", "Client", "version", "library_path"]

_version_string = _fn("skv_version_string", _cp)


def version() -> str:
    """The loaded library's version string, e.g. '0.1.0'."""
    return _version_string().decode()


def library_path() -> str:
    """The file the library was loaded from (as given to dlopen)."""
    return str(_clib._name)
