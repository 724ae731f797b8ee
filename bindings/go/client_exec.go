package sokovan

/*
#include <stdlib.h>
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
	"unsafe"
)

// ExecRequest runs a command inside a running kernel (exec.start), as
// `sokovan exec` does without a terminal: the kernel's namespaces, cgroup,
// user and environment, on whichever agent holds it.
type ExecRequest struct {
	SessionID string
	KernelID  string // "" = the main kernel
	Argv      []string
	Env       map[string]string // added to / replacing the kernel's
	Workdir   string            // absolute; "" = the kernel's
	// Stdin is forwarded within the agent's credit; its EOF (or a read
	// error) is the command's end of input. nil: stdin is closed at once.
	// It is read on a goroutine that ends when a Read returns after the
	// exec is over (an os.Stdin that never returns keeps it).
	Stdin io.Reader
	// Stdout and Stderr receive the output as it arrives; nil discards it.
	// Output is acknowledged once written, so the command never runs more
	// than Window bytes ahead of a slow writer.
	Stdout, Stderr io.Writer
	Window         uint32 // output credit in bytes; 0 = 256 KiB
}

// ExecResult is how the command ended.
type ExecResult struct {
	Pid      int64 // the command's pid on its host
	ExitCode int32 // when Signal is 0
	Signal   int32 // the signal that ended it, else 0
}

// Exec runs r and waits until the command ends. The manager's refusals
// come back by code (ErrNotFound: no such session, kernel or command;
// ErrState: not running; ErrPerm: another user's session; ErrNotSup: the
// runtime cannot exec). An exec that sokovan ended (the kernel ended, the
// agent went away, ...) is ErrIO naming the reason, with the result so
// far. ctx is first checked once the command runs (an exec.start is
// always answered, within the client's timeout); when ctx ends, or a writer fails, the command is sent SIGKILL and
// Exec returns that error once the command is gone (or after the client's
// timeout). The client is held for the whole exec: other calls on it wait.
func (c *Client) Exec(ctx context.Context, r ExecRequest) (ExecResult, error) {
	const op = "Client.Exec"
	if len(r.Argv) == 0 {
		return ExecResult{}, goError(op, C.SKV_EINVAL, "no command (Argv is empty)")
	}
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("sokovan: %s: %w", op, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		return ExecResult{}, closedError(op)
	}
	c.execs++
	x := &execStream{c: c.p, op: op, r: r, id: "go-" + strconv.FormatUint(c.execs, 10),
		timeout: time.Duration(c.timeoutMs) * time.Millisecond}
	defer x.free()
	return x.run(ctx)
}

// execStream is one exec on a client held locked.
type execStream struct {
	c        *C.skv_client
	op       string
	r        ExecRequest
	id       string
	cid      *C.char
	credit   uint64 // stdin bytes we may send
	pending  []byte // stdin read but not yet sent (no credit)
	in       chan []byte
	inDone   chan struct{}
	inOpen   bool
	res      ExecResult
	exited   bool
	reason   string
	failure  error // ctx or a writer: why we killed it
	killedAt time.Time
	timeout  time.Duration // the client's; <= 0: none
}

func (x *execStream) free() {
	if x.inDone != nil {
		close(x.inDone)
	}
	if x.cid != nil {
		C.free(unsafe.Pointer(x.cid))
	}
}

func (x *execStream) run(ctx context.Context) (ExecResult, error) {
	x.cid = C.CString(x.id)
	// ctx is not checked until the command runs: an exec.start left
	// unanswered could still start a command nobody waits for.
	if err := x.start(); err != nil {
		return ExecResult{}, err
	}
	if x.r.Stdin == nil {
		if err := x.sendStdin(nil, true); err != nil {
			return x.res, err
		}
	} else {
		x.startReader()
	}
	for !x.exited {
		if err := x.step(ctx); err != nil {
			return x.res, err
		}
	}
	if x.failure != nil {
		return x.res, x.failure
	}
	if x.reason != "" {
		return x.res, goError(x.op, C.SKV_EIO, "%s", x.reason)
	}
	return x.res, nil
}

// start sends exec.start and waits for its answer (events for no exec of
// ours yet are skipped, as the CLI does).
func (x *execStream) start() error {
	var a cArena
	defer a.free()
	q := (*C.skv_proto_exec_start)(a.alloc(C.sizeof_skv_proto_exec_start))
	q.session_id, q.kernel_id, q.exec_id = a.str(x.r.SessionID), a.optStr(x.r.KernelID), x.cid
	q.argv, q.n_argv = strArray(&a, x.r.Argv), C.size_t(len(x.r.Argv))
	q.env, q.n_env = kvArray(&a, x.r.Env), C.size_t(len(x.r.Env))
	q.workdir, q.window = a.optStr(x.r.Workdir), C.uint32_t(x.r.Window)
	var rid C.uint64_t
	var cerr C.skv_error
	if err := check(x.op, C.skv_client_send(x.c, C.SKV_PROTO_REQUEST, C.SKV_PROTO_EXEC_START, unsafe.Pointer(q), &rid, &cerr), &cerr); err != nil {
		return err
	}
	for end := time.Now().Add(x.timeout); ; {
		var m C.skv_client_message
		got, err := x.recv(&m, 100)
		if err != nil {
			return err
		}
		if got == 0 {
			if x.timeout > 0 && time.Now().After(end) {
				return goError(x.op, C.SKV_ETIMEDOUT, "no answer to exec.start within %v", x.timeout)
			}
			continue
		}
		done, err := x.startAnswer(&m, rid)
		C.skv_client_message_free(&m)
		if done {
			return err
		}
	}
}

// recv waits up to ms for a message.
func (x *execStream) recv(m *C.skv_client_message, ms int) (int, error) {
	var cerr C.skv_error
	rc := C.skv_client_recv(x.c, C.int(ms), m, &cerr)
	if rc < 0 {
		return 0, newError(x.op, rc, &cerr)
	}
	return int(rc), nil
}

func (x *execStream) startAnswer(m *C.skv_client_message, rid C.uint64_t) (bool, error) {
	if m.kind != C.SKV_PROTO_RESPONSE || m.request_id != rid {
		return false, nil
	}
	switch m._type {
	case C.SKV_PROTO_ERROR:
		pe := (*C.skv_proto_error)(m.body)
		return true, goError(x.op, C.int(pe.code), "%s", optGoString(pe.message))
	case C.SKV_PROTO_EXEC_START_REPLY:
		rep := (*C.skv_proto_exec_start_reply)(m.body)
		x.credit, x.res.Pid = uint64(rep.window), int64(rep.pid)
		return true, nil
	}
	return true, goError(x.op, C.SKV_EPROTO, "the manager answered exec.start with '%s'",
		C.GoString(C.skv_proto_type_name(m._type)))
}

// startReader reads Stdin on its own goroutine (a Read may block).
func (x *execStream) startReader() {
	x.in, x.inDone, x.inOpen = make(chan []byte), make(chan struct{}), true
	go func(rd io.Reader, in chan<- []byte, done <-chan struct{}) {
		defer close(in)
		for {
			buf := make([]byte, 64<<10)
			n, err := rd.Read(buf)
			if n > 0 {
				select {
				case in <- buf[:n]:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}(x.r.Stdin, x.in, x.inDone)
}

// step: every message already there, then stdin within credit, then a
// short wait for the next message.
func (x *execStream) step(ctx context.Context) error {
	if x.failure == nil && ctx.Err() != nil {
		x.kill(fmt.Errorf("sokovan: %s: %w", x.op, ctx.Err()))
	}
	if x.failure != nil && x.timeout > 0 && time.Since(x.killedAt) > x.timeout {
		return x.failure // no exec.exit came: give up waiting
	}
	if err := x.drain(); err != nil || x.exited {
		return err
	}
	if err := x.feedStdin(); err != nil {
		return err
	}
	var m C.skv_client_message
	got, err := x.recv(&m, x.waitMs())
	if err != nil || got == 0 {
		return err
	}
	err = x.onMessage(&m)
	C.skv_client_message_free(&m)
	return err
}

// waitMs: short while stdin may have more to send, so it is not delayed.
func (x *execStream) waitMs() int {
	if x.inOpen && x.credit > 0 {
		return 20
	}
	return 100
}

func (x *execStream) drain() error {
	for !x.exited {
		var m C.skv_client_message
		got, err := x.recv(&m, 0)
		if err != nil || got == 0 {
			return err
		}
		err = x.onMessage(&m)
		C.skv_client_message_free(&m)
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *execStream) onMessage(m *C.skv_client_message) error {
	if m.kind != C.SKV_PROTO_EVENT || m.body == nil {
		return nil
	}
	switch m._type {
	case C.SKV_PROTO_EXEC_OUTPUT, C.SKV_PROTO_EXEC_STDIN_ACK, C.SKV_PROTO_EXEC_EXIT:
		// each of these bodies starts with its exec_id
		if id := *(**C.char)(m.body); id == nil || C.GoString(id) != x.id {
			return nil // a stray or late message of another exec
		}
	default:
		return nil // another event (a call skips them too)
	}
	switch m._type {
	case C.SKV_PROTO_EXEC_OUTPUT:
		return x.onOutput((*C.skv_proto_exec_data)(m.body))
	case C.SKV_PROTO_EXEC_STDIN_ACK:
		x.credit += uint64((*C.skv_proto_exec_ack)(m.body).bytes)
	case C.SKV_PROTO_EXEC_EXIT:
		e := (*C.skv_proto_exec_exit)(m.body)
		x.exited, x.reason = true, optGoString(e.reason)
		x.res.ExitCode, x.res.Signal = int32(e.exit_code), int32(e.signal)
	}
	return nil
}

func (x *execStream) onOutput(d *C.skv_proto_exec_data) error {
	if d.data_len == 0 || x.failure != nil {
		return nil
	}
	w := x.r.Stdout
	if optGoString(d.stream) == "stderr" {
		w = x.r.Stderr
	}
	if w != nil {
		if _, err := w.Write(C.GoBytes(unsafe.Pointer(d.data), C.int(d.data_len))); err != nil {
			x.kill(fmt.Errorf("sokovan: %s: writing output: %w", x.op, err))
			return nil
		}
	}
	ack := C.skv_proto_exec_ack{exec_id: x.cid, bytes: C.uint32_t(d.data_len)}
	return x.send(C.SKV_PROTO_EXEC_OUTPUT_ACK, unsafe.Pointer(&ack))
}

// feedStdin sends what Stdin gave, within the credit.
func (x *execStream) feedStdin() error {
	for x.inOpen && x.credit > 0 && x.failure == nil {
		if len(x.pending) == 0 {
			select {
			case b, ok := <-x.in:
				if !ok {
					x.inOpen = false
					return x.sendStdin(nil, true)
				}
				x.pending = b
			default:
				return nil
			}
		}
		n := uint64(len(x.pending))
		if n > x.credit {
			n = x.credit
		}
		if err := x.sendStdin(x.pending[:n], false); err != nil {
			return err
		}
		x.credit -= n
		x.pending = x.pending[n:]
	}
	return nil
}

func (x *execStream) sendStdin(b []byte, eof bool) error {
	d := (*C.skv_proto_exec_data)(C.calloc(1, C.sizeof_skv_proto_exec_data))
	defer C.free(unsafe.Pointer(d))
	d.exec_id = x.cid
	if len(b) > 0 {
		d.data = (*C.uint8_t)(C.CBytes(b))
		defer C.free(unsafe.Pointer(d.data))
		d.data_len = C.size_t(len(b))
	}
	if eof {
		d.eof = 1
	}
	return x.send(C.SKV_PROTO_EXEC_STDIN, unsafe.Pointer(d))
}

func (x *execStream) send(t C.skv_proto_type, body unsafe.Pointer) error {
	var cerr C.skv_error
	return check(x.op, C.skv_client_send(x.c, C.SKV_PROTO_EVENT, t, body, nil, &cerr), &cerr)
}

// kill records why the exec is abandoned and sends SIGKILL; the loop then
// waits for exec.exit so the connection is left in step.
func (x *execStream) kill(why error) {
	if x.failure != nil {
		return
	}
	x.failure, x.killedAt, x.inOpen = why, time.Now(), false
	sig := C.skv_proto_exec_signal{exec_id: x.cid, signal: 9}
	x.send(C.SKV_PROTO_EXEC_SIGNAL, unsafe.Pointer(&sig))
}
