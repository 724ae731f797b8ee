/* Exec into running containers: the runtime's skv_runtime_exec (identity,
 * namespaces, cgroup, seccomp, terminal, leftovers) on a busybox image, as
 * root. The agent's exec messages are in test_agent_exec.c's cases below.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include <sodium.h>

#include "skv_test.h"
#include "rt_fixture.h"
#include "exec_fixture.h"

/* ---- helpers ------------------------------------------------------------ */

static skv_runtime *open_rt(const char *name, const char *backend)
{
    char state[PATH_MAX];
    skv_error e = SKV_ERROR_INIT;
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), name);
    o.image_dir = skv_rtfx_images;
    o.backend = backend;
    o.allow_process_backend = backend && strcmp(backend, "process") == 0;
    o.stop_grace_ms = 200;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    return rt;
}

/* A running container "c" with uid 1000 (or root), env FOO=bar, cwd /tmp,
 * running cmd. */
static void start_ctr(skv_runtime *rt, const char *id, const char *cmd,
                      uint32_t uid, uint32_t userns)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, id, &e), &e);
    SKV_CK_OK(skv_container_spec_set_image(s, "busybox", &e), &e);
    const char *argv[] = {"sh", "-c", cmd};
    SKV_CK_OK(skv_container_spec_set_argv(s, 3, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "FOO", "bar", &e), &e);
    SKV_CK_OK(skv_container_spec_set_cwd(s, "/tmp", &e), &e);
    SKV_CK_OK(skv_container_spec_set_user(s, uid, uid, &e), &e);
    if (userns)
        SKV_CK_OK(skv_container_spec_set_userns(s, userns, 65536, &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, id, &e), &e);
    skv_container_spec_free(s);
}

static int64_t init_pid(skv_runtime *rt, const char *id)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_status(rt, id, &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_RUNNING);
    return st.pid;
}

static skv_exec *exec_argv(skv_runtime *rt, const char *id, size_t argc,
                           const char *const *argv, bool tty)
{
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    o.argv = argv;
    o.argc = argc;
    o.tty = tty;
    o.rows = 30;
    o.cols = 100;
    skv_exec *x = NULL;
    SKV_CK_OK(skv_runtime_exec(rt, id, &o, &x, &e), &e);
    return x;
}

static skv_exec *exec_sh(skv_runtime *rt, const char *id, const char *cmd,
                         bool tty)
{
    const char *argv[] = {"sh", "-c", cmd};
    return exec_argv(rt, id, 3, argv, tty);
}

static int wait_code(skv_exec *x)
{
    skv_error e = SKV_ERROR_INIT;
    int code = -1, sig = -1;
    SKV_CK_OK(skv_exec_wait(x, 10000, &code, &sig, &e), &e);
    ck_assert_int_eq(sig, 0);
    return code;
}

/* ---- runtime ------------------------------------------------------------ */

START_TEST(test_exec_echo_exit_codes)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("echo", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    skv_exec *x = exec_sh(rt, "c", "echo out $FOO $(pwd); echo err >&2; "
                          "exit 3", false);
    char out[256], err[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    read_all(skv_exec_fd(x, SKV_EXEC_STDERR), err, sizeof(err));
    ck_assert_str_eq(out, "out bar /tmp\n");
    ck_assert_str_eq(err, "err\n");
    ck_assert_int_eq(wait_code(x), 3);
    skv_exec_free(x);
    /* stdin: cat echoes what it is given up to EOF. */
    const char *cat[] = {"cat"};
    x = exec_argv(rt, "c", 1, cat, false);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "abc", 3), 3);
    SKV_CK_OK(skv_exec_close_stdin(x, NULL), NULL);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "abc");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    /* A signal ends it with that signal. */
    x = exec_sh(rt, "c", "sleep 100", false);
    SKV_CK_OK(skv_exec_signal(x, SIGTERM, NULL), NULL);
    int code = -1, sig = 0;
    SKV_CK_OK(skv_exec_wait(x, 10000, &code, &sig, NULL), NULL);
    ck_assert_int_eq(sig, SIGTERM);
    ck_assert_int_eq(skv_exec_signal(x, SIGTERM, NULL), SKV_ESTATE);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_bad_input)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("bad", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    int fds = count_fds();
    skv_error e = SKV_ERROR_INIT;
    skv_exec *x = NULL;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", NULL, &x, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    const char *argv[] = {"no-such-command"};
    o.argv = argv;
    o.argc = 1;
    const char *env[] = {"=x"};
    o.env = env;
    o.n_env = 1;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    o.n_env = 0;
    o.cwd = "relative";
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    o.cwd = NULL;
    ck_assert_int_eq(skv_runtime_exec(rt, "nope", &o, &x, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ENOENT);
    ck_assert_msg(strstr(e.message, "execute the command"), "%s", e.message);
    o.cwd = "/no/such/dir";
    argv[0] = "true";
    ck_assert_int_lt(skv_runtime_exec(rt, "c", &o, &x, &e), 0);
    ck_assert_msg(strstr(e.message, "chdir"), "%s", e.message);
    ck_assert_ptr_null(x);
    o.version = 99;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EVERSION);
    /* Failures leave no descriptor and no child. */
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
    skv_exec_free(NULL);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_terminated_refused)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("ended", NULL);
    start_ctr(rt, "c", "exit 0", 0, 0);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "c", 10000, &st, NULL), NULL);
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    const char *argv[] = {"true"};
    o.argv = argv;
    o.argc = 1;
    skv_exec *x = NULL;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "not running"), "%s", e.message);
    skv_runtime_destroy(rt, "c", 0, NULL);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ENOENT);
    skv_runtime_free(rt);
}
END_TEST

/* The exec is in the kernel's namespaces and cgroup, with its uid, gid,
 * capabilities and seccomp mode. */
static void check_identity(skv_runtime *rt, const char *id, const char *uid)
{
    int64_t ip = init_pid(rt, id);
    skv_exec *x = exec_sh(rt, id, "sleep 100", false);
    int64_t xp = skv_exec_pid(x);
    static const char *const ns[] = {"ns/mnt", "ns/pid", "ns/net", "ns/ipc",
                                     "ns/uts", "ns/cgroup", "ns/user"};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        same_link(ip, xp, ns[i]);
    char a[4096], b[4096];
    read_proc(ip, "cgroup", a, sizeof(a));
    read_proc(xp, "cgroup", b, sizeof(b));
    ck_assert_str_eq(a, b);
    static const char *const keys[] = {"Uid", "Gid", "Groups", "CapEff",
                                       "CapPrm", "CapBnd", "CapInh", "CapAmb",
                                       "NoNewPrivs", "Seccomp"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        status_field(ip, keys[i], a, sizeof(a));
        status_field(xp, keys[i], b, sizeof(b));
        ck_assert_msg(strcmp(a, b) == 0, "%s: %s vs %s", keys[i], a, b);
    }
    status_field(xp, "Seccomp", a, sizeof(a));
    ck_assert_str_eq(a, "2");
    status_field(xp, "Uid", a, sizeof(a));
    ck_assert_msg(strncmp(a, uid, strlen(uid)) == 0, "uid %s", a);
    skv_exec_free(x);
    ck_assert_int_eq(kill((pid_t)xp, 0), -1);
}

START_TEST(test_exec_identity)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("ident", NULL);
    start_ctr(rt, "c", "sleep 1000", 1000, 0);
    check_identity(rt, "c", "1000");
    /* pid 1 of the container is its first process, not the exec. */
    skv_exec *x = exec_sh(rt, "c", "echo $$; cat /proc/1/cmdline", false);
    char out[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_msg(strstr(out, "sleep") && atoi(out) > 1, "%s", out);
    wait_code(x);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "c", 0, NULL);
    /* With a user namespace: host uid 200000 + 1000 for container 1000. */
    start_ctr(rt, "u", "sleep 1000", 1000, 200000);
    check_identity(rt, "u", "201000");
    x = exec_sh(rt, "u", "id -u", false);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "1000\n");
    wait_code(x);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "u", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_tty_resize)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("tty", NULL);
    start_ctr(rt, "c", "sleep 1000", 1000, 0);
    skv_exec *x = exec_sh(rt, "c", "tty; stty size; read l; stty size; "
                          "exit 5", true);
    int fd = skv_exec_fd(x, SKV_EXEC_STDOUT);
    ck_assert_int_eq(skv_exec_fd(x, SKV_EXEC_STDERR), -1);
    char buf[1024];
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "30 100"), "%s", buf);
    ck_assert_msg(strstr(buf, "/dev/pts/0"), "%s", buf);
    SKV_CK_OK(skv_exec_resize(x, 40, 120, NULL), NULL);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "go\n", 3), 3);
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "40 120"), "%s", buf);
    ck_assert_int_eq(wait_code(x), 5);
    ck_assert_int_eq(skv_exec_resize(x, 0, 5, NULL), SKV_EINVAL);
    skv_exec_free(x);
    skv_exec *p = exec_sh(rt, "c", "true", false);
    ck_assert_int_eq(skv_exec_resize(p, 10, 10, NULL), SKV_ESTATE);
    skv_exec_free(p);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* Many execs at once, ended every way (exit, kill by free, terminal
 * hang-up with a background child): no descriptor, process or terminal
 * is left. */
START_TEST(test_exec_leaves_nothing)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("many", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    int fds = count_fds();
    enum { N = 24 };
    skv_exec *x[N];
    int64_t pids[N];
    for (int i = 0; i < N; i++) {
        x[i] = exec_sh(rt, "c", i % 3 == 0 ? "exit 0"
                                : i % 3 == 1 ? "sleep 1000 & sleep 1000"
                                             : "cat", i % 2 == 0);
        pids[i] = skv_exec_pid(x[i]);
    }
    for (int i = 0; i < N; i++)
        skv_exec_free(x[i]);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(kill((pid_t)pids[i], 0), -1);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    /* Only the first process is left in the container, and its terminal
     * instance has no terminal but the multiplexer. */
    ck_assert_int_eq(live_in_ns(init_pid(rt, "c")), 0);
    skv_exec *l = exec_sh(rt, "c", "ls /dev/pts", false);
    char out[4096];
    read_all(skv_exec_fd(l, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "ptmx\n");
    wait_code(l);
    skv_exec_free(l);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_process_backend)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("proc", "process");
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, "p", &e), &e);
    SKV_CK_OK(skv_container_spec_set_rootfs(s, "/", &e), &e);
    const char *argv[] = {"/bin/sleep", "1000"};
    SKV_CK_OK(skv_container_spec_set_argv(s, 2, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "FOO", "proc", &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "p", &e), &e);
    skv_container_spec_free(s);
    skv_exec *x = exec_sh(rt, "p", "echo $FOO", false);
    char out[64];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "proc\n");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "p", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* ---- the agent's exec messages ----------------------------------------------
 * The agent object driven as the manager relay would drive it: frames in
 * with skv_agent_handle_frame, frames out through the send callback
 * (decoded on the spot: a 100 MB transfer is not kept), descriptors
 * watched by a small poll() host. */

#define AK "AKEXECTEST0000000001"
#define SK "exec-test-secret-key-0123456789"
#define SID "s-00000000000000ee"
#define MAXW 64

typedef struct host {
    /* watched descriptors */
    int wfd[MAXW];
    unsigned wev[MAXW];
    int nw;
    int max_nw;                 /* most watched at once */
    /* what the agent sent */
    int n_frames;
    int n_errors, last_error;
    char last_error_msg[256];
    int n_replies;
    uint64_t last_reply_id;
    int64_t exec_pid;
    uint32_t stdin_window;
    uint64_t stdin_acked;       /* exec.stdin.ack bytes */
    uint64_t out_bytes[3];      /* exec.output bytes per stream */
    uint64_t out_unacked;       /* output not yet acknowledged by us */
    uint64_t out_unacked_max;
    char out_text[8192];        /* the first output, as text */
    size_t out_text_len;
    crypto_hash_sha256_state sha; /* of stdout */
    int n_exits;
    int exit_code, exit_signal;
    char exit_reason[256];
    char exit_id[80];
} host;

static void on_watch(int fd, unsigned ev, void *payload)
{
    host *h = payload;
    int i = 0;
    while (i < h->nw && h->wfd[i] != fd)
        i++;
    if (ev == 0) {
        if (i < h->nw) {
            h->wfd[i] = h->wfd[h->nw - 1];
            h->wev[i] = h->wev[--h->nw];
        }
        return;
    }
    if (i == h->nw) {
        ck_assert_int_lt(h->nw, MAXW);
        h->wfd[h->nw++] = fd;
        if (h->nw > h->max_nw)
            h->max_nw = h->nw;
    }
    h->wev[i] = ev;
}

static void on_output(host *h, const skv_proto_exec_data *d)
{
    int s = strcmp(d->stream, "stderr") == 0 ? 2 : 1;
    ck_assert_msg(!strcmp(d->stream, s == 2 ? "stderr" : "stdout"), "%s",
                  d->stream);
    h->out_bytes[s] += d->data_len;
    h->out_unacked += d->data_len;
    if (h->out_unacked > h->out_unacked_max)
        h->out_unacked_max = h->out_unacked;
    if (s == 1)
        crypto_hash_sha256_update(&h->sha, d->data, d->data_len);
    size_t room = sizeof(h->out_text) - 1 - h->out_text_len;
    size_t n = d->data_len < room ? d->data_len : room;
    memcpy(h->out_text + h->out_text_len, d->data, n);
    h->out_text_len += n;
    h->out_text[h->out_text_len] = '\0';
}

static void on_frame(host *h, const skv_proto_envelope *env)
{
    union {
        skv_proto_error e;
        skv_proto_exec_start_reply r;
        skv_proto_exec_data d;
        skv_proto_exec_ack k;
        skv_proto_exec_exit x;
    } u;
    memset(&u, 0, sizeof(u));
    skv_proto_type t = env->type;
    if (t != SKV_PROTO_ERROR && t != SKV_PROTO_EXEC_START_REPLY &&
        t != SKV_PROTO_EXEC_OUTPUT && t != SKV_PROTO_EXEC_STDIN_ACK &&
        t != SKV_PROTO_EXEC_EXIT)
        return;
    SKV_CK_OK(skv_proto_body_decode(&u, t, env->body, env->body_len, NULL),
              NULL);
    if (t == SKV_PROTO_ERROR) {
        h->n_errors++;
        h->last_error = u.e.code;
        snprintf(h->last_error_msg, sizeof(h->last_error_msg), "%s",
                 u.e.message ? u.e.message : "");
    } else if (t == SKV_PROTO_EXEC_START_REPLY) {
        h->n_replies++;
        h->last_reply_id = env->request_id;
        h->exec_pid = u.r.pid;
        h->stdin_window = u.r.window;
    } else if (t == SKV_PROTO_EXEC_OUTPUT) {
        on_output(h, &u.d);
    } else if (t == SKV_PROTO_EXEC_STDIN_ACK) {
        h->stdin_acked += u.k.bytes;
    } else {
        h->n_exits++;
        h->exit_code = u.x.exit_code;
        h->exit_signal = u.x.signal;
        snprintf(h->exit_reason, sizeof(h->exit_reason), "%s",
                 u.x.reason ? u.x.reason : "");
        snprintf(h->exit_id, sizeof(h->exit_id), "%s", u.x.exec_id);
    }
    skv_proto_body_free(t, &u);
}

static int capture(const void *frame, size_t len, void *payload)
{
    host *h = payload;
    skv_proto_envelope env;
    ck_assert_uint_gt(len, SKV_PROTO_FRAME_HEADER);
    SKV_CK_OK(skv_proto_envelope_decode(&env, (const uint8_t *)frame +
                                        SKV_PROTO_FRAME_HEADER,
                                        len - SKV_PROTO_FRAME_HEADER, NULL),
              NULL);
    h->n_frames++;
    on_frame(h, &env);
    skv_proto_envelope_free(&env);
    return 0;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void feed(skv_agent *a, skv_proto_kind kind, uint64_t id,
                 skv_proto_type t, const void *body)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, kind, id, t, body,
                                       wall_ms(), NULL, &e), &e);
    SKV_CK_OK(skv_agent_handle_frame(a, (uint8_t *)frame +
                                         SKV_PROTO_FRAME_HEADER,
                                     len - SKV_PROTO_FRAME_HEADER, wall_ms(),
                                     &e), &e);
    skv_free(frame);
}

/* An agent with one registered connection and a running kernel "k1"
 * (`sleep 1000` as uid 1000) of session SID. */
static skv_agent *agent_with_kernel(host *h, const char *name)
{
    char state[PATH_MAX];
    snprintf(state, sizeof(state), "%s/agent-%s", skv_rtfx_root, name);
    memset(h, 0, sizeof(*h));
    crypto_hash_sha256_init(&h->sha);
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.create_threads = -1;
    o.agent_id = "a1";
    o.access_key = AK;
    o.secret_key = SK;
    o.state_dir = state;
    o.plugins = "cpu;mem";
    o.image_dir = skv_rtfx_images;
    skv_agent *a = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_open(&a, &o, capture, h, wall_ms(), &e), &e);
    skv_agent_set_watch(a, on_watch, h);
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
    feed(a, SKV_PROTO_RESPONSE, 1, SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
    char *argv[] = {"sh", "-c", "sleep 1000"};
    skv_proto_kernel_create kc;
    memset(&kc, 0, sizeof(kc));
    kc.session_id = SID;
    kc.kernel_id = "k1";
    kc.image = "busybox";
    kc.argv = argv;
    kc.n_argv = 3;
    skv_proto_kv env[] = {{"FOO", "bar"}};
    kc.env = env;
    kc.n_env = 1;
    feed(a, SKV_PROTO_REQUEST, 2, SKV_PROTO_KERNEL_CREATE, &kc);
    ck_assert_int_eq(h->n_errors, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    return a;
}

static void agent_done(skv_agent *a, const char *name)
{
    skv_agent_free(a);
    char state[PATH_MAX];
    snprintf(state, sizeof(state), "%s/agent-%s/containers", skv_rtfx_root,
             name);
    destroy_all(state);
}

/* exec.start of argv in k1 (request id req). */
static void start_exec(skv_agent *a, uint64_t req, const char *id,
                       const char *kernel, char **argv, size_t argc,
                       bool tty, uint32_t window)
{
    skv_proto_exec_start m;
    memset(&m, 0, sizeof(m));
    m.session_id = SID;
    m.kernel_id = (char *)kernel;
    m.exec_id = (char *)id;
    m.argv = argv;
    m.n_argv = argc;
    skv_proto_kv env[] = {{"EXTRA", "yes"}};
    m.env = env;
    m.n_env = 1;
    m.tty = tty;
    m.rows = 30;
    m.cols = 100;
    m.window = window;
    feed(a, SKV_PROTO_REQUEST, req, SKV_PROTO_EXEC_START, &m);
}

/* One round of the host's loop: poll the watched descriptors (up to
 * timeout ms) and hand readiness to the agent; then acknowledge the
 * output received (when ack), as a client consuming it would. */
static void loop_once(skv_agent *a, host *h, const char *id, int timeout,
                      bool ack)
{
    struct pollfd p[MAXW];
    int n = h->nw;
    for (int i = 0; i < n; i++) {
        p[i].fd = h->wfd[i];
        p[i].events = (short)((h->wev[i] & SKV_AGENT_IO_READ ? POLLIN : 0) |
                              (h->wev[i] & SKV_AGENT_IO_WRITE ? POLLOUT : 0));
        p[i].revents = 0;
    }
    poll(p, (nfds_t)n, timeout);
    for (int i = 0; i < n; i++)
        if (p[i].revents)
            SKV_CK_OK(skv_agent_io(a, p[i].fd, SKV_AGENT_IO_READ, wall_ms(),
                                   NULL), NULL);
    SKV_CK_OK(skv_agent_tick(a, wall_ms(), NULL), NULL);
    if (ack && h->out_unacked && id) {
        skv_proto_exec_ack k = {(char *)id, (uint32_t)h->out_unacked};
        h->out_unacked = 0;
        feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_OUTPUT_ACK, &k);
    }
}

static void run_until_exit(skv_agent *a, host *h, const char *id, int exits)
{
    int64_t end = wall_ms() + 20000;
    while (h->n_exits < exits && wall_ms() < end)
        loop_once(a, h, id, 50, true);
    ck_assert_int_eq(h->n_exits, exits);
}

static void send_stdin(skv_agent *a, const char *id, const void *data,
                       size_t len, bool eof)
{
    skv_proto_exec_data d = {(char *)id, NULL, (uint8_t *)data, len, eof};
    feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_STDIN, &d);
}

START_TEST(test_agent_exec_echo)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "echo");
    char *argv[] = {"sh", "-c", "echo out $FOO $EXTRA; echo err >&2; exit 7"};
    start_exec(a, 10, "x1", "k1", argv, 3, false, 0);
    ck_assert_int_eq(h.n_errors, 0);
    ck_assert_int_eq(h.n_replies, 1);
    ck_assert_uint_eq(h.last_reply_id, 10);
    ck_assert_int_gt(h.exec_pid, 0);
    ck_assert_uint_gt(h.stdin_window, 0);
    run_until_exit(a, &h, "x1", 1);
    ck_assert_str_eq(h.exit_id, "x1");
    ck_assert_int_eq(h.exit_code, 7);
    ck_assert_int_eq(h.exit_signal, 0);
    ck_assert_str_eq(h.exit_reason, "");
    ck_assert_msg(strstr(h.out_text, "out bar yes\n") &&
                  strstr(h.out_text, "err\n"), "%s", h.out_text);
    ck_assert_uint_eq(h.out_bytes[1], 12);
    ck_assert_uint_eq(h.out_bytes[2], 4);
    ck_assert_uint_eq(skv_agent_exec_count(a), 0);
    ck_assert_int_eq(h.nw, 0);
    /* exec.signal ends a command with that signal. */
    char *sl[] = {"sleep", "100"};
    start_exec(a, 11, "x2", "k1", sl, 2, false, 0);
    skv_proto_exec_signal sg = {"x2", SIGTERM};
    feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_SIGNAL, &sg);
    run_until_exit(a, &h, "x2", 2);
    ck_assert_int_eq(h.exit_signal, SIGTERM);
    /* Events for an exec that has ended are dropped quietly. */
    feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_SIGNAL, &sg);
    /* Input for a command that closed its stdin without reading it: the
     * write fails with EPIPE (no SIGPIPE kills this process, which does
     * not ignore it), the bytes are dropped and acknowledged. The command
     * stays alive until the bytes are sent: one that had already exited
     * could have ended its exec first, and the bytes would find no exec. */
    char *tr[] = {"sh", "-c", "exec 0<&-; echo stdin-closed; sleep 1"};
    start_exec(a, 12, "x3", "k1", tr, 3, false, 0);
    int64_t until = wall_ms() + 20000;
    while (!strstr(h.out_text, "stdin-closed") && wall_ms() < until)
        loop_once(a, &h, "x3", 50, true);
    ck_assert_msg(strstr(h.out_text, "stdin-closed"), "%s", h.out_text);
    static const char junk[1000];
    uint64_t acked = h.stdin_acked;
    send_stdin(a, "x3", junk, sizeof(junk), false);
    run_until_exit(a, &h, "x3", 3);
    ck_assert_int_eq(h.exit_code, 0);
    ck_assert_uint_eq(h.stdin_acked - acked, sizeof(junk));
    agent_done(a, "echo");
}
END_TEST

/* The refusals, each with a clear error and nothing started. */
START_TEST(test_agent_exec_refused)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "refuse");
    int fds = count_fds();
    char *argv[] = {"true"};
    struct {
        const char *id, *kernel;
        size_t argc;
        int code;
        const char *says;
    } bad[] = {
        {"x1", "nope", 1, SKV_ENOENT, "not on this agent"},
        {"x1", NULL, 1, SKV_EINVAL, "kernel_id is required"},
        {"bad id!", "k1", 1, SKV_EINVAL, "exec_id"},
        {"x1", "k1", 0, SKV_EINVAL, "argv is empty"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        start_exec(a, 20 + i, bad[i].id, bad[i].kernel, argv, bad[i].argc,
                   false, 0);
        ck_assert_int_eq(h.n_errors, (int)i + 1);
        ck_assert_int_eq(h.last_error, bad[i].code);
        ck_assert_msg(strstr(h.last_error_msg, bad[i].says), "%s",
                      h.last_error_msg);
    }
    char *missing[] = {"no-such-command"};
    start_exec(a, 30, "x1", "k1", missing, 1, false, 0);
    ck_assert_int_eq(h.last_error, SKV_ENOENT);
    ck_assert_msg(strstr(h.last_error_msg, "execute"), "%s",
                  h.last_error_msg);
    /* Too large a window. */
    start_exec(a, 31, "x1", "k1", argv, 1, false, 1u << 30);
    ck_assert_int_eq(h.last_error, SKV_EINVAL);
    /* A duplicate id while the first runs. */
    char *sl[] = {"sleep", "100"};
    start_exec(a, 32, "x1", "k1", sl, 2, false, 0);
    ck_assert_int_eq(h.n_replies, 1);
    start_exec(a, 33, "x1", "k1", sl, 2, false, 0);
    ck_assert_int_eq(h.last_error, SKV_EEXIST);
    /* The kernel ends: the exec ends with it, and a new one is refused. */
    int errors = h.n_errors;
    skv_proto_kernel_destroy kd = {SID, "k1", "test", 0};
    feed(a, SKV_PROTO_REQUEST, 40, SKV_PROTO_KERNEL_DESTROY, &kd);
    run_until_exit(a, &h, "x1", 1);
    ck_assert_msg(strstr(h.exit_reason, "kernel ended"), "%s", h.exit_reason);
    start_exec(a, 41, "x3", "k1", argv, 1, false, 0);
    ck_assert_int_eq(h.n_errors, errors + 1);
    ck_assert_int_eq(h.last_error, SKV_ENOENT);
    ck_assert_int_eq(count_fds(), fds);
    /* Without a descriptor watcher the host cannot stream: refused. */
    skv_agent_set_watch(a, NULL, NULL);
    start_exec(a, 42, "x4", "k1", argv, 1, false, 0);
    ck_assert_int_eq(h.last_error, SKV_ENOTSUP);
    agent_done(a, "refuse");
}
END_TEST

/* A kernel that exited on its own (not destroyed): refused as ended. */
START_TEST(test_agent_exec_exited_kernel)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "exited");
    skv_runtime *rt = NULL;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/agent-exited/containers", skv_rtfx_root);
    skv_runtime_options ro = SKV_RUNTIME_OPTIONS_INIT;
    ro.state_dir = dir;
    SKV_CK_OK(skv_runtime_open(&rt, &ro, NULL), NULL);
    SKV_CK_OK(skv_runtime_signal(rt, "k1", SIGKILL, NULL), NULL);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "k1", 10000, &st, NULL), NULL);
    skv_runtime_free(rt);
    SKV_CK_OK(skv_agent_tick(a, wall_ms() + 1000, NULL), NULL);
    char *argv[] = {"true"};
    start_exec(a, 10, "x1", "k1", argv, 1, false, 0);
    ck_assert_int_eq(h.last_error, SKV_ESTATE);
    ck_assert_msg(strstr(h.last_error_msg, "has ended"), "%s",
                  h.last_error_msg);
    agent_done(a, "exited");
}
END_TEST

/* xorshift64: the same bytes for the sender and the check. */
static void fill(uint8_t *buf, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        memcpy(buf + i, &x, n - i < 8 ? n - i : 8);
    }
}

/* 100 MB through stdin and back (cat) in stdin.ack-paced frames: the
 * sha256 of what came back is that of what went in, and neither side
 * ever had more than its window in flight. */
START_TEST(test_agent_exec_100mb)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "big");
    enum { TOTAL = 100 * 1000 * 1000, CH = 256 * 1024, WIN = 1 << 20 };
    char *argv[] = {"cat"};
    start_exec(a, 10, "big", "k1", argv, 1, false, WIN);
    ck_assert_int_eq(h.n_replies, 1);
    crypto_hash_sha256_state in_sha;
    crypto_hash_sha256_init(&in_sha);
    static uint8_t buf[CH];
    uint64_t rng = 0x9e3779b97f4a7c15ull, sent = 0;
    int64_t t0 = wall_ms(), end = t0 + 240000;
    bool eof_sent = false;
    while (h.n_exits == 0 && wall_ms() < end) {
        uint64_t credit = h.stdin_window + h.stdin_acked - sent;
        while (sent < TOTAL && credit > 0) {
            size_t n = TOTAL - sent < CH ? TOTAL - sent : CH;
            n = n < credit ? n : (size_t)credit;
            fill(buf, n, &rng);
            crypto_hash_sha256_update(&in_sha, buf, n);
            send_stdin(a, "big", buf, n, false);
            sent += n;
            credit -= n;
        }
        if (sent == TOTAL && !eof_sent) {
            send_stdin(a, "big", NULL, 0, true);
            eof_sent = true;
        }
        loop_once(a, &h, "big", 20, true);
    }
    ck_assert_int_eq(h.n_exits, 1);
    fprintf(stderr, "test_agent_exec_100mb: %d MB both ways in %lld ms\n",
            TOTAL / 1000000, (long long)(wall_ms() - t0));
    ck_assert_int_eq(h.exit_code, 0);
    ck_assert_uint_eq(h.out_bytes[1], TOTAL);
    ck_assert_uint_le(h.out_unacked_max, WIN);
    unsigned char d1[32], d2[32];
    crypto_hash_sha256_final(&in_sha, d1);
    crypto_hash_sha256_final(&h.sha, d2);
    ck_assert_int_eq(memcmp(d1, d2, 32), 0);
    agent_done(a, "big");
}
END_TEST

/* No acknowledgement, no more output: the agent stops at the credit and
 * the command waits; acknowledging lets the rest through. */
START_TEST(test_agent_exec_credit)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "credit");
    char *argv[] = {"dd", "if=/dev/zero", "bs=65536", "count=64"};
    start_exec(a, 10, "c", "k1", argv, 4, false, 100000);
    for (int i = 0; i < 20; i++)
        loop_once(a, &h, "c", 20, false);
    ck_assert_uint_eq(h.out_bytes[1], 100000);
    ck_assert_int_eq(h.n_exits, 0);
    run_until_exit(a, &h, "c", 1);
    ck_assert_uint_eq(h.out_bytes[1], 65536 * 64);
    ck_assert_int_eq(h.exit_code, 0);
    /* stdin beyond the granted window ends the exec, saying why. */
    char *cat[] = {"cat"};
    start_exec(a, 11, "d", "k1", cat, 1, false, 0);
    static uint8_t big[1 << 20];
    uint32_t w = h.stdin_window;
    send_stdin(a, "d", big, w < sizeof(big) ? w : sizeof(big), false);
    send_stdin(a, "d", big, 1 << 20, false);
    run_until_exit(a, &h, "d", 2);
    ck_assert_msg(strstr(h.exit_reason, "beyond the granted window"), "%s",
                  h.exit_reason);
    agent_done(a, "credit");
}
END_TEST

START_TEST(test_agent_exec_tty)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "tty");
    char *argv[] = {"sh", "-c", "tty; stty size; read l; stty size; exit 4"};
    start_exec(a, 10, "t", "k1", argv, 3, true, 0);
    ck_assert_int_eq(h.n_replies, 1);
    int64_t end = wall_ms() + 10000;
    while (!strstr(h.out_text, "30 100") && wall_ms() < end)
        loop_once(a, &h, "t", 20, true);
    ck_assert_msg(strstr(h.out_text, "/dev/pts/0\r\n30 100"), "%s",
                  h.out_text);
    skv_proto_exec_resize rz = {"t", 40, 120};
    feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_RESIZE, &rz);
    send_stdin(a, "t", "go\n", 3, false);
    run_until_exit(a, &h, "t", 1);
    ck_assert_msg(strstr(h.out_text, "40 120"), "%s", h.out_text);
    ck_assert_int_eq(h.exit_code, 4);
    ck_assert_uint_eq(h.out_bytes[2], 0);
    agent_done(a, "tty");
}
END_TEST

/* Many execs at once (pipes and terminals), then the connection drops:
 * every exec ends, no descriptor, process or watch is left; the same
 * with the agent freed while execs run. */
START_TEST(test_agent_exec_cleanup)
{
    SKV_RTFX_REQUIRE();
    host h;
    skv_agent *a = agent_with_kernel(&h, "clean");
    int fds = count_fds();
    enum { N = 16 };
    int64_t pids[N];
    char *argv[] = {"sh", "-c", "sleep 1000 & cat"};
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof(id), "m%d", i);
        start_exec(a, 100 + i, id, "k1", argv, 3, i % 2 == 1, 0);
        ck_assert_int_eq(h.n_replies, i + 1);
        pids[i] = h.exec_pid;
    }
    ck_assert_uint_eq(skv_agent_exec_count(a), N);
    for (int i = 0; i < 5; i++)
        loop_once(a, &h, NULL, 10, false);
    ck_assert_int_ge(h.max_nw, N);
    skv_agent_disconnected(a, wall_ms());
    ck_assert_uint_eq(skv_agent_exec_count(a), 0);
    ck_assert_int_eq(h.nw, 0);
    ck_assert_int_eq(count_fds(), fds);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(kill((pid_t)pids[i], 0), -1);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
    /* Reconnected, execs again, and the agent is freed under them. */
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), NULL), NULL);
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
    feed(a, SKV_PROTO_RESPONSE, 1, SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof(id), "f%d", i);
        start_exec(a, 200 + i, id, "k1", argv, 3, i % 2 == 1, 0);
        pids[i] = h.exec_pid;
    }
    int64_t init = 0;
    {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s/agent-clean/containers", skv_rtfx_root);
        skv_runtime_options ro = SKV_RUNTIME_OPTIONS_INIT;
        ro.state_dir = dir;
        skv_runtime *rt = NULL;
        SKV_CK_OK(skv_runtime_open(&rt, &ro, NULL), NULL);
        init = init_pid(rt, "k1");
        skv_runtime_free(rt);
    }
    skv_agent_free(a);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(kill((pid_t)pids[i], 0), -1);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(live_in_ns(init), 0);
    char state[PATH_MAX];
    snprintf(state, sizeof(state), "%s/agent-clean/containers", skv_rtfx_root);
    destroy_all(state);
}
END_TEST

/* ---- through the sokovan-agent daemon ------------------------------------------
 * The real agent program against a fake manager on a Unix socket in this
 * process: exec.* frames over the wire, the exec descriptors on the
 * daemon's libuv loop (exec_watch.c). The fault: the manager connection
 * drops under a running exec; the daemon must kill it. */

typedef struct wire {
    int fd;                     /* the agent's connection */
    skv_proto_reader *r;
    host h;                     /* what arrived (decoded as on_frame does) */
    uint64_t last_type_req;     /* request id of the last response */
    skv_proto_type last_type;
} wire;

static void wire_send(wire *w, skv_proto_kind kind, uint64_t id,
                      skv_proto_type t, const void *body)
{
    void *frame = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, kind, id, t, body,
                                       wall_ms(), NULL, NULL), NULL);
    const char *p = frame;
    while (len) {
        ssize_t n = send(w->fd, p, len, MSG_NOSIGNAL);
        ck_assert_int_gt(n, 0);
        p += n;
        len -= (size_t)n;
    }
    skv_free(frame);
}

/* Read frames until one of type t (up to 20 s); the others are recorded.
 * agent.register is answered on the way. */
static void wire_until(wire *w, skv_proto_type t)
{
    int64_t end = wall_ms() + 20000;
    while (wall_ms() < end) {
        const void *p;
        size_t len;
        int got;
        while ((got = skv_proto_reader_next(w->r, &p, &len, NULL)) == 1) {
            skv_proto_envelope env;
            SKV_CK_OK(skv_proto_envelope_decode(&env, p, len, NULL), NULL);
            on_frame(&w->h, &env);
            w->last_type = env.type;
            w->last_type_req = env.request_id;
            if (env.type == SKV_PROTO_AGENT_REGISTER) {
                skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
                wire_send(w, SKV_PROTO_RESPONSE, env.request_id,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
            }
            skv_proto_envelope_free(&env);
            if (w->last_type == t)
                return;
        }
        struct pollfd pf = {w->fd, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        char buf[65536];
        ssize_t n = recv(w->fd, buf, sizeof(buf), 0);
        ck_assert_msg(n > 0, "the agent closed the connection");
        SKV_CK_OK(skv_proto_reader_feed(w->r, buf, (size_t)n, NULL), NULL);
    }
    ck_abort_msg("no %s from the agent", skv_proto_type_name(t));
}

static int listen_unix(const char *path)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(s, 4), 0);
    return s;
}

static pid_t spawn_agent(const char *dir, const char *sock)
{
    char prog[PATH_MAX], key[PATH_MAX], state[PATH_MAX], mgr[PATH_MAX],
        log[PATH_MAX], run[PATH_MAX];
    snprintf(prog, sizeof(prog), "%s/bin/sokovan-agent", skv_test_build_dir());
    snprintf(key, sizeof(key), "%s/agent.key", dir);
    snprintf(state, sizeof(state), "%s/state", dir);
    snprintf(mgr, sizeof(mgr), "unix:%s", sock);
    snprintf(log, sizeof(log), "%s/agent.log", dir);
    /* Its own run dir (the default is under /run, shared with any real
     * agent on the host), so the test destroys exactly its containers. */
    snprintf(run, sizeof(run), "%s/run", dir);
    FILE *f = fopen(key, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "access_key=%s\nsecret_key=%s\n", AK, SK);
    fclose(f);
    chmod(key, 0600);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(prog, prog, "--manager", mgr, "--key-file", key,
              "--state-dir", state, "--run-dir", run,
              "--image-dir", skv_rtfx_images,
              "--plugins", "cpu;mem", "--reconnect-min-ms", "20",
              "--reconnect-max-ms", "100", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int accept_agent(int lfd)
{
    struct pollfd pf = {lfd, POLLIN, 0};
    ck_assert_int_eq(poll(&pf, 1, 20000), 1);
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    return fd;
}

static void wire_start(wire *w, uint64_t req, const char *id, char **argv,
                       size_t argc, bool tty)
{
    skv_proto_exec_start m;
    memset(&m, 0, sizeof(m));
    m.session_id = SID;
    m.kernel_id = "k1";
    m.exec_id = (char *)id;
    m.argv = argv;
    m.n_argv = argc;
    m.tty = tty;
    m.rows = 33;
    m.cols = 77;
    wire_send(w, SKV_PROTO_REQUEST, req, SKV_PROTO_EXEC_START, &m);
    wire_until(w, SKV_PROTO_EXEC_START_REPLY);
    ck_assert_uint_eq(w->last_type_req, req);
}

START_TEST(test_agent_daemon_exec)
{
    SKV_RTFX_REQUIRE();
    char dir[PATH_MAX], sock[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/daemon", skv_rtfx_root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(sock, sizeof(sock), "%s/m.sock", dir);
    int lfd = listen_unix(sock);
    pid_t ag = spawn_agent(dir, sock);
    wire w;
    memset(&w, 0, sizeof(w));
    SKV_CK_OK(skv_proto_reader_new(&w.r, 0, NULL), NULL);
    w.fd = accept_agent(lfd);
    wire_until(&w, SKV_PROTO_AGENT_REGISTER);
    char *sl[] = {"sh", "-c", "sleep 1000"};
    skv_proto_kernel_create kc;
    memset(&kc, 0, sizeof(kc));
    kc.session_id = SID;
    kc.kernel_id = "k1";
    kc.image = "busybox";
    kc.argv = sl;
    kc.n_argv = 3;
    wire_send(&w, SKV_PROTO_REQUEST, 2, SKV_PROTO_KERNEL_CREATE, &kc);
    wire_until(&w, SKV_PROTO_KERNEL_CREATE_REPLY);
    /* Pipes: stdin in, output and exit back. */
    char *cat[] = {"sh", "-c", "cat; echo done >&2; exit 3"};
    wire_start(&w, 3, "p", cat, 3, false);
    skv_proto_exec_data d = {"p", NULL, (uint8_t *)"hello", 5, 1};
    wire_send(&w, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_STDIN, &d);
    wire_until(&w, SKV_PROTO_EXEC_EXIT);
    ck_assert_int_eq(w.h.exit_code, 3);
    ck_assert_msg(strstr(w.h.out_text, "hello") &&
                  strstr(w.h.out_text, "done\n"), "%s", w.h.out_text);
    /* A terminal with its window size. */
    w.h.out_text_len = 0;
    w.h.out_text[0] = '\0';
    char *tt[] = {"sh", "-c", "tty; stty size"};
    wire_start(&w, 4, "t", tt, 3, true);
    wire_until(&w, SKV_PROTO_EXEC_EXIT);
    ck_assert_msg(strstr(w.h.out_text, "/dev/pts/") &&
                  strstr(w.h.out_text, "33 77"), "%s", w.h.out_text);
    /* The fault: the connection drops under a running exec. */
    char *lo[] = {"sleep", "1000"};
    wire_start(&w, 5, "l", lo, 2, false);
    pid_t victim = (pid_t)w.h.exec_pid;
    ck_assert_int_eq(kill(victim, 0), 0);
    close(w.fd);
    int64_t end = wall_ms() + 10000;
    while (kill(victim, 0) == 0 && wall_ms() < end)
        usleep(20000);
    ck_assert_msg(kill(victim, 0) < 0, "exec %d outlived its connection",
                  (int)victim);
    /* Reconnected, then stopped with an exec running: it goes too. */
    skv_proto_reader_free(w.r);
    SKV_CK_OK(skv_proto_reader_new(&w.r, 0, NULL), NULL);
    w.fd = accept_agent(lfd);
    wire_until(&w, SKV_PROTO_AGENT_REGISTER);
    wire_start(&w, 6, "s", lo, 2, true);
    victim = (pid_t)w.h.exec_pid;
    ck_assert_int_eq(kill(ag, SIGTERM), 0);
    int st = 0;
    ck_assert_int_eq(waitpid(ag, &st, 0), ag);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent status %d",
                  st);
    ck_assert_int_eq(kill(victim, 0), -1);
    close(w.fd);
    close(lfd);
    skv_proto_reader_free(w.r);
    char run[PATH_MAX];
    snprintf(run, sizeof(run), "%s/run", dir);
    destroy_all(run);
}
END_TEST

Suite *skv_test_suite_exec(void);
Suite *skv_test_suite_exec(void)
{
    Suite *s = suite_create("exec");
    TCase *tc = tcase_create("runtime_exec");
    tcase_add_unchecked_fixture(tc, skv_rtfx_setup_import, skv_rtfx_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exec_echo_exit_codes);
    tcase_add_test(tc, test_exec_bad_input);
    tcase_add_test(tc, test_exec_terminated_refused);
    tcase_add_test(tc, test_exec_identity);
    tcase_add_test(tc, test_exec_tty_resize);
    tcase_add_test(tc, test_exec_leaves_nothing);
    tcase_add_test(tc, test_exec_process_backend);
    suite_add_tcase(s, tc);
    tc = tcase_create("agent_exec");
    tcase_add_unchecked_fixture(tc, skv_rtfx_setup_import, skv_rtfx_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_agent_exec_echo);
    tcase_add_test(tc, test_agent_exec_refused);
    tcase_add_test(tc, test_agent_exec_exited_kernel);
    tcase_add_test(tc, test_agent_exec_100mb);
    tcase_add_test(tc, test_agent_exec_credit);
    tcase_add_test(tc, test_agent_exec_tty);
    tcase_add_test(tc, test_agent_exec_cleanup);
    tcase_add_test(tc, test_agent_daemon_exec);
    suite_add_tcase(s, tc);
    return s;
}
