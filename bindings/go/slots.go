package sokovan

/*
#include <stdlib.h>
#include <sokovan/slots.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Qty is a quantity in the library's fixed point: milli-units for counts
// (cpu=0.5 is 500), exact bytes for byte kinds.
type Qty int64

// Quantity limits (SKV_QTY_*).
const (
	QtyScale     Qty = C.SKV_QTY_SCALE
	QtyUnlimited Qty = C.SKV_QTY_UNLIMITED
	QtyMax       Qty = C.SKV_QTY_MAX
)

// Kind is a slot kind.
type Kind int

// Slot kinds (skv_slot_kind).
const (
	KindCount  Kind = C.SKV_SLOT_COUNT
	KindBytes  Kind = C.SKV_SLOT_BYTES
	KindUnique Kind = C.SKV_SLOT_UNIQUE
)

func (k Kind) String() string { return C.GoString(C.skv_slot_kind_name(C.skv_slot_kind(k))) }

// ParseQty parses one quantity of a kind ("0.5", "16g", "unlimited").
func ParseQty(text string, kind Kind) (Qty, error) {
	cs := C.CString(text)
	defer C.free(unsafe.Pointer(cs))
	var q C.skv_qty
	var cerr C.skv_error
	if err := check("ParseQty", C.skv_qty_parse(&q, cs, C.skv_slot_kind(kind), &cerr), &cerr); err != nil {
		return 0, err
	}
	return Qty(q), nil
}

// FormatQty formats a quantity as the library does ("4", "0.5", "16g").
func FormatQty(q Qty, kind Kind) string {
	var buf [C.SKV_QTY_FORMAT_MAX]C.char
	if C.skv_qty_format(&buf[0], C.size_t(len(buf)), C.skv_qty(q), C.skv_slot_kind(kind)) < 0 {
		return "?"
	}
	return C.GoString(&buf[0])
}

// Slots is a vector of resource slots (skv_slots). Like most Go values it
// is not safe for concurrent mutation; Close it when done.
type Slots struct{ p *C.skv_slots }

// Entry is one slot of a vector.
type Entry struct {
	Name string
	Kind Kind
	Qty  Qty
}

func wrapSlots(p *C.skv_slots) *Slots {
	s := &Slots{p: p}
	runtime.SetFinalizer(s, (*Slots).Close)
	return s
}

// NewSlots returns an empty vector.
func NewSlots() (*Slots, error) {
	var p *C.skv_slots
	var cerr C.skv_error
	if err := check("NewSlots", C.skv_slots_new(&p, &cerr), &cerr); err != nil {
		return nil, err
	}
	return wrapSlots(p), nil
}

// ParseSlots parses "cpu=4,mem=16g,cuda.shares=0.5" with the default kind
// rule (bytes for mem and *.mem, counts otherwise).
func ParseSlots(text string) (*Slots, error) {
	cs := C.CString(text)
	defer C.free(unsafe.Pointer(cs))
	var p *C.skv_slots
	var cerr C.skv_error
	if err := check("ParseSlots", C.skv_slots_parse(&p, cs, nil, &cerr), &cerr); err != nil {
		return nil, err
	}
	return wrapSlots(p), nil
}

// MustParseSlots is ParseSlots that panics on error (for literals).
func MustParseSlots(text string) *Slots {
	s, err := ParseSlots(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Close frees the vector. It is idempotent and accepts a nil receiver.
func (s *Slots) Close() error {
	if s == nil || s.p == nil {
		return nil
	}
	C.skv_slots_free(s.p)
	s.p = nil
	runtime.SetFinalizer(s, nil)
	return nil
}

// ptr is the C vector for reading; a nil *Slots reads as empty (NULL).
func (s *Slots) ptr(op string) (*C.skv_slots, error) {
	if s == nil {
		return nil, nil
	}
	if s.p == nil {
		return nil, closedError(op)
	}
	return s.p, nil
}

// mustPtr is ptr for a vector that has to exist (a destination).
func (s *Slots) mustPtr(op string) (*C.skv_slots, error) {
	if s == nil || s.p == nil {
		return nil, closedError(op)
	}
	return s.p, nil
}

// Clone returns an independent copy.
func (s *Slots) Clone() (*Slots, error) {
	src, err := s.mustPtr("Slots.Clone")
	if err != nil {
		return nil, err
	}
	var p *C.skv_slots
	var cerr C.skv_error
	if err := check("Slots.Clone", C.skv_slots_dup(&p, src, &cerr), &cerr); err != nil {
		return nil, err
	}
	return wrapSlots(p), nil
}

// Set inserts or replaces an entry.
func (s *Slots) Set(name string, kind Kind, q Qty) error {
	p, err := s.mustPtr("Slots.Set")
	if err != nil {
		return err
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var cerr C.skv_error
	return check("Slots.Set", C.skv_slots_set(p, cs, C.skv_slot_kind(kind), C.skv_qty(q), &cerr), &cerr)
}

// Remove deletes an entry if present.
func (s *Slots) Remove(name string) {
	if s == nil || s.p == nil {
		return
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.skv_slots_remove(s.p, cs)
}

// Lookup gives an entry's kind and quantity; ok is false when it is absent.
func (s *Slots) Lookup(name string) (kind Kind, q Qty, ok bool) {
	if s == nil || s.p == nil {
		return 0, 0, false
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var ck C.skv_slot_kind
	var cq C.skv_qty
	if C.skv_slots_lookup(s.p, cs, &ck, &cq) < 0 {
		return 0, 0, false
	}
	return Kind(ck), Qty(cq), true
}

// Get is the quantity of name; ok is false when the entry is absent (the
// C call's "0 when missing" is not an answer a caller can tell apart).
func (s *Slots) Get(name string) (q Qty, ok bool) {
	_, q, ok = s.Lookup(name)
	return q, ok
}

// Len is the number of entries (0 for nil or closed).
func (s *Slots) Len() int {
	if s == nil || s.p == nil {
		return 0
	}
	return int(C.skv_slots_count(s.p))
}

// Entries lists the entries in name order.
func (s *Slots) Entries() []Entry {
	n := s.Len()
	out := make([]Entry, 0, n)
	for i := 0; i < n; i++ {
		var name *C.char
		var ck C.skv_slot_kind
		var cq C.skv_qty
		if C.skv_slots_at(s.p, C.size_t(i), &name, &ck, &cq) < 0 {
			break
		}
		out = append(out, Entry{C.GoString(name), Kind(ck), Qty(cq)})
	}
	return out
}

// String is the canonical text form ("cpu=4,mem=16g"); "" when empty or
// closed.
func (s *Slots) String() string {
	if s == nil || s.p == nil {
		return ""
	}
	var out *C.char
	if C.skv_slots_format(&out, s.p, nil) < 0 {
		return "?"
	}
	defer C.skv_free(unsafe.Pointer(out))
	return C.GoString(out)
}

type slotsOp func(dst, src *C.skv_slots, cerr *C.skv_error) C.int

// apply runs dst op= other; dst is unchanged on error.
func (s *Slots) apply(op string, other *Slots, f slotsOp) error {
	dst, err := s.mustPtr(op)
	if err != nil {
		return err
	}
	src, err := other.ptr(op)
	if err != nil {
		return err
	}
	var cerr C.skv_error
	return check(op, f(dst, src, &cerr), &cerr)
}

// Add does s += other (ErrInvalid on kind mismatch, ErrRange on overflow).
func (s *Slots) Add(other *Slots) error {
	return s.apply("Slots.Add", other, func(d, o *C.skv_slots, e *C.skv_error) C.int {
		return C.skv_slots_add(d, o, e)
	})
}

// Sub does s -= other; going below zero is ErrRange unless clamp.
func (s *Slots) Sub(other *Slots, clamp bool) error {
	var flags C.unsigned
	if clamp {
		flags = C.SKV_SLOTS_CLAMP
	}
	return s.apply("Slots.Sub", other, func(d, o *C.skv_slots, e *C.skv_error) C.int {
		return C.skv_slots_sub(d, o, flags, e)
	})
}

// Min does s = min(s, other) per key (missing reads as 0).
func (s *Slots) Min(other *Slots) error {
	return s.apply("Slots.Min", other, func(d, o *C.skv_slots, e *C.skv_error) C.int {
		return C.skv_slots_min(d, o, e)
	})
}

// Max does s = max(s, other) per key.
func (s *Slots) Max(other *Slots) error {
	return s.apply("Slots.Max", other, func(d, o *C.skv_slots, e *C.skv_error) C.int {
		return C.skv_slots_max(d, o, e)
	})
}

// Scale does s *= factor (factor >= 0; ErrRange on overflow).
func (s *Slots) Scale(factor int64) error {
	dst, err := s.mustPtr("Slots.Scale")
	if err != nil {
		return err
	}
	var cerr C.skv_error
	return check("Slots.Scale", C.skv_slots_scale(dst, C.int64_t(factor), &cerr), &cerr)
}

// Fits reports whether request fits in available (nil reads as empty).
func Fits(request, available *Slots) bool {
	return C.skv_slots_fits(request.raw(), available.raw()) == 1
}

// Equal reports whether both have the same quantities (missing = 0).
func (s *Slots) Equal(other *Slots) bool { return C.skv_slots_eq(s.raw(), other.raw()) == 1 }

// LessEqual reports whether every quantity of s is <= that of other.
func (s *Slots) LessEqual(other *Slots) bool { return C.skv_slots_le(s.raw(), other.raw()) == 1 }

// IsZero reports whether every quantity is 0.
func (s *Slots) IsZero() bool { return C.skv_slots_is_zero(s.raw()) == 1 }

// FirstShort names the first slot (in name order) where request does not
// fit available, and by how much; ok is false when it fits.
func FirstShort(request, available *Slots) (name string, shortfall Qty, ok bool) {
	var cn *C.char
	var cq C.skv_qty
	if C.skv_slots_first_short(request.raw(), available.raw(), &cn, &cq) != 1 {
		return "", 0, false
	}
	return C.GoString(cn), Qty(cq), true
}

// DominantShare is the DRF dominant share of v against capacity, and the
// slot that gives it.
func DominantShare(v, capacity *Slots) (float64, string, error) {
	var share C.double
	var slot *C.char
	var cerr C.skv_error
	rc := C.skv_slots_dominant_share(&share, &slot, v.raw(), capacity.raw(), &cerr)
	if err := check("DominantShare", rc, &cerr); err != nil {
		return 0, "", err
	}
	name := ""
	if slot != nil {
		name = C.GoString(slot)
	}
	return float64(share), name, nil
}

// raw is the C pointer or NULL (nil and closed vectors read as empty,
// which the comparison functions accept).
func (s *Slots) raw() *C.skv_slots {
	if s == nil {
		return nil
	}
	return s.p
}
