// Package sokovan is the Go binding of libsokovan: resource slots and the
// scheduler, called through the library's C ABI with cgo.
//
// The library is found with pkg-config (sokovan.pc); set PKG_CONFIG_PATH to
// <prefix>/lib/pkgconfig for a non-system install, and LD_LIBRARY_PATH (or
// ldconfig) so the shared object is found at run time.
//
// Every handle has a Close method that frees its C memory at once; Close is
// idempotent and a finalizer frees a handle that was never closed, but only
// as a safety net: the garbage collector does not see C memory, so it may
// run late. Errors from the library carry its code: use errors.Is with the
// sentinel errors (ErrInvalid, ErrNotFound, ...) and errors.As with *Error.
package sokovan

/*
#cgo pkg-config: sokovan
#include <stdlib.h>
#include <sokovan/common.h>
*/
import "C"

import "unsafe"

// Version is the version string of the loaded library (not of the headers
// this package was built with).
func Version() string { return C.GoString(C.skv_version_string()) }

// cArena collects C allocations made to build one call's arguments: the C
// side must not keep Go pointers, so strings and arrays are copied into C
// memory and freed together after the call.
type cArena struct{ ptrs []unsafe.Pointer }

func (a *cArena) str(s string) *C.char {
	p := C.CString(s)
	a.ptrs = append(a.ptrs, unsafe.Pointer(p))
	return p
}

// optStr is str, but "" stays NULL (the library's "default" for optional names).
func (a *cArena) optStr(s string) *C.char {
	if s == "" {
		return nil
	}
	return a.str(s)
}

// alloc returns n zeroed bytes of C memory (at least 1, so it is never NULL).
func (a *cArena) alloc(n uintptr) unsafe.Pointer {
	if n == 0 {
		n = 1
	}
	p := C.calloc(1, C.size_t(n))
	if p == nil {
		panic("sokovan: out of C memory")
	}
	a.ptrs = append(a.ptrs, p)
	return p
}

func (a *cArena) free() {
	for _, p := range a.ptrs {
		C.free(p)
	}
	a.ptrs = nil
}
