package sokovan

import (
	"errors"
	"strings"
	"testing"
)

var allSentinels = []error{ErrInvalid, ErrNoMem, ErrRange, ErrNotFound, ErrExist,
	ErrNoSpace, ErrIO, ErrProto, ErrVersion, ErrNotSup, ErrPerm, ErrBusy,
	ErrState, ErrTimedOut, ErrAuth, ErrSys, ErrCanceled}

// Every code from SKV_EINVAL (-1) to SKV_ECANCELED (-17) matches exactly
// its own sentinel, which names the code.
func TestErrorCodesMapToOneSentinel(t *testing.T) {
	if len(sentinels) != 17 || len(allSentinels) != 17 {
		t.Fatalf("sentinels: %d, want 17", len(sentinels))
	}
	for code := -1; code >= -17; code-- {
		e := &Error{Code: code, Op: "test"}
		matched := 0
		for _, s := range allSentinels {
			if errors.Is(e, s) {
				matched++
				if s.(*sentinel).code != code {
					t.Errorf("code %d matched sentinel of %d", code, s.(*sentinel).code)
				}
			}
		}
		if matched != 1 {
			t.Errorf("code %d matched %d sentinels", code, matched)
		}
	}
	if !strings.HasPrefix(ErrNotFound.Error(), "SKV_ENOENT: ") {
		t.Errorf("ErrNotFound = %q", ErrNotFound)
	}
	if errors.Is(&Error{Code: -99}, ErrInvalid) {
		t.Error("unknown code matched ErrInvalid")
	}
}

// A failed library call carries the code, the Go method and the library's
// message naming the culprit.
func TestLibraryErrorWrapsMessage(t *testing.T) {
	_, err := ParseSlots("cpu=abc")
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) {
		t.Fatalf("ParseSlots(cpu=abc) = %v, want ErrInvalid only", err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not *Error", err)
	}
	if e.Name != "SKV_EINVAL" || e.Op != "ParseSlots" || !strings.Contains(e.Message, "cpu") {
		t.Errorf("error fields: %+v", e)
	}
	if !strings.Contains(err.Error(), e.Message) || !strings.Contains(err.Error(), "SKV_EINVAL") {
		t.Errorf("Error() = %q", err)
	}
}

func TestSchedulerErrorsByCode(t *testing.T) {
	s := cluster(t, nil)
	defer s.Close()
	req := MustParseSlots("cpu=1")
	defer req.Close()
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown group", s.Submit(SessionSpec{ID: "a", Group: "nope", Request: req}, 0), ErrNotFound},
		{"first submit", s.Submit(SessionSpec{ID: "a", Group: "g", Request: req}, 0), nil},
		{"duplicate id", s.Submit(SessionSpec{ID: "a", Group: "g", Request: req}, 0), ErrExist},
		{"forget pending", s.Forget("a"), ErrState},
		{"duplicate group", s.AddGroup("g", nil), ErrExist},
		{"unknown selector", s.AddGroup("h", &GroupOptions{Selector: "nope"}), ErrNotFound},
		{"no request", s.Submit(SessionSpec{ID: "b", Group: "g"}, 0), ErrInvalid},
	}
	for _, c := range cases {
		if c.want == nil && c.err != nil || c.want != nil && !errors.Is(c.err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.want)
		}
	}
	if _, err := s.State("ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("State(ghost) = %v", err)
	}
}

// Close is idempotent, accepts nil, and a closed handle refuses use with
// ErrState instead of touching freed memory.
func TestCloseIdempotent(t *testing.T) {
	sl := MustParseSlots("cpu=2")
	for i := 0; i < 3; i++ {
		if err := sl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := sl.Set("cpu", KindCount, 1); !errors.Is(err, ErrState) {
		t.Errorf("Set on closed = %v", err)
	}
	if _, err := sl.Clone(); !errors.Is(err, ErrState) {
		t.Errorf("Clone on closed = %v", err)
	}
	var nilSlots *Slots
	if nilSlots.Close() != nil || nilSlots.Len() != 0 {
		t.Error("nil *Slots")
	}
	s, err := NewScheduler(nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := s.AddGroup("g", nil); !errors.Is(err, ErrState) {
		t.Errorf("AddGroup on closed scheduler = %v", err)
	}
	if _, err := s.Pass(0, nil); !errors.Is(err, ErrState) {
		t.Errorf("Pass on closed scheduler = %v", err)
	}
	var nilSched *Scheduler
	if nilSched.Close() != nil {
		t.Error("nil *Scheduler")
	}
}
