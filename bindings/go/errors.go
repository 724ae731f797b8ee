package sokovan

/*
#include <sokovan/common.h>
*/
import "C"

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per SKV_E* code. Errors returned by this package
// match exactly one of them with errors.Is.
var (
	ErrInvalid   = newSentinel(C.SKV_EINVAL)
	ErrNoMem     = newSentinel(C.SKV_ENOMEM)
	ErrRange     = newSentinel(C.SKV_ERANGE)
	ErrNotFound  = newSentinel(C.SKV_ENOENT)
	ErrExist     = newSentinel(C.SKV_EEXIST)
	ErrNoSpace   = newSentinel(C.SKV_ENOSPC)
	ErrIO        = newSentinel(C.SKV_EIO)
	ErrProto     = newSentinel(C.SKV_EPROTO)
	ErrVersion   = newSentinel(C.SKV_EVERSION)
	ErrNotSup    = newSentinel(C.SKV_ENOTSUP)
	ErrPerm      = newSentinel(C.SKV_EPERM)
	ErrBusy      = newSentinel(C.SKV_EBUSY)
	ErrState     = newSentinel(C.SKV_ESTATE)
	ErrTimedOut  = newSentinel(C.SKV_ETIMEDOUT)
	ErrAuth      = newSentinel(C.SKV_EAUTH)
	ErrSys       = newSentinel(C.SKV_ESYS)
	ErrCanceled  = newSentinel(C.SKV_ECANCELED)
	sentinels    = []*sentinel{}
	errUnknownRC = errors.New("sokovan: unknown error code")
)

// sentinel is the comparable target of errors.Is for one code.
type sentinel struct {
	code int
	name string
}

func newSentinel(code C.int) *sentinel {
	s := &sentinel{code: int(code), name: C.GoString(C.skv_err_name(code))}
	sentinels = append(sentinels, s)
	return s
}

func (s *sentinel) Error() string {
	return s.name + ": " + C.GoString(C.skv_strerror(C.int(s.code)))
}

// Error is a failed library call: the SKV_E* code, its name, the Go
// method that called it, and the library's message naming the culprit.
type Error struct {
	Code    int    // negative SKV_E* value
	Name    string // "SKV_EINVAL", ...
	Op      string // e.g. "Scheduler.Submit"
	Message string // skv_error.message; may be empty
	Errno   int    // skv_error.sys_errno for SKV_ESYS/SKV_EIO
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = C.GoString(C.skv_strerror(C.int(e.Code)))
	}
	return fmt.Sprintf("sokovan: %s: %s (%s)", e.Op, msg, e.Name)
}

// Unwrap gives the sentinel of the code, so errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error {
	for _, s := range sentinels {
		if s.code == e.Code {
			return s
		}
	}
	return errUnknownRC
}

// newError converts a failed return code and its skv_error.
func newError(op string, rc C.int, cerr *C.skv_error) error {
	e := &Error{Code: int(rc), Name: C.GoString(C.skv_err_name(rc)), Op: op}
	if cerr != nil {
		e.Message = C.GoString(&cerr.message[0])
		e.Errno = int(cerr.sys_errno)
	}
	return e
}

// check returns nil for rc >= 0, else the *Error.
func check(op string, rc C.int, cerr *C.skv_error) error {
	if rc >= 0 {
		return nil
	}
	return newError(op, rc, cerr)
}

// goError is an error raised on the Go side with a library code (bad
// arguments this package refuses before calling C, closed handles).
func goError(op string, code C.int, format string, args ...any) error {
	return &Error{Code: int(code), Name: C.GoString(C.skv_err_name(code)),
		Op: op, Message: fmt.Sprintf(format, args...)}
}

func closedError(op string) error {
	return goError(op, C.SKV_ESTATE, "use of a closed handle")
}
