package sokovan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/libsokovan/libsokovan/bindings/go/internal/localcluster"
)

var running = map[string]bool{"RUNNING": true, "TERMINATED": true, "ERROR": true, "CANCELLED": true}

// waitAgent polls agent.list until a1 is alive.
func waitAgent(t *testing.T, cl *localcluster.Cluster, c *Client) AgentInfo {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		agents, err := c.Agents(ctx, "", false)
		must(t, err)
		for _, a := range agents {
			if a.ID == "a1" && a.Status == "alive" {
				return a
			}
		}
	}
	t.Fatalf("agent a1 did not register: %s", cl.LogTail("a1"))
	return AgentInfo{}
}

func run1(t *testing.T, c *Client, script string) string {
	t.Helper()
	slots := MustParseSlots("cpu=0.1,mem=32m")
	defer slots.Close()
	id, err := c.Submit(context.Background(), SubmitRequest{Image: "busybox", Command: []string{"sh", "-c", script}, Slots: slots})
	must(t, err)
	return id
}

// chunkWriter records each Write; onWrite may cancel or fail.
type chunkWriter struct {
	chunks  [][]byte
	onWrite func() error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.chunks = append(w.chunks, append([]byte(nil), p...))
	if w.onWrite != nil {
		if err := w.onWrite(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *chunkWriter) String() string {
	var b strings.Builder
	for _, c := range w.chunks {
		b.Write(c)
	}
	return b.String()
}

// Logs, streaming with follow and context cancellation, agents, images and
// the admin plane against one real manager and agent.
func TestClientLogsAgentsAdmin(t *testing.T) {
	cl, c := startCluster(t)
	ctx := context.Background()
	t.Run("agents", func(t *testing.T) {
		a := waitAgent(t, cl, c)
		if a.Group == "" || !strings.Contains(a.Capacity, "cpu=") || !strings.Contains(a.Capacity, "mem=") ||
			len(a.Devices) == 0 || a.LastHeartbeatMs <= 0 {
			t.Errorf("agent %+v", a)
		}
		other, err := c.Agents(ctx, "no-such-group", true)
		if err == nil && len(other) != 0 {
			t.Errorf("agents of an unknown group: %+v", other)
		}
	})
	t.Run("images", func(t *testing.T) {
		var imgs []ImageInfo
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			var err error
			imgs, err = c.Images(ctx, "")
			must(t, err)
			if len(imgs) > 0 {
				break
			}
		}
		if len(imgs) != 1 || imgs[0].Name != "busybox" || imgs[0].Digest == "" || len(imgs[0].Agents) != 1 ||
			imgs[0].Agents[0] != "a1" {
			t.Errorf("images %+v", imgs)
		}
	})
	t.Run("logs", func(t *testing.T) {
		id := run1(t, c, "echo hello; echo oops >&2")
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if s, err := c.Wait(wctx, id); err != nil || s.Status != "TERMINATED" {
			t.Fatalf("wait: %+v %v", s, err)
		}
		out, err := c.Logs(ctx, id, LogOptions{})
		must(t, err)
		errOut, err := c.Logs(ctx, id, LogOptions{Stream: "stderr"})
		must(t, err)
		if string(out) != "hello\n" || string(errOut) != "oops\n" {
			t.Errorf("stdout %q stderr %q", out, errOut)
		}
		ch, err := c.ReadLogs(ctx, id, LogOptions{Offset: 2})
		must(t, err)
		if string(ch.Data) != "llo\n" || ch.NextOffset != 6 {
			t.Errorf("from offset 2: %+v", ch)
		}
		if _, err := c.Logs(ctx, "no-such-session", LogOptions{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("logs of an unknown session: %v", err)
		}
	})
	t.Run("stream", func(t *testing.T) {
		id := run1(t, c, "for i in 1 2 3 4; do echo line$i; sleep 0.3; done")
		waitStatus(t, cl, c, id, running)
		var w chunkWriter
		next, err := c.StreamLogs(ctx, id, LogOptions{Follow: true, PollInterval: 20 * time.Millisecond}, &w)
		must(t, err)
		if w.String() != "line1\nline2\nline3\nline4\n" || next != 24 {
			t.Errorf("streamed %q (next %d)", w.String(), next)
		}
		if len(w.chunks) < 2 {
			t.Errorf("output did not arrive while it ran: %d chunk(s)", len(w.chunks))
		}
	})
	t.Run("stream-cancel", func(t *testing.T) {
		id := run1(t, c, "echo start; sleep 60")
		waitStatus(t, cl, c, id, running)
		short, cancel0 := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel0()
		if s, err := c.Wait(short, id); !errors.Is(err, context.DeadlineExceeded) || (s.Status != "" && s.Status != "RUNNING") {
			t.Errorf("wait past its deadline: %+v %v", s, err)
		}
		if _, err := c.Wait(ctx, "no-such-session"); !errors.Is(err, ErrNotFound) {
			t.Errorf("wait for an unknown session: %v", err)
		}
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if out, err := c.Logs(ctx, id, LogOptions{}); err == nil && string(out) == "start\n" {
				break
			} else if time.Now().After(end) {
				t.Fatalf("no output: %q %v", out, err)
			}
		}
		// a deadline ends a follow that waits for output that never comes
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		var w chunkWriter
		t0 := time.Now()
		next, err := c.StreamLogs(dctx, id, LogOptions{Follow: true, PollInterval: time.Hour}, &w)
		if !errors.Is(err, context.DeadlineExceeded) || next != 6 || w.String() != "start\n" {
			t.Errorf("follow past its deadline: %v, next %d, %q", err, next, w.String())
		}
		if d := time.Since(t0); d > 20*time.Second {
			t.Errorf("the deadline took %v to end the follow", d)
		}
		// a cancel from the consumer ends it too
		cctx, cancel2 := context.WithCancel(ctx)
		defer cancel2()
		w1 := chunkWriter{onWrite: func() error { cancel2(); return nil }}
		if next, err := c.StreamLogs(cctx, id, LogOptions{Follow: true, PollInterval: 20 * time.Millisecond}, &w1); !errors.Is(err, context.Canceled) || next != 6 {
			t.Errorf("cancelled follow: %v, next %d", err, next)
		}
		// resuming at the returned offset finds nothing new; a writer's
		// error ends the stream with that error
		boom := errors.New("boom")
		w2 := chunkWriter{onWrite: func() error { return boom }}
		if _, err := c.StreamLogs(ctx, id, LogOptions{}, &w2); !errors.Is(err, boom) {
			t.Errorf("writer error: %v", err)
		}
		rest, err := c.Logs(ctx, id, LogOptions{Offset: next})
		must(t, err)
		if len(rest) != 0 {
			t.Errorf("after offset %d: %q", next, rest)
		}
		if _, err := c.Terminate(ctx, id, "test", true); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, cl, c, id, final)
	})
	t.Run("exec", func(t *testing.T) { execChecks(t, cl, c) })
	t.Run("leak", func(t *testing.T) { clientReplyLeak(t, cl, c) })
	t.Run("admin", func(t *testing.T) { adminChecks(t, cl, c) })
}

// The new replies (logs, agents, images, admin lists) are freed: 1500
// rounds keep RSS bounded.
func clientReplyLeak(t *testing.T, cl *localcluster.Cluster, c *Client) {
	ctx := context.Background()
	id := run1(t, c, "echo leak-check")
	waitStatus(t, cl, c, id, final)
	cycle := func(n int) {
		for i := 0; i < n; i++ {
			if b, err := c.Logs(ctx, id, LogOptions{}); err != nil || string(b) != "leak-check\n" {
				t.Fatalf("%q %v", b, err)
			}
			if a, err := c.Agents(ctx, "", true); err != nil || len(a) != 1 {
				t.Fatal(err)
			}
			if _, err := c.Images(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if u, err := c.AdminUser(ctx, AdminList, User{}); err != nil || len(u) == 0 {
				t.Fatal(err)
			}
			if _, err := c.AdminResourceGroup(ctx, AdminList, ResourceGroup{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cycle(200)
	before := rss(t)
	cycle(1500)
	grew := rss(t) - before
	t.Logf("1500 rounds of logs, agents, images, admin lists: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 1500 rounds", grew>>10)
	}
}

func execChecks(t *testing.T, cl *localcluster.Cluster, c *Client) {
	ctx := context.Background()
	id := run1(t, c, "sleep 120")
	waitStatus(t, cl, c, id, map[string]bool{"RUNNING": true})
	var out, errOut strings.Builder
	res, err := c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"},
		Env: map[string]string{"GOVAR": "x"}, Stdout: &out, Stderr: &errOut})
	must(t, err)
	if res.ExitCode != 3 || res.Signal != 0 || res.Pid <= 0 || out.String() != "out\n" || errOut.String() != "err\n" {
		t.Errorf("exec: %+v stdout %q stderr %q", res, out.String(), errOut.String())
	}
	// 1 MiB through stdin and back with a 4 KiB output window: both
	// credits run out many times
	in := strings.Repeat("0123456789abcdef", 1<<16)
	var echo chunkWriter
	res, err = c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"cat"}, Stdin: strings.NewReader(in),
		Stdout: &echo, Window: 4096})
	must(t, err)
	if res.ExitCode != 0 || echo.String() != in {
		t.Errorf("cat of 1 MiB: %+v, %d bytes back", res, len(echo.String()))
	}
	if res, err = c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"sh", "-c", "kill -TERM $$"}}); err != nil || res.Signal != 15 {
		t.Errorf("signalled command: %+v %v", res, err)
	}
	if _, err := c.Exec(ctx, ExecRequest{SessionID: "no-such-session", Argv: []string{"true"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"/no/such/command"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := c.Exec(ctx, ExecRequest{SessionID: id}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no argv: %v", err)
	}
	// a deadline kills the command; the connection stays in step
	dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err = c.Exec(dctx, ExecRequest{SessionID: id, Argv: []string{"sleep", "60"}})
	if !errors.Is(err, context.DeadlineExceeded) || res.Signal != 9 || time.Since(t0) > 20*time.Second {
		t.Errorf("exec past its deadline: %+v %v after %v", res, err, time.Since(t0))
	}
	// a writer that fails ends an endless writer
	boom := errors.New("boom")
	_, err = c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"sh", "-c", "while :; do echo y; done"},
		Stdout: &chunkWriter{onWrite: func() error { return boom }}})
	if !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
	if s, err := c.Show(ctx, id); err != nil || s.Status != "RUNNING" || !c.Usable() {
		t.Errorf("after the execs: %v %+v", err, s)
	}
	// execs with stdin and output, and refused ones, keep RSS bounded
	cycle := func(n int) {
		for i := 0; i < n; i++ {
			var b strings.Builder
			if res, err := c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"cat"}, Stdin: strings.NewReader("ping"),
				Stdout: &b}); err != nil || res.ExitCode != 0 || b.String() != "ping" {
				t.Fatalf("exec %d: %+v %v %q", i, res, err, b.String())
			}
			if _, err := c.Exec(ctx, ExecRequest{SessionID: "no-such-session", Argv: []string{"true"}}); !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	cycle(20)
	before := rss(t)
	cycle(200)
	grew := rss(t) - before
	t.Logf("200 exec rounds: RSS grew %d KiB", grew>>10)
	if grew > leakBound {
		t.Errorf("RSS grew %d KiB over 200 exec rounds", grew>>10)
	}
	if _, err := c.Terminate(ctx, id, "test", true); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, cl, c, id, final)
	if _, err := c.Exec(ctx, ExecRequest{SessionID: id, Argv: []string{"true"}}); !errors.Is(err, ErrState) {
		t.Errorf("exec into an ended session: %v", err)
	}
}

func adminChecks(t *testing.T, cl *localcluster.Cluster, c *Client) {
	ctx := context.Background()
	users, err := c.AdminUser(ctx, AdminCreate, User{Name: "gouser", Role: "user", Description: "from Go"})
	must(t, err)
	if len(users) != 1 || users[0].Name != "gouser" || users[0].Inactive || users[0].Description != "from Go" {
		t.Fatalf("created %+v", users)
	}
	if _, err := c.AdminUser(ctx, AdminCreate, User{Name: "gouser", Role: "user"}); !errors.Is(err, ErrExist) {
		t.Errorf("duplicate user: %v", err)
	}
	keys, err := c.AdminKeypair(ctx, AdminCreate, Keypair{User: "gouser"})
	must(t, err)
	if len(keys) != 1 || keys[0].SecretKey == "" || keys[0].AccessKey == "" || keys[0].User != "gouser" {
		t.Fatalf("keypair %+v", keys)
	}
	all, err := c.AdminUser(ctx, AdminList, User{})
	must(t, err)
	found := false
	for _, u := range all {
		found = found || u.Name == "gouser"
	}
	if !found {
		t.Errorf("gouser not listed: %+v", all)
	}
	user, err := Connect(ctx, ClientOptions{Endpoint: cl.Endpoint, AccessKey: keys[0].AccessKey, SecretKey: keys[0].SecretKey})
	must(t, err)
	defer user.Close()
	var e *Error
	if _, err := user.AdminUser(ctx, AdminList, User{}); !errors.Is(err, ErrPerm) || !errors.As(err, &e) || e.Message == "" {
		t.Errorf("a user's admin call: %v", err)
	}
	id := run1(t, user, "true")
	mine, _, err := user.List(ctx, ListOptions{})
	must(t, err)
	if len(mine) != 1 || mine[0].ID != id || mine[0].Owner != "gouser" {
		t.Errorf("the user's sessions: %+v", mine)
	}

	pol, err := c.AdminResourcePolicy(ctx, AdminCreate, ResourcePolicy{Name: "gopol", MaxSlots: "cpu=2,mem=1g",
		MaxConcurrentSessions: 3, MaxSessionLifetimeMs: 3600000})
	must(t, err)
	if len(pol) != 1 || pol[0].MaxSlots != "cpu=2,mem=1g" || pol[0].MaxConcurrentSessions != 3 ||
		pol[0].MaxSessionLifetimeMs != 3600000 {
		t.Errorf("policy %+v", pol)
	}
	pol, err = c.AdminResourcePolicy(ctx, AdminUpdate, ResourcePolicy{Name: "gopol", MaxSlots: "cpu=4", MaxPendingSessions: 7})
	must(t, err)
	if len(pol) != 1 || pol[0].MaxSlots != "cpu=4" || pol[0].MaxPendingSessions != 7 {
		t.Errorf("updated policy %+v", pol)
	}
	if _, err := c.AdminResourcePolicy(ctx, AdminCreate, ResourcePolicy{Name: "bad", MaxSlots: "cpu=lots"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad max slots: %v", err)
	}
	dom, err := c.AdminDomain(ctx, AdminCreate, Domain{Name: "godom", ResourceGroups: []string{"default"}})
	must(t, err)
	if len(dom) != 1 || dom[0].Name != "godom" || len(dom[0].ResourceGroups) != 1 {
		t.Errorf("domain %+v", dom)
	}
	proj, err := c.AdminProject(ctx, AdminCreate, Project{Name: "goproj", Domain: "godom", ResourcePolicy: "gopol"})
	must(t, err)
	if len(proj) != 1 || proj[0].Domain != "godom" || proj[0].ResourcePolicy != "gopol" {
		t.Errorf("project %+v", proj)
	}
	if _, err := c.AdminProject(ctx, AdminCreate, Project{Name: "orphan", Domain: "no-such-domain"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("project of an unknown domain: %v", err)
	}
	grp, err := c.AdminResourceGroup(ctx, AdminCreate, ResourceGroup{Name: "gogroup", Scheduler: "priority",
		Preemption: "on", PreemptMinRuntimeMs: 5000, SessionTypes: []string{"batch"}})
	must(t, err)
	if len(grp) != 1 || grp[0].Preemption != "on" || grp[0].PreemptMinRuntimeMs != 5000 || grp[0].Scheduler != "priority" ||
		len(grp[0].SessionTypes) != 1 {
		t.Errorf("group %+v", grp)
	}
	grp, err = c.AdminResourceGroup(ctx, AdminList, ResourceGroup{Name: "gogroup"})
	must(t, err)
	if len(grp) != 1 || grp[0].Name != "gogroup" {
		t.Errorf("listed group %+v", grp)
	}
	if _, err := c.AdminResourceGroup(ctx, AdminDelete, ResourceGroup{Name: "gogroup"}); err != nil {
		t.Error(err)
	}
	if grp, err = c.AdminResourceGroup(ctx, AdminList, ResourceGroup{Name: "gogroup"}); err != nil || len(grp) != 0 {
		t.Errorf("deleted group still listed: %+v %v", grp, err)
	}
	if _, err := c.AdminUser(ctx, AdminOp(9), User{Name: "x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown op: %v", err)
	}
	// deactivating the user shuts its key out
	users, err = c.AdminUser(ctx, AdminUpdate, User{Name: "gouser", Inactive: true})
	must(t, err)
	if len(users) != 1 || !users[0].Inactive {
		t.Errorf("deactivated %+v", users)
	}
	if _, _, err := user.List(ctx, ListOptions{}); err == nil {
		t.Error("an inactive user's key still works")
	}
}
