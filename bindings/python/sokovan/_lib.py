"""Loading libsokovan and calling it: the one place that touches ctypes
setup, so every other module sees typed functions and raises the same
exceptions.

Where the library comes from, first match wins:
  1. $SOKOVAN_LIB (a path to libsokovan.so.0 or any file name dlopen takes);
  2. pkg-config: <libdir of sokovan.pc>/libsokovan.so.<major>;
  3. the installed soname, libsokovan.so.<major>, through the dynamic loader.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import weakref
from typing import Any, Callable, List, Optional, Sequence

from . import errors

MAJOR = 0
SONAME = f"libsokovan.so.{MAJOR}"

vp = ctypes.c_void_p
cp = ctypes.c_char_p
i64 = ctypes.c_int64
u32 = ctypes.c_uint32
u64 = ctypes.c_uint64
size_t = ctypes.c_size_t
c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_bool = ctypes.c_bool


class Error(ctypes.Structure):
    """struct skv_error (common.h): code, errno, message[256]."""
    _fields_ = [("code", ctypes.c_int), ("sys_errno", ctypes.c_int),
                ("message", ctypes.c_char * 256)]


ep = ctypes.POINTER(Error)


def _pkg_config_libdir() -> Optional[str]:
    exe = shutil.which(os.environ.get("PKG_CONFIG", "pkg-config"))
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--variable=libdir", "sokovan"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = out.stdout.strip()
    return libdir if out.returncode == 0 and libdir else None


def candidates() -> List[str]:
    """The places tried, in order (see the module docstring)."""
    env = os.environ.get("SOKOVAN_LIB")
    if env:
        # An explicit choice is never silently replaced by another copy.
        return [env]
    found = []
    libdir = _pkg_config_libdir()
    if libdir:
        found.append(os.path.join(libdir, SONAME))
    found.append(SONAME)
    return found


def _open() -> ctypes.CDLL:
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path}: no such file")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path}: {exc}")
    raise ImportError("sokovan: cannot load libsokovan (set SOKOVAN_LIB, "
                      "or install it so pkg-config or the loader finds it): "
                      + "; ".join(tried))


lib = _open()
lib.skv_version.restype = ctypes.c_uint
lib.skv_version.argtypes = []
if lib.skv_version() >> 16 != MAJOR:
    raise ImportError(f"sokovan: {lib._name} is major version "
                      f"{lib.skv_version() >> 16}, this binding needs {MAJOR}")


def fn(name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
    """Declare one C function's signature and return it."""
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_err_name = fn("skv_err_name", cp, c_int)
_strerror = fn("skv_strerror", cp, c_int)
free = fn("skv_free", None, vp)


def raise_code(rc: int, err: Optional[Error] = None,
               fallback: str = "") -> None:
    """Raise the exception class of code rc with the library's message."""
    name = _err_name(rc).decode()
    msg = err.message.decode(errors="replace") if err is not None else ""
    raise errors.from_code(rc, name, msg or fallback or
                           _strerror(rc).decode(),
                           err.sys_errno if err is not None else 0)


def call(f: Callable[..., int], *args: Any) -> int:
    """Call f(*args, &err) and raise on a negative return."""
    err = Error()
    rc = f(*args, ctypes.byref(err))
    if rc < 0:
        raise_code(rc, err)
    return rc


def enc(text: Optional[str]) -> Optional[bytes]:
    """str -> bytes for char * arguments (None stays NULL)."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text.encode()


def dec(raw: Optional[bytes]) -> Optional[str]:
    return None if raw is None else raw.decode(errors="replace")


def take_string(ptr: ctypes.c_char_p) -> str:
    """A library-allocated string: copy it out, then skv_free it."""
    try:
        return (ptr.value or b"").decode(errors="replace")
    finally:
        free(ctypes.cast(ptr, vp))


def str_array(items: Sequence[str], keep: list) -> Any:
    """A const char *const * array kept alive by keep."""
    arr = (cp * max(len(items), 1))(*[enc(s) for s in items])
    keep.append(arr)
    return arr


class Handle:
    """An owned library object: freed exactly once by close(), by `with`,
    or when garbage collected. Objects other handles borrow (a topology
    under a node) refuse to close while a borrower is open."""

    _free: Callable[[Any], None]

    def __init__(self, ptr: ctypes.c_void_p) -> None:
        self._ptr: Optional[ctypes.c_void_p] = ptr
        self._borrowers: "weakref.WeakSet[Handle]" = weakref.WeakSet()

    @property
    def ptr(self) -> ctypes.c_void_p:
        if not self._ptr:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._ptr

    @property
    def closed(self) -> bool:
        return not self._ptr

    def _lend(self, borrower: "Handle") -> None:
        self._borrowers.add(borrower)

    def close(self) -> None:
        """Free the C object now (idempotent)."""
        if not self._ptr:
            return
        busy = [b for b in self._borrowers if not b.closed]
        if busy:
            raise errors.BusyError(
                errors.EBUSY, "SKV_EBUSY",
                f"{type(self).__name__} is still used by "
                f"{type(busy[0]).__name__}: close that first")
        ptr, self._ptr = self._ptr, None
        type(self)._free(ptr)

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and any(not b.closed for b in self._borrowers):
            # Unwinding an error past a borrower that was never closed:
            # do not hide that error behind BusyError. The borrowers hold
            # this object, so it is freed after them, when they are.
            return
        self.close()

    def __del__(self) -> None:
        # At interpreter exit or after a failed __init__ nothing may be set.
        if getattr(self, "_ptr", None):
            ptr, self._ptr = self._ptr, None
            type(self)._free(ptr)
