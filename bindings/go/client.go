package sokovan

/*
#include <stdlib.h>
#include <string.h>
#include <sokovan/auth.h>
#include <sokovan/client.h>
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"unsafe"
)

// Client is a connection to a sokovan manager through the library's client
// (skv_client; not a reimplementation of the protocol). The C client has
// one request in flight at a time; Client serialises calls with a mutex,
// so goroutines may share one.
//
// Every call takes a context. A context that is done before the call
// starts fails it at once; one that ends while the request is on the wire
// makes the call return ctx.Err() (wrapped) at once, while the abandoned
// request finishes in the background within the client's TimeoutMs (its
// late answer is skipped by the library) and the next call waits for it.
type Client struct {
	mu    sync.Mutex
	p     *C.skv_client
	execs uint64 // execs started: each gets its own exec_id
	// timeoutMs is the connection's request timeout (ClientOptions'
	// TimeoutMs resolved): Exec waits no longer for an answer.
	timeoutMs int
}

// ClientOptions says where and who. Credentials come from KeyFile (the
// access_key=/secret_key= file a manager writes) or AccessKey+SecretKey.
type ClientOptions struct {
	Endpoint             string // "unix:/path", "host:port", "tls:host:port", comma list
	KeyFile              string
	AccessKey, SecretKey string
	TimeoutMs            int // per request; 0 = 30000, < 0 = forever
	TLSCAFile, TLSPin    string
	FailoverMs           int
}

// ReadKeyFile reads the access and secret key of a key file (ErrPerm when
// group or others may read it).
func ReadKeyFile(path string) (access, secret string, err error) {
	var ak [C.SKV_AUTH_ACCESS_KEY_MAX]C.char
	var sk [C.SKV_AUTH_SECRET_KEY_MAX]C.char
	defer C.memset(unsafe.Pointer(&sk[0]), 0, C.size_t(len(sk)))
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var cerr C.skv_error
	if err := check("ReadKeyFile", C.skv_client_read_keyfile(&ak[0], &sk[0], cp, &cerr), &cerr); err != nil {
		return "", "", err
	}
	return C.GoString(&ak[0]), C.GoString(&sk[0]), nil
}

// layoutCheck compares the message structures this package was compiled
// with against the loaded library's (skv_proto_type_size): a library built
// from other headers would read past the bodies passed to it.
func layoutCheck(op string) error {
	for _, m := range []struct {
		t    C.skv_proto_type
		name string
		size C.size_t
	}{
		{C.SKV_PROTO_SESSION_SUBMIT, "session.submit", C.sizeof_skv_proto_session_submit},
		{C.SKV_PROTO_SESSION_SUBMIT_REPLY, "session.submit.reply", C.sizeof_skv_proto_session_ref},
		{C.SKV_PROTO_SESSION_LIST, "session.list", C.sizeof_skv_proto_session_list},
		{C.SKV_PROTO_SESSION_LIST_REPLY, "session.list.reply", C.sizeof_skv_proto_session_list_reply},
		{C.SKV_PROTO_SESSION_SHOW_REPLY, "session.show.reply", C.sizeof_skv_proto_session_show_reply},
		{C.SKV_PROTO_SESSION_TERMINATE_REPLY, "session.terminate.reply", C.sizeof_skv_proto_session_ref},
		{C.SKV_PROTO_SESSION_LOGS, "session.logs", C.sizeof_skv_proto_logs_request},
		{C.SKV_PROTO_LOGS_REPLY, "logs.reply", C.sizeof_skv_proto_logs_reply},
		{C.SKV_PROTO_AGENT_LIST, "agent.list", C.sizeof_skv_proto_agent_list},
		{C.SKV_PROTO_AGENT_LIST_REPLY, "agent.list.reply", C.sizeof_skv_proto_agent_list_reply},
		{C.SKV_PROTO_IMAGE_LIST, "image.list", C.sizeof_skv_proto_image_list},
		{C.SKV_PROTO_IMAGE_LIST_REPLY, "image.list.reply", C.sizeof_skv_proto_image_list_reply},
		{C.SKV_PROTO_ADMIN_USER, "admin.user", C.sizeof_skv_proto_admin_user},
		{C.SKV_PROTO_ADMIN_USER_REPLY, "admin.user.reply", C.sizeof_skv_proto_admin_user_reply},
		{C.SKV_PROTO_ADMIN_KEYPAIR, "admin.keypair", C.sizeof_skv_proto_admin_keypair},
		{C.SKV_PROTO_ADMIN_KEYPAIR_REPLY, "admin.keypair.reply", C.sizeof_skv_proto_admin_keypair_reply},
		{C.SKV_PROTO_ADMIN_PROJECT, "admin.project", C.sizeof_skv_proto_admin_project},
		{C.SKV_PROTO_ADMIN_PROJECT_REPLY, "admin.project.reply", C.sizeof_skv_proto_admin_project_reply},
		{C.SKV_PROTO_ADMIN_DOMAIN, "admin.domain", C.sizeof_skv_proto_admin_domain},
		{C.SKV_PROTO_ADMIN_DOMAIN_REPLY, "admin.domain.reply", C.sizeof_skv_proto_admin_domain_reply},
		{C.SKV_PROTO_ADMIN_RESOURCE_POLICY, "admin.resource_policy", C.sizeof_skv_proto_admin_resource_policy},
		{C.SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, "admin.resource_policy.reply", C.sizeof_skv_proto_admin_resource_policy_reply},
		{C.SKV_PROTO_ADMIN_RESOURCE_GROUP, "admin.resource_group", C.sizeof_skv_proto_admin_resource_group},
		{C.SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, "admin.resource_group.reply", C.sizeof_skv_proto_admin_resource_group_reply},
	} {
		if got := C.skv_proto_type_size(m.t); got != m.size {
			return goError(op, C.SKV_EVERSION, "%s layout mismatch (binding %d bytes, library %d): rebuild both",
				m.name, m.size, got)
		}
	}
	return nil
}

// Connect opens a client (the connect is bounded by TimeoutMs and ctx).
// ErrVersion when the loaded library's message layouts differ from the
// headers this package was built with.
func Connect(ctx context.Context, o ClientOptions) (*Client, error) {
	const op = "Connect"
	if err := layoutCheck(op); err != nil {
		return nil, err
	}
	if o.KeyFile != "" {
		ak, sk, err := ReadKeyFile(o.KeyFile)
		if err != nil {
			return nil, err
		}
		o.AccessKey, o.SecretKey = ak, sk
	}
	if o.AccessKey == "" || o.SecretKey == "" {
		return nil, goError(op, C.SKV_EINVAL, "no credentials: set KeyFile or AccessKey and SecretKey")
	}
	c := &Client{timeoutMs: o.TimeoutMs}
	if o.TimeoutMs == 0 {
		c.timeoutMs = 30000
	}
	err := run(ctx, op, func() error {
		var a cArena
		defer a.free()
		copts := (*C.skv_client_options)(a.alloc(C.sizeof_skv_client_options))
		copts.version = C.SKV_CLIENT_OPTIONS_VERSION
		copts.endpoint, copts.access_key, copts.secret_key = a.str(o.Endpoint), a.str(o.AccessKey), a.str(o.SecretKey)
		copts.timeout_ms = C.int(o.TimeoutMs)
		copts.tls_ca_file, copts.tls_pin = a.optStr(o.TLSCAFile), a.optStr(o.TLSPin)
		copts.failover_ms = C.int(o.FailoverMs)
		defer C.memset(unsafe.Pointer(copts.secret_key), 0, C.size_t(len(o.SecretKey)))
		var p *C.skv_client
		var cerr C.skv_error
		if err := check(op, C.skv_client_connect(&p, copts, &cerr), &cerr); err != nil {
			return err
		}
		c.mu.Lock()
		c.p = p
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		// A connect abandoned by ctx may still succeed later: close it then.
		runtime.SetFinalizer(c, (*Client).Close)
		return nil, err
	}
	runtime.SetFinalizer(c, (*Client).Close)
	return c, nil
}

// run executes f on its own goroutine and returns its error, or ctx's
// error as soon as ctx is done.
func run(ctx context.Context, op string, f func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sokovan: %s: %w", op, err)
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("sokovan: %s: %w", op, ctx.Err())
	}
}

// Close closes the connection and wipes the secret; idempotent. It waits
// for a request still on the wire.
func (c *Client) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		C.skv_client_free(c.p)
		c.p = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// Usable reports whether calls can go through (false after a broken
// connection: reconnect).
func (c *Client) Usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.p != nil && C.skv_client_usable(c.p) == 1
}

// do runs one request under the lock; f converts and frees the C reply
// itself, so an abandoned call leaks nothing.
func (c *Client) do(ctx context.Context, op string, f func(p *C.skv_client, a *cArena, e *C.skv_error) C.int) error {
	return run(ctx, op, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.p == nil {
			return closedError(op)
		}
		var a cArena
		defer a.free()
		var cerr C.skv_error
		return check(op, f(c.p, &a, &cerr), &cerr)
	})
}

// SubmitRequest is a session.submit with one kernel spec.
type SubmitRequest struct {
	Name, Owner, Project, Group string
	Type                        string // "batch" (default), "interactive", "inference"
	Priority                    int32
	Image                       string
	Command                     []string
	Env                         map[string]string
	Slots                       *Slots // the request of each kernel
	ClusterSize                 uint32 // 0 = 1
	MultiNode                   bool
	Constraints                 map[string]string // agent labels required
	Dependencies                []string
	EstimatedDurationMs         uint64
	Preemptible                 bool
	ClientToken                 string // idempotency
}

// Submit sends session.submit and returns the new session's id.
func (c *Client) Submit(ctx context.Context, r SubmitRequest) (string, error) {
	const op = "Client.Submit"
	slots, err := r.Slots.mustPtr(op)
	if err != nil {
		return "", err
	}
	var id string
	err = c.do(ctx, op, func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		req := submitBody(a, r, slots)
		var rep C.skv_proto_session_ref
		rc := C.skv_client_submit(p, &rep, req, e)
		if rc == 0 {
			id = optGoString(rep.session_id)
			C.skv_proto_body_free(C.SKV_PROTO_SESSION_SUBMIT_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return id, err
}

func submitBody(a *cArena, r SubmitRequest, slots *C.skv_slots) *C.skv_proto_session_submit {
	b := (*C.skv_proto_session_submit)(a.alloc(C.sizeof_skv_proto_session_submit))
	b.name, b.owner, b.project = a.optStr(r.Name), a.optStr(r.Owner), a.optStr(r.Project)
	b.resource_group, b.image = a.optStr(r.Group), a.str(r.Image)
	b.session_type = a.str("batch")
	if r.Type != "" {
		b.session_type = a.str(r.Type)
	}
	b.priority = C.int32_t(r.Priority)
	b.cluster_mode, b.cluster_size = a.str("single-node"), 1
	if r.MultiNode {
		b.cluster_mode = a.str("multi-node")
	}
	if r.ClusterSize > 0 {
		b.cluster_size = C.uint32_t(r.ClusterSize)
	}
	b.command, b.n_command = strArray(a, r.Command), C.size_t(len(r.Command))
	b.env, b.n_env = kvArray(a, r.Env), C.size_t(len(r.Env))
	b.constraints, b.n_constraints = kvArray(a, r.Constraints), C.size_t(len(r.Constraints))
	b.dependencies, b.n_dependencies = strArray(a, r.Dependencies), C.size_t(len(r.Dependencies))
	k := (*C.skv_proto_kernel_spec)(a.alloc(C.sizeof_skv_proto_kernel_spec))
	k.role, k.slots = a.str("main"), slots
	b.kernels, b.n_kernels = k, 1
	b.estimated_duration_ms = C.uint64_t(r.EstimatedDurationMs)
	if r.Preemptible {
		b.preemptible = 1
	}
	b.client_token = a.optStr(r.ClientToken)
	return b
}

func kvArray(a *cArena, m map[string]string) *C.skv_proto_kv {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p := (*C.skv_proto_kv)(a.alloc(uintptr(len(m)) * C.sizeof_skv_proto_kv))
	arr := unsafe.Slice(p, len(m))
	for i, k := range keys {
		arr[i].key, arr[i].value = a.str(k), a.str(m[k])
	}
	return p
}

// Terminate sends session.terminate and returns the status the manager
// reports (force: no grace period).
func (c *Client) Terminate(ctx context.Context, id, reason string, force bool) (string, error) {
	var status string
	err := c.do(ctx, "Client.Terminate", func(p *C.skv_client, a *cArena, e *C.skv_error) C.int {
		var rep C.skv_proto_session_ref
		f := C.int(0)
		if force {
			f = 1
		}
		rc := C.skv_client_terminate(p, &rep, a.str(id), a.optStr(reason), f, e)
		if rc == 0 {
			status = optGoString(rep.status)
			C.skv_proto_body_free(C.SKV_PROTO_SESSION_TERMINATE_REPLY, unsafe.Pointer(&rep))
		}
		return rc
	})
	return status, err
}
