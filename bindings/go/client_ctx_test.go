package sokovan

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A manager that accepts and never answers: the context's deadline ends
// the call at once although the C client would wait its full timeout.
func TestClientContextDeadlineOnTheWire(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("SKIP: cannot listen on a Unix socket (%v)", err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // never answered
		}
	}()
	c, err := Connect(context.Background(), ClientOptions{Endpoint: "unix:" + sock,
		AccessKey: strings.Repeat("A", 22), SecretKey: strings.Repeat("B", 43), TimeoutMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = c.List(ctx, ListOptions{})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Fatalf("list on a silent manager: %v after %v", err, took)
	}
	// The abandoned request holds the client until its own timeout; the
	// next call waits for it, then gets the library's timeout.
	start = time.Now()
	_, _, err = c.List(context.Background(), ListOptions{})
	if !errors.Is(err, ErrTimedOut) || time.Since(start) < time.Second {
		t.Errorf("next call: %v after %v", err, time.Since(start))
	}
	(<-held).Close()
}
