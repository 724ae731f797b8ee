"""Python bindings for libsokovan (ctypes, no compilation needed).

Loads the shared library from $SOKOVAN_LIB, else the system's
libsokovan.so.0. Errors from the library raise SokovanError carrying the
SKV_E* code name and the library's message.
"""
import ctypes
import ctypes.util
import os

_MAJOR = 0


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("sys_errno", ctypes.c_int),
                ("message", ctypes.c_char * 256)]


class SokovanError(Exception):
    def __init__(self, code, name, message):
        super().__init__(f"{name}: {message}")
        self.code = code
        self.name = name
        self.message = message


def _load():
    path = os.environ.get("SOKOVAN_LIB") or f"libsokovan.so.{_MAJOR}"
    lib = ctypes.CDLL(path)
    lib.skv_version.restype = ctypes.c_uint
    lib.skv_version_string.restype = ctypes.c_char_p
    lib.skv_err_name.restype = ctypes.c_char_p
    lib.skv_err_name.argtypes = [ctypes.c_int]
    vp = ctypes.c_void_p
    ep = ctypes.POINTER(_Error)
    sigs = {
        "skv_slots_parse": [ctypes.POINTER(vp), ctypes.c_char_p, vp, ep],
        "skv_slots_format": [ctypes.POINTER(ctypes.c_char_p), vp, ep],
        "skv_slots_add": [vp, vp, ep],
        "skv_slots_sub": [vp, vp, ctypes.c_uint, ep],
        "skv_slots_fits": [vp, vp],
        "skv_slots_eq": [vp, vp],
        "skv_slots_get": [vp, ctypes.c_char_p],
        "skv_slots_dup": [ctypes.POINTER(vp), vp, ep],
        "skv_slots_free": [vp],
        "skv_free": [vp],
    }
    for name, args in sigs.items():
        getattr(lib, name).argtypes = args
    lib.skv_slots_get.restype = ctypes.c_int64
    lib.skv_slots_free.restype = None
    lib.skv_free.restype = None
    if lib.skv_version() >> 16 != _MAJOR:
        raise ImportError("libsokovan major version mismatch")
    return lib


_lib = _load()


def _check(rc, err):
    if rc != 0:
        name = _lib.skv_err_name(rc).decode()
        raise SokovanError(rc, name, err.message.decode(errors="replace"))


def version():
    """The loaded library's version string, e.g. '0.1.0'."""
    return _lib.skv_version_string().decode()


class Slots:
    """A resource-slot vector such as 'cpu=4,mem=16g,cuda.shares=0.5'."""

    def __init__(self, text=""):
        handle = ctypes.c_void_p()
        err = _Error()
        _check(_lib.skv_slots_parse(ctypes.byref(handle), text.encode(),
                                    None, ctypes.byref(err)), err)
        self._h = handle

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.skv_slots_free(self._h)
            self._h = None

    def __str__(self):
        out = ctypes.c_char_p()
        err = _Error()
        _check(_lib.skv_slots_format(ctypes.byref(out), self._h,
                                     ctypes.byref(err)), err)
        text = out.value.decode()
        _lib.skv_free(ctypes.cast(out, ctypes.c_void_p))
        return text

    def __repr__(self):
        return f"Slots({str(self)!r})"

    def __getitem__(self, name):
        """Raw fixed-point quantity: milli-units for counts, bytes for bytes."""
        return _lib.skv_slots_get(self._h, name.encode())

    def __eq__(self, other):
        return isinstance(other, Slots) and bool(_lib.skv_slots_eq(self._h, other._h))

    def _copy(self):
        new = Slots.__new__(Slots)
        handle = ctypes.c_void_p()
        err = _Error()
        _check(_lib.skv_slots_dup(ctypes.byref(handle), self._h,
                                  ctypes.byref(err)), err)
        new._h = handle
        return new

    def __add__(self, other):
        res = self._copy()
        err = _Error()
        _check(_lib.skv_slots_add(res._h, other._h, ctypes.byref(err)), err)
        return res

    def __sub__(self, other):
        res = self._copy()
        err = _Error()
        _check(_lib.skv_slots_sub(res._h, other._h, 0, ctypes.byref(err)), err)
        return res

    def fits(self, available):
        """True when this request fits into `available`."""
        return bool(_lib.skv_slots_fits(self._h, available._h))
