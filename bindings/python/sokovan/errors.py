"""Exceptions: one class per SKV_E* code, all under SokovanError.

Each carries .code (the negative number), .name ("SKV_EINVAL"), .message
(the library's detail, naming the culprit) and .sys_errno (for SKV_ESYS and
SKV_EIO). Codes with a natural Python counterpart also derive from it
(SKV_EINVAL and SKV_ERANGE are ValueErrors, SKV_ENOENT a LookupError), so
generic handlers keep working.
"""
from __future__ import annotations

from typing import Dict, Type


class SokovanError(Exception):
    """Base of every error the library reports."""

    code: int = 0

    def __init__(self, code: int, name: str, message: str,
                 sys_errno: int = 0) -> None:
        super().__init__(f"{name}: {message}")
        self.code = code
        self.name = name
        self.message = message
        self.sys_errno = sys_errno


# (code, SKV name, class name, extra Python base)
_TABLE = [
    (-1, "SKV_EINVAL", "InvalidArgumentError", ValueError),
    (-2, "SKV_ENOMEM", "OutOfMemoryError", MemoryError),
    (-3, "SKV_ERANGE", "RangeError", ValueError),
    (-4, "SKV_ENOENT", "NotFoundError", LookupError),
    (-5, "SKV_EEXIST", "ExistsError", None),
    (-6, "SKV_ENOSPC", "NoSpaceError", None),
    (-7, "SKV_EIO", "IOFailedError", None),
    (-8, "SKV_EPROTO", "ProtocolError", None),
    (-9, "SKV_EVERSION", "VersionError", None),
    (-10, "SKV_ENOTSUP", "NotSupportedError", None),
    (-11, "SKV_EPERM", "PermissionDeniedError", None),
    (-12, "SKV_EBUSY", "BusyError", None),
    (-13, "SKV_ESTATE", "StateError", None),
    (-14, "SKV_ETIMEDOUT", "TimedOutError", None),
    (-15, "SKV_EAUTH", "AuthError", None),
    (-16, "SKV_ESYS", "SystemCallError", None),
    (-17, "SKV_ECANCELED", "CanceledError", None),
]

BY_CODE: Dict[int, Type[SokovanError]] = {}
BY_NAME: Dict[str, Type[SokovanError]] = {}
for _code, _name, _cls, _extra in _TABLE:
    _bases = (SokovanError,) if _extra is None else (SokovanError, _extra)
    _klass = type(_cls, _bases, {"code": _code, "__module__": __name__,
                                 "__doc__": f"{_name} ({_code})."})
    globals()[_cls] = _klass
    globals()[_name[4:]] = _code          # EINVAL = -1, ...
    BY_CODE[_code] = _klass
    BY_NAME[_name] = _klass

# Explicit names for type checkers and `from sokovan.errors import ...`.
InvalidArgumentError: Type[SokovanError] = BY_CODE[-1]
OutOfMemoryError: Type[SokovanError] = BY_CODE[-2]
RangeError: Type[SokovanError] = BY_CODE[-3]
NotFoundError: Type[SokovanError] = BY_CODE[-4]
ExistsError: Type[SokovanError] = BY_CODE[-5]
NoSpaceError: Type[SokovanError] = BY_CODE[-6]
IOFailedError: Type[SokovanError] = BY_CODE[-7]
ProtocolError: Type[SokovanError] = BY_CODE[-8]
VersionError: Type[SokovanError] = BY_CODE[-9]
NotSupportedError: Type[SokovanError] = BY_CODE[-10]
PermissionDeniedError: Type[SokovanError] = BY_CODE[-11]
BusyError: Type[SokovanError] = BY_CODE[-12]
StateError: Type[SokovanError] = BY_CODE[-13]
TimedOutError: Type[SokovanError] = BY_CODE[-14]
AuthError: Type[SokovanError] = BY_CODE[-15]
SystemCallError: Type[SokovanError] = BY_CODE[-16]
CanceledError: Type[SokovanError] = BY_CODE[-17]
EBUSY = -12


def from_code(code: int, name: str, message: str,
              sys_errno: int = 0) -> SokovanError:
    """The exception for a code; unknown codes give the base class."""
    return BY_CODE.get(code, SokovanError)(code, name, message, sys_errno)
