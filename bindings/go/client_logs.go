package sokovan

/*
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"fmt"
	"io"
	"time"
	"unsafe"
)

// LogOptions selects what session.logs reads.
type LogOptions struct {
	KernelID string // "" = the main kernel
	Stream   string // "stdout" ("" too) or "stderr"
	Offset   uint64 // byte offset to start at
	MaxBytes uint32 // per request; 0 = the manager's default
	// Follow: StreamLogs waits for more output until the kernel ends
	// (or ctx ends), polling every PollInterval (0 = 200 ms).
	Follow       bool
	PollInterval time.Duration
}

// LogChunk is one session.logs answer.
type LogChunk struct {
	Data       []byte
	NextOffset uint64
	EOF        bool // the kernel ended: no more after this
}

// ReadLogs sends one session.logs: the bytes of a kernel's stream from
// o.Offset that are there now.
func (c *Client) ReadLogs(ctx context.Context, id string, o LogOptions) (LogChunk, error) {
	var out LogChunk
	err := c.do(ctx, "Client.ReadLogs", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := (*C.skv_proto_logs_request)(a.alloc(C.sizeof_skv_proto_logs_request))
		req.session_id, req.kernel_id = a.str(id), a.optStr(o.KernelID)
		req.offset, req.max_bytes, req.stream = C.uint64_t(o.Offset), C.uint32_t(o.MaxBytes), a.optStr(o.Stream)
		var rep C.skv_proto_logs_reply
		rc := C.skv_client_logs(p, &rep, req, e)
		if rc == 0 {
			out = LogChunk{Data: C.GoBytes(unsafe.Pointer(rep.data), C.int(rep.data_len)),
				NextOffset: uint64(rep.next_offset), EOF: rep.eof != 0}
			C.skv_proto_body_free(C.SKV_PROTO_LOGS_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return out, err
}

// StreamLogs writes a kernel's output to w as it arrives, one Write per
// chunk: without o.Follow what is there now, with it until the kernel
// ends. It returns the offset after the last byte written, so a stream
// cut short (ctx, an error of w or of the connection) can resume there.
// ctx ending while it waits for output returns at once (the error wraps
// ctx.Err()).
func (c *Client) StreamLogs(ctx context.Context, id string, o LogOptions, w io.Writer) (uint64, error) {
	const op = "Client.StreamLogs"
	poll := o.PollInterval
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	for {
		ch, err := c.ReadLogs(ctx, id, o)
		if err != nil {
			return o.Offset, err
		}
		if len(ch.Data) > 0 {
			if _, err := w.Write(ch.Data); err != nil {
				return o.Offset, fmt.Errorf("sokovan: %s: writing output: %w", op, err)
			}
		}
		moved := ch.NextOffset != o.Offset
		o.Offset = ch.NextOffset
		if ch.EOF && len(ch.Data) == 0 {
			return o.Offset, nil
		}
		if moved {
			continue
		}
		if !o.Follow {
			return o.Offset, nil
		}
		if err := sleepCtx(ctx, poll); err != nil {
			return o.Offset, fmt.Errorf("sokovan: %s: %w", op, err)
		}
	}
}

// Logs is all of a kernel's output there now (StreamLogs without Follow).
func (c *Client) Logs(ctx context.Context, id string, o LogOptions) ([]byte, error) {
	o.Follow = false
	var b bytesWriter
	_, err := c.StreamLogs(ctx, id, o, &b)
	return b, err
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// sleepCtx waits d or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FinalStatuses are the statuses a session never leaves.
var FinalStatuses = []string{"TERMINATED", "CANCELLED", "ERROR"}

// Wait polls session.show every 50 ms until the session's status is one
// of until (none given: FinalStatuses) and returns it then; ctx bounds the
// wait (its error, wrapped, with the session as last shown, if it was).
func (c *Client) Wait(ctx context.Context, id string, until ...string) (Session, error) {
	if len(until) == 0 {
		until = FinalStatuses
	}
	var last Session // returned with ctx's error: the status it stayed in
	for {
		s, err := c.Show(ctx, id)
		if err != nil {
			return last, err
		}
		last = s
		for _, u := range until {
			if s.Status == u {
				return s, nil
			}
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return s, fmt.Errorf("sokovan: Client.Wait: session %s still %s: %w", id, s.Status, err)
		}
	}
}
