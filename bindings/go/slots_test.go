package sokovan

import (
	"errors"
	"math"
	"testing"
)

func TestSlotsParseGetFormat(t *testing.T) {
	s, err := ParseSlots("mem=16g, cpu=4,cuda.shares=0.5")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if q, ok := s.Get("cpu"); !ok || q != 4000 {
		t.Errorf("cpu = %d %v", q, ok)
	}
	if k, q, ok := s.Lookup("mem"); !ok || k != KindBytes || q != 16<<30 {
		t.Errorf("mem = %v %d %v", k, q, ok)
	}
	if q, ok := s.Get("gpu"); ok || q != 0 {
		t.Errorf("missing slot reported present: %d %v", q, ok)
	}
	if got := s.String(); got != "cpu=4,cuda.shares=0.5,mem=16g" {
		t.Errorf("String = %q", got)
	}
	e := s.Entries()
	if len(e) != 3 || e[0].Name != "cpu" || e[2].Name != "mem" || e[1].Qty != 500 {
		t.Errorf("Entries = %+v", e)
	}
	if err := s.Set("cpu", KindCount, 2500); err != nil {
		t.Fatal(err)
	}
	s.Remove("cuda.shares")
	if s.String() != "cpu=2.5,mem=16g" || s.Len() != 2 {
		t.Errorf("after Set/Remove: %q", s)
	}
	if err := s.Set("Bad Name", KindCount, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad name: %v", err)
	}
	for _, bad := range []string{"cpu=", "cpu=1,cpu=2", "=3", "cpu=-1"} {
		if x, err := ParseSlots(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseSlots(%q) = %v, %v", bad, x, err)
		}
	}
}

func TestQty(t *testing.T) {
	q, err := ParseQty("0.125", KindCount)
	if err != nil || q != 125 {
		t.Fatalf("ParseQty = %d %v", q, err)
	}
	if FormatQty(3<<30, KindBytes) != "3g" || FormatQty(1500, KindCount) != "1.5" {
		t.Errorf("FormatQty: %s %s", FormatQty(3<<30, KindBytes), FormatQty(1500, KindCount))
	}
	if _, err := ParseQty("1.5", KindUnique); !errors.Is(err, ErrInvalid) {
		t.Errorf("fractional unique: %v", err)
	}
	if KindBytes.String() != "bytes" {
		t.Errorf("Kind.String = %s", KindBytes)
	}
}

func TestSlotsArithmetic(t *testing.T) {
	a := MustParseSlots("cpu=4,mem=8g")
	b := MustParseSlots("cpu=1,mem=1g,gpu=1")
	defer a.Close()
	defer b.Close()
	if err := a.Add(b); err != nil || a.String() != "cpu=5,gpu=1,mem=9g" {
		t.Fatalf("Add: %v %q", err, a)
	}
	big := MustParseSlots("cpu=100")
	defer big.Close()
	before := a.String()
	if err := a.Sub(big, false); !errors.Is(err, ErrRange) || a.String() != before {
		t.Errorf("Sub below zero: %v, a=%q (must be unchanged)", err, a)
	}
	if err := a.Sub(big, true); err != nil {
		t.Fatal(err)
	}
	if q, _ := a.Get("cpu"); q != 0 {
		t.Errorf("clamped cpu = %d", q)
	}
	c := MustParseSlots("cpu=2,mem=4g")
	defer c.Close()
	d, _ := c.Clone()
	defer d.Close()
	// min keeps the keys of both (missing reads as 0)
	if err := d.Min(b); err != nil || d.String() != "cpu=1,gpu=0,mem=1g" {
		t.Errorf("Min: %v %q", err, d)
	}
	if err := d.Max(c); err != nil || !d.Equal(c) {
		t.Errorf("Max: %v %q", err, d)
	}
	if err := d.Scale(3); err != nil || d.String() != "cpu=6,gpu=0,mem=12g" {
		t.Errorf("Scale: %v %q", err, d)
	}
	if err := d.Scale(math.MaxInt64); !errors.Is(err, ErrRange) {
		t.Errorf("Scale overflow: %v", err)
	}
	mix := MustParseSlots("mem=1")
	defer mix.Close()
	kindClash, _ := NewSlots()
	defer kindClash.Close()
	kindClash.Set("mem", KindCount, 1000)
	if err := mix.Add(kindClash); !errors.Is(err, ErrInvalid) {
		t.Errorf("kind mismatch: %v", err)
	}
}

func TestSlotsComparison(t *testing.T) {
	req := MustParseSlots("cpu=2,mem=4g")
	avail := MustParseSlots("cpu=1,mem=8g")
	defer req.Close()
	defer avail.Close()
	if Fits(req, avail) || req.LessEqual(avail) {
		t.Error("cpu=2 fits in cpu=1")
	}
	if name, short, ok := FirstShort(req, avail); !ok || name != "cpu" || short != 1000 {
		t.Errorf("FirstShort = %s %d %v", name, short, ok)
	}
	if !Fits(nil, avail) || (*Slots)(nil).IsZero() != true {
		t.Error("nil request must fit and be zero")
	}
	share, slot, err := DominantShare(req, MustParseSlots("cpu=8,mem=8g"))
	if err != nil || slot != "mem" || share != 0.5 {
		t.Errorf("DominantShare = %v %s %v", share, slot, err)
	}
}
