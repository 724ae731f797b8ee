/* A hostile client before authentication, against a real sokovan-manager
 * (tests/e2e_cluster.h): huge length prefixes with payloads that never
 * finish, more idle connections than descriptors, truncated frames, a
 * flood of incomplete frames just under the pre-authentication limit, a
 * large first request from an honest client, and the Unix socket's mode
 * and group. Each attack is reproduced through raw Unix-socket
 * connections; the test then shows the manager stays small and keeps
 * serving agents and admins (`sokovan agents` within 1 s, `run --wait`).
 *
 * Needs root (the agent runs a container), /bin/busybox and the programs
 * in <build>/bin; otherwise each test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "skv_test.h"
#include "e2e_cluster.h"

static e2e_cluster g;
static const char *g_skip;
static uint64_t g_req;   /* request ids of raw_authenticate */

static void setup(void)
{
    g_skip = NULL;
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
}

static void teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define REQUIRE()                                                              \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: SKIP: %s\n", __func__, g_skip);               \
            return;                                                            \
        }                                                                      \
    } while (0)

#define OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

#define MIB (1024 * 1024)

/* ---- the manager ---------------------------------------------------------- */

/* Start the manager with the usual flags plus extra (NULL-terminated, may
 * be NULL); wait for its socket and admin key. */
static int start_manager(const char *const *extra)
{
    char exe[PATH_MAX + 32], key[PATH_MAX + 16];
    char *argv[40];
    int n = 0;
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g.bin);
    snprintf(key, sizeof(key), "%s/admin.key", g.data);
    const char *base[] = {exe, "--data-dir", g.data, "--listen", g.sock,
                          "--tcp", "none", "--bootstrap-agents", "a1",
                          "--heartbeat-interval-ms", "500"};
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
        argv[n++] = (char *)base[i];
    for (; extra && *extra && n < 39; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    unlink(g.sock);
    g.mgr = e2e_spawn(&g, "manager", argv);
    if (g.mgr < 0)
        return e2e_fail(&g, "fork: %s%s", strerror(errno), "");
    for (int64_t end = e2e_now_ms() + 15000; e2e_now_ms() < end;) {
        if (!e2e_alive(g.mgr)) {
            char tail[400];
            e2e_log_tail(&g, "manager", tail, sizeof(tail));
            g.mgr = -1;
            return e2e_fail(&g, "sokovan-manager exited: %s%s", tail, "");
        }
        if (e2e_file_exists(g.sock) && e2e_file_exists(key))
            break;
        e2e_sleep_ms(20);
    }
    skv_error e = SKV_ERROR_INIT;
    if (skv_client_read_keyfile(g.admin_ak, g.admin_sk, key, &e))
        return e2e_fail(&g, "admin key: %s%s", e.message, "");
    return 0;
}

/* Resident memory of pid in bytes (VmRSS), or -1. */
static long rss_bytes(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Under AddressSanitizer the daemons carry shadow memory and a quarantine
 * of freed blocks: only growth is comparable there. */
static bool asan_build(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

/* ---- raw connections -------------------------------------------------------- */

/* A non-blocking connection to the manager's socket, or -1. */
static int raw_connect(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", g.sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

static void put_len(uint8_t h[4], uint32_t n)
{
    h[0] = (uint8_t)(n >> 24);
    h[1] = (uint8_t)(n >> 16);
    h[2] = (uint8_t)(n >> 8);
    h[3] = (uint8_t)n;
}

/* Whether the manager closed fd (EOF or reset), draining what it sent. */
static bool peer_closed(int fd)
{
    char buf[4096];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                       errno != EINTR))
            return true;
        if (r < 0)
            return false;
    }
}

/* Milliseconds until the manager closes fd (-1: not within limit_ms). */
static int64_t ms_until_closed(int fd, int limit_ms)
{
    int64_t t0 = e2e_now_ms();
    while (e2e_now_ms() - t0 < limit_ms) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 20);
        if (peer_closed(fd))
            return e2e_now_ms() - t0;
    }
    return -1;
}

/* Send one signed agent.list on fd and wait for its reply (0), so the
 * connection is authenticated. */
static int raw_authenticate(int fd)
{
    skv_proto_credentials cred = {g.admin_ak, g.admin_sk};
    skv_proto_agent_list q = {0};
    void *frame = NULL;
    size_t len = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);  /* signatures carry wall time */
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, ++g_req,
                                 SKV_PROTO_AGENT_LIST, &q, now, &cred, NULL))
        return -1;
    ssize_t w = send(fd, frame, len, MSG_NOSIGNAL);
    skv_free(frame);
    if (w != (ssize_t)len)
        return -1;
    char buf[4096];
    for (int64_t end = e2e_now_ms() + 5000; e2e_now_ms() < end;) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 50);
        ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r > 0)
            return 0;
        if (r == 0)
            return -1;
    }
    return -1;
}

/* ---- the CLI ----------------------------------------------------------------- */

/* Run `sokovan ARGS...` as the admin; exit status (or -1), the time it
 * took in *ms, stdout+stderr in out. */
static int cli(int64_t *ms, char *out, size_t cap, const char *const *args)
{
    char exe[PATH_MAX + 32], key[PATH_MAX + 16], log[PATH_MAX + 32];
    char *argv[24];
    int n = 0;
    snprintf(exe, sizeof(exe), "%s/sokovan", g.bin);
    snprintf(key, sizeof(key), "%s/admin.key", g.data);
    snprintf(log, sizeof(log), "%s/logs/cli.out", g.root);
    argv[n++] = exe;
    argv[n++] = "--endpoint";
    argv[n++] = g.endpoint;
    argv[n++] = "--key-file";
    argv[n++] = key;
    for (; *args && n < 23; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    int64_t t0 = e2e_now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execv(exe, argv);
        _exit(127);
    }
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    *ms = e2e_now_ms() - t0;
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (f) {
        size_t k = fread(out, 1, cap - 1, f);
        out[k] = '\0';
        fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `sokovan agents` answers, within 1 s. */
static void agents_answer_fast(const char *when)
{
    char out[4096];
    int64_t ms = 0;
    const char *args[] = {"agents", NULL};
    int rc = cli(&ms, out, sizeof(out), args);
    ck_assert_msg(rc == 0, "%s: sokovan agents exited %d: %s", when, rc, out);
    ck_assert_msg(ms < 1000, "%s: sokovan agents took %lld ms", when,
                  (long long)ms);
}

/* ---- 1. huge length prefixes, payloads that never finish -------------------- */

/* n connections each announce `announce` payload bytes and send up to
 * `send_bytes` of them, never finishing. Returns how many the manager
 * closed; *peak: the manager's largest RSS seen meanwhile. */
static int flood(int n, uint32_t announce, size_t send_bytes, long *peak)
{
    enum { MAXC = 64 };
    static char chunk[256 * 1024];
    int fd[MAXC];
    size_t sent[MAXC];
    bool closed[MAXC];
    uint8_t h[4];
    int nclosed = 0;
    ck_assert_int_le(n, MAXC);
    put_len(h, announce);
    for (int i = 0; i < n; i++) {
        fd[i] = raw_connect();
        ck_assert_msg(fd[i] >= 0, "connect %d: %s", i, strerror(errno));
        ck_assert_int_eq(send(fd[i], h, 4, MSG_NOSIGNAL), 4);
        sent[i] = 0;
        closed[i] = false;
    }
    *peak = rss_bytes(g.mgr);
    /* Push bytes while the manager takes them, until every connection is
     * closed or has sent everything and 2 s passed without progress. */
    int64_t idle_since = e2e_now_ms();
    while (e2e_now_ms() - idle_since < 2000 && nclosed < n) {
        bool moved = false;
        for (int i = 0; i < n; i++) {
            if (closed[i])
                continue;
            if (peer_closed(fd[i])) {
                closed[i] = true;
                nclosed++;
                moved = true;
                continue;
            }
            size_t want = send_bytes - sent[i];
            if (want > sizeof(chunk))
                want = sizeof(chunk);
            ssize_t w = want ? send(fd[i], chunk, want,
                                    MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
            if (w > 0) {
                sent[i] += (size_t)w;
                moved = true;
            } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                closed[i] = true;
                nclosed++;
                moved = true;
            }
        }
        long r = rss_bytes(g.mgr);
        if (r > *peak)
            *peak = r;
        if (moved)
            idle_since = e2e_now_ms();
        else
            e2e_sleep_ms(10);
    }
    for (int i = 0; i < n; i++)
        close(fd[i]);
    return nclosed;
}

START_TEST(test_preauth_huge_prefix)
{
    REQUIRE();
    OK(start_manager(NULL));
    long base = rss_bytes(g.mgr), peak = 0;
    ck_assert_int_gt(base, 0);
    int closed = flood(40, 16u * MIB, 15u * MIB, &peak);
    fprintf(stderr, "huge prefix: manager RSS %ld kB before, peak %ld kB, "
            "%d of 40 connections closed\n", base / 1024, peak / 1024,
            closed);
    if (asan_build())
        ck_assert_msg(peak - base < 56L * MIB, "RSS grew by %ld kB",
                      (peak - base) / 1024);
    else
        ck_assert_msg(peak < 64L * MIB, "manager RSS peaked at %ld kB",
                      peak / 1024);
    ck_assert_msg(closed == 40, "only %d of 40 connections closed", closed);
    agents_answer_fast("after the flood");
    e2e_stop(&g);
}
END_TEST

/* ---- 2. incomplete frames under the pre-auth limit: the global cap ---------- */

START_TEST(test_preauth_buffered_cap)
{
    REQUIRE();
    /* 60 connections of 1 MiB incomplete frames want 60 MiB; 8 MiB may be
     * held, so most are dropped, oldest first. */
    const char *extra[] = {"--preauth-frame-max", "1m", "--max-frame", "8m",
                           "--max-buffered-bytes", "8m", NULL};
    OK(start_manager(extra));
    long base = rss_bytes(g.mgr), peak = 0;
    int closed = flood(60, MIB, MIB - 1, &peak);
    fprintf(stderr, "buffered cap: manager RSS %ld kB before, peak %ld kB, "
            "%d of 60 connections closed\n", base / 1024, peak / 1024,
            closed);
    ck_assert_msg(closed >= 60 - 8, "only %d of 60 connections closed",
                  closed);
    /* ASan keeps freed blocks resident (quarantine): there the closed
     * connections are the measure */
    ck_assert_msg(asan_build() || peak - base < 40L * MIB, "RSS grew by %ld "
                  "kB", (peak - base) / 1024);
    agents_answer_fast("after the flood");
    e2e_stop(&g);
}
END_TEST

/* ---- 3. more idle connections than descriptors ----------------------------- */

static void set_nofile(rlim_t soft)
{
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < soft)
        rl.rlim_max = soft;
    rl.rlim_cur = soft;
    ck_assert_msg(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit %llu: %s",
                  (unsigned long long)soft, strerror(errno));
}

START_TEST(test_preauth_idle_connections)
{
    REQUIRE();
    enum { N = 1100 };
    static int fd[N];
    /* the manager inherits `ulimit -n 1024`; the test needs more */
    set_nofile(1024);
    int started = start_manager(NULL);
    set_nofile(4096);
    OK(started);
    OK(e2e_start_agent(&g, 0));
    skv_client *cl = NULL;
    OK(e2e_connect(&g, &cl, NULL, NULL));
    OK(e2e_wait_agents(&g, cl, 1));
    int opened = 0;
    for (int i = 0; i < N; i++)
        if ((fd[i] = raw_connect()) >= 0)
            opened++;
    fprintf(stderr, "idle: %d of %d connections opened\n", opened, N);
    e2e_sleep_ms(200);
    long rss = rss_bytes(g.mgr);
    fprintf(stderr, "idle: manager RSS %ld kB\n", rss / 1024);
    ck_assert_msg(asan_build() || rss < 64L * MIB, "manager RSS %ld kB with "
                  "1100 idle connections", rss / 1024);
    agents_answer_fast("with 1100 idle connections");
    /* the oldest idle connections made room (auth_timeout_ms is 10 s: it
     * has not struck yet) */
    int dropped = 0;
    for (int i = 0; i < 100; i++)
        dropped += fd[i] >= 0 && peer_closed(fd[i]);
    ck_assert_msg(dropped > 0, "none of the 100 oldest idle connections was "
                  "dropped");
    /* the agent's connection survived: a session runs to the end */
    char out[4096];
    int64_t ms = 0;
    const char *run[] = {"run", "--cpu", "0.1", "--mem", "32m", "--wait",
                         "busybox", "--", "echo", "preauth-ok", NULL};
    int rc = cli(&ms, out, sizeof(out), run);
    ck_assert_msg(rc == 0 && strstr(out, "preauth-ok"), "run --wait exited "
                  "%d after %lld ms: %s", rc, (long long)ms, out);
    for (int i = 0; i < N; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* At the cap, authenticated connections stay; a newcomer is refused
 * only when no unauthenticated one can make room. */
START_TEST(test_preauth_cap_authenticated)
{
    REQUIRE();
    const char *extra[] = {"--max-connections", "2", NULL};
    OK(start_manager(extra));
    int a = raw_connect(), b = raw_connect();
    ck_assert(a >= 0 && b >= 0);
    ck_assert_int_eq(raw_authenticate(a), 0);
    /* b is unauthenticated: a newcomer takes its place */
    int c = raw_connect();
    ck_assert_int_ge(c, 0);
    ck_assert_msg(ms_until_closed(b, 1000) >= 0, "the unauthenticated "
                  "connection was not dropped for the newcomer");
    ck_assert_int_eq(raw_authenticate(c), 0);
    /* both authenticated: the next newcomer is refused at once */
    int d = raw_connect();
    ck_assert_int_ge(d, 0);
    ck_assert_msg(ms_until_closed(d, 1000) >= 0, "a third connection was "
                  "accepted above max_connections 2");
    ck_assert_int_eq(raw_authenticate(a), 0);
    ck_assert_int_eq(raw_authenticate(c), 0);
    /* a slot freed is a slot taken */
    close(a);
    e2e_sleep_ms(100);
    int f = raw_connect();
    ck_assert_int_ge(f, 0);
    ck_assert_int_eq(raw_authenticate(f), 0);
    close(b);
    close(c);
    close(d);
    close(f);
    e2e_stop(&g);
}
END_TEST

/* ---- 4. truncated frames and silent connections time out -------------------- */

START_TEST(test_preauth_timeouts)
{
    REQUIRE();
    const char *extra[] = {"--frame-timeout-ms", "500", "--auth-timeout-ms",
                           "2000", NULL};
    OK(start_manager(extra));
    uint8_t h[4];
    put_len(h, 100);
    /* a truncated frame: 4 + 10 of 104 bytes, then silence */
    int trunc = raw_connect();
    ck_assert_int_ge(trunc, 0);
    ck_assert_int_eq(send(trunc, h, 4, MSG_NOSIGNAL), 4);
    ck_assert_int_eq(send(trunc, "0123456789", 10, MSG_NOSIGNAL), 10);
    /* a silent connection; an authenticated one that then truncates; an
     * authenticated one that stays silent */
    int silent = raw_connect(), authed = raw_connect(), quiet = raw_connect();
    ck_assert(silent >= 0 && authed >= 0 && quiet >= 0);
    ck_assert_int_eq(raw_authenticate(authed), 0);
    ck_assert_int_eq(raw_authenticate(quiet), 0);
    ck_assert_int_eq(send(authed, h, 4, MSG_NOSIGNAL), 4);
    int64_t t = ms_until_closed(trunc, 1800);
    ck_assert_msg(t >= 0, "truncated frame still open after 1.8 s");
    t = ms_until_closed(authed, 1800);
    ck_assert_msg(t >= 0, "authenticated truncated frame still open");
    t = ms_until_closed(silent, 4000);
    ck_assert_msg(t >= 0, "silent unauthenticated connection still open");
    /* authenticated and silent: no frame pending, nothing to time out */
    ck_assert_msg(ms_until_closed(quiet, 1000) < 0, "an authenticated idle "
                  "connection was closed");
    ck_assert_int_eq(raw_authenticate(quiet), 0);
    close(trunc);
    close(silent);
    close(authed);
    close(quiet);
    agents_answer_fast("after the timeouts");
    e2e_stop(&g);
}
END_TEST

/* ---- 5. the first frame is small; an honest large first request works ------- */

START_TEST(test_preauth_first_frame)
{
    REQUIRE();
    OK(start_manager(NULL));
    /* 300 KiB announced before any authentication: refused at once */
    uint8_t h[4];
    put_len(h, 300 * 1024);
    int fd = raw_connect();
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(send(fd, h, 4, MSG_NOSIGNAL), 4);
    ck_assert_msg(ms_until_closed(fd, 1000) >= 0, "a 300 KiB first frame "
                  "was not refused");
    close(fd);
    /* the client library authenticates with a small request first */
    static char arg[3][100 * 1024];
    for (int i = 0; i < 3; i++) {
        memset(arg[i], 'x', sizeof(arg[i]) - 1);
        arg[i][sizeof(arg[i]) - 1] = '\0';
    }
    char *argv[] = {"echo", arg[0], arg[1], arg[2], NULL};
    e2e_job j = {.name = "big", .slots = "cpu=0.1,mem=32m", .argv = argv};
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    char sid[E2E_ID_MAX];
    OK(e2e_connect(&g, &cl, NULL, NULL));
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    ck_assert_uint_gt(strlen(sid), 0);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- 6. the Unix socket's mode and group ------------------------------------- */

/* Run the manager with extra flags expecting a usage error (status 2)
 * whose message contains want. */
static void refused(const char *flag, const char *value, const char *want)
{
    char cmd[PATH_MAX * 2], out[1024];
    snprintf(cmd, sizeof(cmd), "%s/sokovan-manager --data-dir %s/bad "
             "--listen %s/bad.sock %s '%s' 2>&1; echo \"status=$?\"", g.bin,
             g.root, g.root, flag, value);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "status=2") && strstr(out, want), "%s %s: "
                  "%s", flag, value, out);
}

START_TEST(test_preauth_socket_mode)
{
    REQUIRE();
    struct stat st;
    OK(start_manager(NULL));
    ck_assert_int_eq(stat(g.sock, &st), 0);
    ck_assert_msg((st.st_mode & 07777) == 0660, "default socket mode %o",
                  st.st_mode & 07777);
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    const char *extra[] = {"--socket-mode", "0640", "--socket-group",
                           "4242", NULL};
    OK(start_manager(extra));
    ck_assert_int_eq(stat(g.sock, &st), 0);
    ck_assert_msg((st.st_mode & 07777) == 0640, "socket mode %o",
                  st.st_mode & 07777);
    ck_assert_int_eq(st.st_gid, 4242);
    agents_answer_fast("socket 0640");   /* as root: still reachable */
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    refused("--socket-mode", "999", "not an octal mode");
    refused("--socket-mode", "rw", "not an octal mode");
    refused("--socket-mode", "01660", "not an octal mode");
    refused("--socket-mode", "0066", "owner");
    refused("--socket-group", "no-such-group-skv", "no group named");
    refused("--preauth-frame-max", "1k", "outside");
    refused("--max-buffered-bytes", "1m", "max_frame");
    refused("--max-connections", "-1", "non-negative");
    refused("--frame-timeout-ms", "0", "outside");
    char bad[PATH_MAX + 16];
    snprintf(bad, sizeof(bad), "%s/bad.sock", g.root);
    ck_assert_msg(!e2e_file_exists(bad), "a refused start left its socket");
    e2e_stop(&g);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, setup, teardown);                     \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_preauth(void);
Suite *skv_test_suite_preauth(void)
{
    Suite *s = suite_create("preauth");
    ADD_CASE(s, "huge_prefix", test_preauth_huge_prefix);
    ADD_CASE(s, "buffered_cap", test_preauth_buffered_cap);
    ADD_CASE(s, "idle_connections", test_preauth_idle_connections);
    ADD_CASE(s, "cap_authenticated", test_preauth_cap_authenticated);
    ADD_CASE(s, "timeouts", test_preauth_timeouts);
    ADD_CASE(s, "first_frame", test_preauth_first_frame);
    ADD_CASE(s, "socket_mode", test_preauth_socket_mode);
    return s;
}
