package sokovan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libsokovan/libsokovan/bindings/go/internal/localcluster"
)

// The cluster client against the real daemons (started once per test).
func startCluster(t *testing.T) (*localcluster.Cluster, *Client) {
	t.Helper()
	build := os.Getenv("SKV_TEST_BUILD_DIR")
	if build == "" {
		build, _ = filepath.Abs("../../build")
	}
	if why := localcluster.SkipReason(build); why != "" {
		t.Skip("SKIP: " + why)
	}
	cl, err := localcluster.Start(build)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint, KeyFile: cl.KeyFile, TimeoutMs: 20000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, c
}

var final = map[string]bool{"TERMINATED": true, "CANCELLED": true, "ERROR": true}

func waitStatus(t *testing.T, cl *localcluster.Cluster, c *Client, id string, until map[string]bool) Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		s, err := c.Show(ctx, id)
		if err != nil {
			t.Fatalf("show %s: %v\nagent: %s", id, err, cl.LogTail("a1"))
		}
		if until[s.Status] {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestClientSessions(t *testing.T) {
	cl, c := startCluster(t)
	ctx := context.Background()
	slots := MustParseSlots("cpu=0.1,mem=32m")
	defer slots.Close()
	id, err := c.Submit(ctx, SubmitRequest{Name: "hello", Image: "busybox",
		Command: []string{"sh", "-c", "echo hello"}, Slots: slots, Env: map[string]string{"A": "1"}})
	must(t, err)
	s := waitStatus(t, cl, c, id, final)
	if s.Status != "TERMINATED" || s.ExitCode != 0 || s.Name != "hello" || len(s.Kernels) != 1 ||
		s.Kernels[0].AgentID != "a1" || len(s.History) == 0 || s.Slots == "" {
		t.Errorf("session %+v", s)
	}
	all, total, err := c.List(ctx, ListOptions{})
	must(t, err)
	found := false
	for _, x := range all {
		found = found || x.ID == id
	}
	if !found || total < 1 {
		t.Errorf("%s not in list %+v (total %d)", id, all, total)
	}
	done, _, err := c.List(ctx, ListOptions{Statuses: []string{"TERMINATED"}})
	must(t, err)
	for _, x := range done {
		if x.Status != "TERMINATED" {
			t.Errorf("status filter let %s through", x.Status)
		}
	}

	long, err := c.Submit(ctx, SubmitRequest{Image: "busybox", Command: []string{"sleep", "60"}, Slots: slots})
	must(t, err)
	waitStatus(t, cl, c, long, map[string]bool{"RUNNING": true})
	if _, err := c.Terminate(ctx, long, "test", true); err != nil {
		t.Fatal(err)
	}
	if s := waitStatus(t, cl, c, long, final); s.Status != "CANCELLED" && s.Status != "TERMINATED" {
		t.Errorf("terminated session ended %s", s.Status)
	}
}

func TestClientErrors(t *testing.T) {
	cl, c := startCluster(t)
	ctx := context.Background()
	if _, err := c.Show(ctx, "no-such-session"); !errors.Is(err, ErrNotFound) {
		t.Errorf("show unknown: %v", err)
	}
	ak, _, err := ReadKeyFile(cl.KeyFile)
	must(t, err)
	bad, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint, AccessKey: ak, SecretKey: strings.Repeat("A", 43) + "="})
	if err == nil {
		_, _, err = bad.List(ctx, ListOptions{})
		bad.Close()
	}
	if !errors.Is(err, ErrAuth) {
		t.Errorf("wrong secret: %v", err)
	}
	loose := filepath.Join(cl.Root, "loose.key")
	b, _ := os.ReadFile(cl.KeyFile)
	must(t, os.WriteFile(loose, b, 0o604))
	if _, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint, KeyFile: loose}); !errors.Is(err, ErrPerm) {
		t.Errorf("world-readable key file: %v", err)
	}
	if _, err := Connect(ctx, ClientOptions{Endpoint: "unix:/nonexistent.sock", KeyFile: cl.KeyFile}); err == nil {
		t.Error("connected to nothing")
	}
	if _, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no credentials: %v", err)
	}
	// context: a cancelled or expired context fails the call with ctx's error
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Show(cctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	dctx, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	if _, _, err := c.List(dctx, ListOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired ctx: %v", err)
	}
	if !c.Usable() {
		t.Error("client unusable after refused calls")
	}
	c.Close()
	c.Close()
	if _, err := c.Show(ctx, "x"); !errors.Is(err, ErrState) {
		t.Errorf("closed client: %v", err)
	}
}

// Connections opened, used and closed, and connects that fail: RSS stays
// bounded (every reply and every half-built client is freed).
func TestClientLeak(t *testing.T) {
	cl, _ := startCluster(t)
	ctx := context.Background()
	cycle := func(n int) {
		for i := 0; i < n; i++ {
			c, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint, KeyFile: cl.KeyFile})
			must(t, err)
			if _, _, err := c.List(ctx, ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Show(ctx, "none"); !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			c.Close()
			if _, err := Connect(ctx, ClientOptions{Endpoint: "unix:/nonexistent.sock", KeyFile: cl.KeyFile}); err == nil {
				t.Fatal("connected to nothing")
			}
		}
	}
	cycle(200)
	before := rss(t)
	cycle(1500)
	grew := rss(t) - before
	// (measured: ~4 MiB after 1500 cycles, less after 6000: the Go heap
	// settling, not a per-cycle leak)
	t.Logf("1500 client cycles: RSS grew %d KiB", grew>>10)

	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 1500 client cycles", grew>>10)
	}
}
