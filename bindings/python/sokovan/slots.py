"""Resource slots (sokovan/slots.h): exact quantities and slot vectors."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

from . import _lib
from ._lib import call, cp, enc, ep, fn, i64, size_t, vp, c_int, c_uint

COUNT, BYTES, UNIQUE = 1, 2, 3
_KIND_NAMES = {COUNT: "count", BYTES: "bytes", UNIQUE: "unique"}
_KINDS = {v: k for k, v in _KIND_NAMES.items()}
SCALE = 1000
UNLIMITED = (1 << 63) - 1

_qty_parse = fn("skv_qty_parse", c_int, ctypes.POINTER(i64), cp, c_int, ep)
_qty_format = fn("skv_qty_format", c_int, cp, size_t, i64, c_int)
_new = fn("skv_slots_new", c_int, ctypes.POINTER(vp), ep)
_dup = fn("skv_slots_dup", c_int, ctypes.POINTER(vp), vp, ep)
_free = fn("skv_slots_free", None, vp)
_set = fn("skv_slots_set", c_int, vp, cp, c_int, i64, ep)
_remove = fn("skv_slots_remove", None, vp, cp)
_lookup = fn("skv_slots_lookup", c_int, vp, cp, ctypes.POINTER(c_int),
             ctypes.POINTER(i64))
_count = fn("skv_slots_count", size_t, vp)
_at = fn("skv_slots_at", c_int, vp, size_t, ctypes.POINTER(cp),
         ctypes.POINTER(c_int), ctypes.POINTER(i64))
_parse = fn("skv_slots_parse", c_int, ctypes.POINTER(vp), cp, vp, ep)
_format = fn("skv_slots_format", c_int, ctypes.POINTER(cp), vp, ep)
_add = fn("skv_slots_add", c_int, vp, vp, ep)
_sub = fn("skv_slots_sub", c_int, vp, vp, c_uint, ep)
_min = fn("skv_slots_min", c_int, vp, vp, ep)
_max = fn("skv_slots_max", c_int, vp, vp, ep)
_scale = fn("skv_slots_scale", c_int, vp, i64, ep)
_fits = fn("skv_slots_fits", c_int, vp, vp)
_eq = fn("skv_slots_eq", c_int, vp, vp)
_is_zero = fn("skv_slots_is_zero", c_int, vp)
_first_short = fn("skv_slots_first_short", c_int, vp, vp, ctypes.POINTER(cp),
                  ctypes.POINTER(i64))
_dominant = fn("skv_slots_dominant_share", c_int, ctypes.POINTER(ctypes.c_double),
               ctypes.POINTER(cp), vp, vp, ep)


def _kind_of(kind: Union[str, int]) -> int:
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown slot kind {kind!r} "
                             "(count, bytes or unique)")
        return _KINDS[kind]
    if kind not in _KIND_NAMES:
        raise ValueError(f"unknown slot kind {kind!r}")
    return int(kind)


def default_kind(name: str) -> str:
    """The kind the library gives a name without a registry."""
    return "bytes" if name == "mem" or name.endswith(".mem") else "count"


class Quantity:
    """An exact amount of one slot kind: `raw` is the library's fixed-point
    value (milli-units for count/unique, bytes for bytes). str() gives the
    canonical text ("0.5", "16g", "unlimited"); .value the number in units
    (float cores/GPUs, int bytes)."""

    __slots__ = ("raw", "kind")

    def __init__(self, raw: int, kind: str = "count") -> None:
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise TypeError(f"raw quantity must be int, got {type(raw).__name__}")
        _kind_of(kind)
        self.raw = raw
        self.kind = kind

    @classmethod
    def parse(cls, text: str, kind: str = "count") -> "Quantity":
        """"4", "0.25" (count), "16g", "512MiB" (bytes), "unlimited"."""
        out = i64()
        call(_qty_parse, ctypes.byref(out), enc(text), _kind_of(kind))
        return cls(out.value, kind)

    @classmethod
    def of(cls, value: Union[int, float, str, "Quantity"],
           kind: str = "count") -> "Quantity":
        """From units: 2.5 cores, 1 GPU, 17179869184 bytes, or text."""
        if isinstance(value, Quantity):
            return value
        if isinstance(value, str):
            return cls.parse(value, kind)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"a quantity is a number, str or Quantity, "
                            f"not {type(value).__name__}")
        if kind == "bytes":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(f"{value} bytes is not a whole number")
            return cls(int(value), kind)
        milli = round(value * SCALE)
        if abs(milli - value * SCALE) > 1e-6:
            raise ValueError(f"{value} is finer than the 0.001 quantum")
        return cls(int(milli), kind)

    @property
    def unlimited(self) -> bool:
        return self.raw == UNLIMITED

    @property
    def value(self) -> Union[int, float]:
        if self.unlimited:
            return float("inf")
        return self.raw if self.kind == "bytes" else self.raw / SCALE

    def __str__(self) -> str:
        buf = ctypes.create_string_buffer(32)
        n = _qty_format(buf, 32, self.raw, _kind_of(self.kind))
        if n < 0:
            _lib.raise_code(n)
        return buf.value.decode()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, {self.kind!r})"

    def __int__(self) -> int:
        return self.raw

    def __float__(self) -> float:
        return float(self.value)

    def _other(self, other: object) -> int:
        if isinstance(other, Quantity):
            if other.kind != self.kind:
                raise TypeError(f"cannot mix {self.kind} and {other.kind} "
                                "quantities")
            return other.raw
        raise TypeError(f"cannot compare Quantity with {type(other).__name__}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.kind == other.kind and self.raw == other.raw

    def __hash__(self) -> int:
        return hash((self.raw, self.kind))

    def __lt__(self, other: "Quantity") -> bool:
        return self.raw < self._other(other)

    def __le__(self, other: "Quantity") -> bool:
        return self.raw <= self._other(other)

    def __gt__(self, other: "Quantity") -> bool:
        return self.raw > self._other(other)

    def __ge__(self, other: "Quantity") -> bool:
        return self.raw >= self._other(other)


SlotsLike = Union[str, Mapping[str, Any], "Slots"]


class Slots(_lib.Handle):
    """A slot vector such as Slots("cpu=4,mem=16g,cuda.shares=0.5") or
    Slots({"cpu": 4, "mem": "16g"}). A mapping from slot name to Quantity:
    a missing name raises KeyError (use .get() for the library's "missing
    reads as 0"). Operators: + - (new vectors), <= / fits(), ==, * int."""

    _free = _free

    def __init__(self, spec: Optional[SlotsLike] = None, *,
                 registry: Optional[Any] = None) -> None:
        handle = vp()
        if spec is None or isinstance(spec, str):
            reg = registry._registry_ptr() if registry is not None else None
            call(_parse, ctypes.byref(handle), enc(spec or ""), reg)
            super().__init__(handle)
        elif isinstance(spec, Slots):
            call(_dup, ctypes.byref(handle), spec.ptr)
            super().__init__(handle)
        elif isinstance(spec, Mapping):
            call(_new, ctypes.byref(handle))
            super().__init__(handle)
            for name, value in spec.items():
                self[name] = value
        else:
            raise TypeError("Slots() takes a str, a mapping or Slots, not "
                            f"{type(spec).__name__}")

    @classmethod
    def _adopt(cls, ptr: vp) -> "Slots":
        """Own a vector the library returned."""
        obj = cls.__new__(cls)
        _lib.Handle.__init__(obj, ptr)
        return obj

    @staticmethod
    def coerce(value: SlotsLike) -> "Slots":
        return value if isinstance(value, Slots) else Slots(value)

    # -- mapping ----------------------------------------------------------
    def __getitem__(self, name: str) -> Quantity:
        kind, qty = c_int(), i64()
        if _lookup(self.ptr, enc(name), ctypes.byref(kind), ctypes.byref(qty)):
            raise KeyError(name)
        return Quantity(qty.value, _KIND_NAMES[kind.value])

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __setitem__(self, name: str, value: Union[int, float, str, Quantity]) -> None:
        kind = value.kind if isinstance(value, Quantity) else default_kind(name)
        q = Quantity.of(value, kind)
        call(_set, self.ptr, enc(name), _kind_of(q.kind), q.raw)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        _remove(self.ptr, enc(name))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return _lookup(self.ptr, enc(name), None, None) == 0

    def __len__(self) -> int:
        return int(_count(self.ptr))

    def items(self) -> Iterator[Tuple[str, Quantity]]:
        """(name, Quantity) in name order."""
        name, kind, qty = cp(), c_int(), i64()
        for i in range(len(self)):
            call_rc = _at(self.ptr, i, ctypes.byref(name), ctypes.byref(kind),
                          ctypes.byref(qty))
            if call_rc:
                _lib.raise_code(call_rc)
            yield name.value.decode(), Quantity(qty.value, _KIND_NAMES[kind.value])

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in list(self.items()))

    def keys(self) -> Iterator[str]:
        return iter(self)

    def to_dict(self) -> Dict[str, str]:
        """{name: canonical text}, e.g. {"cpu": "4", "mem": "16g"}."""
        return {k: str(v) for k, v in self.items()}

    # -- text ---------------------------------------------------------------
    def __str__(self) -> str:
        out = cp()
        call(_format, ctypes.byref(out), self.ptr)
        return _lib.take_string(out)

    def __repr__(self) -> str:
        return f"Slots({str(self)!r})"

    # -- arithmetic -----------------------------------------------------------
    def copy(self) -> "Slots":
        return Slots(self)

    def _binary(self, other: object, op: Any, *extra: Any) -> Any:
        if not isinstance(other, Slots):
            return NotImplemented
        res = self.copy()
        call(op, res.ptr, other.ptr, *extra)
        return res

    def __add__(self, other: object) -> "Slots":
        return self._binary(other, _add)

    def __sub__(self, other: object) -> "Slots":
        """Raises RangeError (SKV_ERANGE) when a quantity would go below 0."""
        return self._binary(other, _sub, 0)

    def sub_clamped(self, other: "Slots") -> "Slots":
        """self - other with negative results clamped to 0."""
        return self._binary(self._check(other), _sub, 1)

    def minimum(self, other: "Slots") -> "Slots":
        return self._binary(self._check(other), _min)

    def maximum(self, other: "Slots") -> "Slots":
        return self._binary(self._check(other), _max)

    def __mul__(self, factor: object) -> "Slots":
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        res = self.copy()
        call(_scale, res.ptr, factor)
        return res

    __rmul__ = __mul__

    @staticmethod
    def _check(other: object) -> "Slots":
        if not isinstance(other, Slots):
            raise TypeError(f"expected Slots, got {type(other).__name__}")
        return other

    # -- comparison -----------------------------------------------------------
    def fits(self, available: "Slots") -> bool:
        """True when this request fits into `available`."""
        return bool(_fits(self.ptr, self._check(available).ptr))

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Slots):
            return NotImplemented
        return bool(_fits(self.ptr, other.ptr))

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Slots):
            return NotImplemented
        return bool(_fits(other.ptr, self.ptr))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Slots):
            return NotImplemented
        return bool(_eq(self.ptr, other.ptr))

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __bool__(self) -> bool:
        return not _is_zero(self.ptr)

    def first_short(self, available: "Slots") -> Optional[Tuple[str, Quantity]]:
        """The first slot short in `available` and by how much, or None."""
        name, short = cp(), i64()
        if not _first_short(self.ptr, self._check(available).ptr,
                            ctypes.byref(name), ctypes.byref(short)):
            return None
        slot = name.value.decode()
        kind = self[slot].kind if slot in self else default_kind(slot)
        return slot, Quantity(short.value, kind)

    def dominant_share(self, capacity: "Slots") -> Tuple[float, Optional[str]]:
        """DRF dominant share against capacity: (share, slot name)."""
        share, slot = ctypes.c_double(), cp()
        call(_dominant, ctypes.byref(share), ctypes.byref(slot), self.ptr,
             self._check(capacity).ptr)
        return share.value, _lib.dec(slot.value)
