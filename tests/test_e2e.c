/* End-to-end: real sokovan-manager and sokovan-agent processes on a Unix
 * socket, driven through the client library (tests/e2e_cluster.h): 100
 * concurrent sessions, a multi-node session over two agents, agent kill -9
 * and restart, manager kill -9 during a burst of submissions, wrong keys /
 * replays / stale and malformed frames, and users isolated from each other.
 *
 * Needs root (containers), /bin/busybox and the daemons in <build>/bin
 * (make progs); otherwise every test says why it is skipped. Each test has
 * its own cluster in a scratch directory made by an unchecked fixture: its
 * teardown runs in the runner process even when the test died on a failed
 * assertion, kills every daemon recorded there, destroys the containers and
 * removes the directory.
 * SPDX-License-Identifier: Apache-2.0 */
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "skv_test.h"
#include "e2e_cluster.h"

static e2e_cluster g;
static const char *g_skip;

static void e2e_setup(void)
{
    g_skip = NULL;
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
}

static void e2e_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define E2E_REQUIRE()                                                          \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

static int ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Manager plus n agents (agent i on CPU i, or all CPUs when n == 1), all
 * registered; *cl is an admin client. */
static void cluster_up(int n, skv_client **cl)
{
    E2E_OK(e2e_start_manager(&g, "a1,a2,a3"));
    for (int i = 0; i < n; i++) {
        if (n == 1)
            snprintf(g.agent_cpus[i], sizeof(g.agent_cpus[i]), "0-%d",
                     ncpus() - 1);
        else
            snprintf(g.agent_cpus[i], sizeof(g.agent_cpus[i]), "%d",
                     i % ncpus());
        E2E_OK(e2e_start_agent(&g, i));
    }
    E2E_OK(e2e_connect(&g, cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, *cl, (size_t)n));
}

static void submit_ok(skv_client *cl, char *sid, const e2e_job *j)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(e2e_submit(cl, sid, j, &e), &e);
    ck_assert_uint_gt(strlen(sid), 0);
}

/* Wait for the end; status, exit code and main stdout must match. */
static void expect_end(skv_client *cl, const char *sid, const char *status,
                       int exit_code, const char *out, int timeout_ms)
{
    skv_proto_session_show_reply r;
    skv_error e = SKV_ERROR_INIT;
    E2E_OK(e2e_wait_final(&g, cl, sid, timeout_ms, &r));
    ck_assert_msg(!strcmp(r.session.status, status), "%s: %s (%s), wanted %s",
                  sid, r.session.status, r.session.status_reason ?
                  r.session.status_reason : "", status);
    ck_assert_msg(r.session.exit_code == exit_code, "%s: exit code %d, "
                  "wanted %d", sid, r.session.exit_code, exit_code);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    if (out) {
        char buf[4096];
        SKV_CK_OK(e2e_logs(cl, sid, NULL, buf, sizeof(buf), &e), &e);
        ck_assert_msg(!strcmp(buf, out), "%s: output '%s', wanted '%s'", sid,
                      buf, out);
    }
}

START_TEST(test_e2e_concurrent)
{
    E2E_REQUIRE();
    enum { N = 100 };
    skv_client *cl = NULL;
    cluster_up(1, &cl);
    static char sid[N][E2E_ID_MAX];
    for (int i = 0; i < N; i++) {
        char script[96], name[32];
        snprintf(script, sizeof(script), "echo hello-%d; exit %d", i, i % 5);
        snprintf(name, sizeof(name), "c%d", i);
        e2e_job j = {name, script, "cpu=0.1,mem=16m", 1, false, NULL};
        submit_ok(cl, sid[i], &j);
    }
    for (int i = 0; i < N; i++) {
        char out[32];
        snprintf(out, sizeof(out), "hello-%d\n", i);
        expect_end(cl, sid[i], "TERMINATED", i % 5, out, 180000);
    }
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* Kernel of the session placed on `agent`, by role+idx ("main1"). */
static const skv_proto_kernel_info *kernel_named(const skv_proto_session_info *s,
                                                 const char *role, uint32_t idx)
{
    for (size_t i = 0; i < s->n_kernels; i++)
        if (s->kernels[i].role && !strcmp(s->kernels[i].role, role) &&
            s->kernels[i].idx == idx)
            return &s->kernels[i];
    return NULL;
}

START_TEST(test_e2e_multinode)
{
    E2E_REQUIRE();
    if (ncpus() < 2) {
        fprintf(stderr, "%s: skipped: needs 2 CPUs (one per agent)\n", __func__);
        return;
    }
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(2, &cl);
    /* 3 x 0.4 CPU do not fit one 1-CPU agent: the gang spans both */
    e2e_job j = {"mn", "echo $SOKOVAN_CLUSTER_ROLE $SOKOVAN_CLUSTER_IDX "
                 "$SOKOVAN_CLUSTER_SIZE $SOKOVAN_CLUSTER_MODE "
                 "$SOKOVAN_CLUSTER_HOSTS; if [ $SOKOVAN_CLUSTER_ROLE = main ]; "
                 "then sleep 2; else sleep 600; fi",
                 "cpu=0.4,mem=16m", 3, true, NULL};
    char sid[E2E_ID_MAX];
    submit_ok(cl, sid, &j);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, &r));
    ck_assert_str_eq(r.session.status, "TERMINATED");
    ck_assert_int_eq(r.session.exit_code, 0);
    ck_assert_uint_eq(r.session.n_kernels, 3);
    const char *want[3][2] = {{"main", "1"}, {"sub", "1"}, {"sub", "2"}};
    const char *agents[3];
    for (int i = 0; i < 3; i++) {
        const skv_proto_kernel_info *k =
            kernel_named(&r.session, want[i][0], (uint32_t)atoi(want[i][1]));
        ck_assert_msg(k != NULL, "no kernel %s%s", want[i][0], want[i][1]);
        agents[i] = k->agent_id;
        char out[512], expect[64];
        SKV_CK_OK(e2e_logs(cl, sid, k->kernel_id, out, sizeof(out), &e), &e);
        snprintf(expect, sizeof(expect), "%s %s 3 multi-node ", want[i][0],
                 want[i][1]);
        ck_assert_msg(!strncmp(out, expect, strlen(expect)), "kernel %s: '%s'",
                      k->kernel_id, out);
        ck_assert_msg(strstr(out, "main1") && strstr(out, "sub2"),
                      "hosts in '%s'", out);
    }
    ck_assert_msg(strcmp(agents[0], agents[1]) || strcmp(agents[0], agents[2]),
                  "all kernels on %s", agents[0]);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

START_TEST(test_e2e_agent_restart)
{
    E2E_REQUIRE();
    skv_client *cl = NULL;
    cluster_up(1, &cl);
    e2e_job j = {"survivor", "sleep 3; echo survived; exit 7", "cpu=0.1,mem=16m",
                 1, false, NULL};
    char sid[E2E_ID_MAX];
    submit_ok(cl, sid, &j);
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    e2e_sleep_ms(300);
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    e2e_sleep_ms(500);
    E2E_OK(e2e_start_agent(&g, 0));
    expect_end(cl, sid, "TERMINATED", 7, "survived\n", 60000);
    ck_assert(e2e_alive(g.agent[0]));
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- manager kill -9 during a burst ------------------------------------- */

enum { BURST = 500 };

typedef struct burst {
    char sid[BURST][E2E_ID_MAX];
    int acked;                   /* submissions acknowledged so far */
    int failed_at;               /* -1, or the index refused for good */
    char why[SKV_ERROR_MESSAGE_MAX];
    pthread_mutex_t mu;
} burst;

static burst g_burst;

/* A connection-level failure: reconnect and send the same token again. */
static bool transient(int rc)
{
    return rc == SKV_ESTATE || rc == SKV_ETIMEDOUT || rc == SKV_ESYS ||
           rc == SKV_EIO;
}

static void *burst_main(void *arg)
{
    burst *b = arg;
    skv_client *cl = NULL;
    for (int i = 0; i < BURST; i++) {
        char script[64], token[32], sid[E2E_ID_MAX];
        snprintf(script, sizeof(script), "echo run-%d", i);
        snprintf(token, sizeof(token), "tok-%d", i);
        e2e_job j = {NULL, script, "cpu=0.1,mem=16m", 1, false, token};
        skv_error e = SKV_ERROR_INIT;
        int rc = -1;
        for (int64_t end = e2e_now_ms() + 60000; e2e_now_ms() < end;) {
            if (!cl && e2e_connect(&g, &cl, NULL, NULL) != 0)
                continue;
            if ((rc = e2e_submit(cl, sid, &j, &e)) == 0 || !transient(rc))
                break;
            skv_client_free(cl);
            cl = NULL;
        }
        pthread_mutex_lock(&b->mu);
        if (rc == 0) {
            memcpy(b->sid[i], sid, sizeof(sid));
            b->acked = i + 1;
        } else {
            b->failed_at = i;
            snprintf(b->why, sizeof(b->why), "%s", e.message);
        }
        pthread_mutex_unlock(&b->mu);
        if (rc)
            break;
    }
    skv_client_free(cl);
    return NULL;
}

static int burst_acked(burst *b)
{
    pthread_mutex_lock(&b->mu);
    int n = b->failed_at >= 0 ? -1 : b->acked;
    pthread_mutex_unlock(&b->mu);
    return n;
}

static int count_status(const skv_proto_session_info *s, const char *status)
{
    int n = 0;
    for (size_t i = 0; i < s->n_history; i++)
        n += s->history[i].status && !strcmp(s->history[i].status, status);
    return n;
}

START_TEST(test_e2e_manager_restart)
{
    E2E_REQUIRE();
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(1, &cl);
    skv_client_free(cl);
    burst *b = &g_burst;
    memset(b, 0, sizeof(*b));
    b->failed_at = -1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, burst_main, b), 0);
    /* kill -9 in the middle of the burst, restart on the same data dir */
    for (int64_t end = e2e_now_ms() + 60000;
         burst_acked(b) >= 0 && burst_acked(b) < BURST / 4 && e2e_now_ms() < end;)
        e2e_sleep_ms(5);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    int at_kill = burst_acked(b);
    e2e_sleep_ms(200);
    E2E_OK(e2e_start_manager(&g, "a1,a2,a3"));
    pthread_join(th, NULL);
    ck_assert_msg(b->failed_at < 0, "submission %d refused: %s", b->failed_at,
                  b->why);
    ck_assert_int_eq(b->acked, BURST);
    ck_assert_msg(at_kill < BURST, "the burst ended before the kill");
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    for (int i = 0; i < BURST; i++) {
        char out[32];
        for (int k = 0; k < i; k++)
            ck_assert_msg(strcmp(b->sid[k], b->sid[i]), "%d and %d are both "
                          "%s", k, i, b->sid[i]);
        snprintf(out, sizeof(out), "run-%d\n", i);
        expect_end(cl, b->sid[i], "TERMINATED", 0, out, 180000);
        skv_proto_session_show_reply r;
        SKV_CK_OK(skv_client_show(cl, &r, b->sid[i], &e), &e);
        ck_assert_msg(count_status(&r.session, "RUNNING") == 1, "%s ran %d "
                      "times", b->sid[i], count_status(&r.session, "RUNNING"));
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    }
    /* nothing beyond the acknowledged submissions was created */
    skv_proto_session_list q = {0};
    q.limit = 2 * BURST;
    skv_proto_session_list_reply lr = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &lr, &e), &e);
    ck_assert_uint_eq(lr.total, BURST);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    pthread_mutex_destroy(&b->mu);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- authentication at the socket --------------------------------------- */

static int64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int raw_connect(void)
{
    struct sockaddr_un a = {0};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", g.sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void raw_send(int fd, const void *p, size_t n)
{
    ck_assert_int_eq(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* The next frame's envelope (1), or 0 when the manager closed the
 * connection without one. */
static int raw_recv(int fd, skv_proto_envelope *env)
{
    skv_proto_reader *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_proto_reader_new(&r, 0, &e), &e);
    int got = 0;
    for (int64_t end = e2e_now_ms() + 10000; !got;) {
        const void *pl;
        size_t len;
        if (skv_proto_reader_next(r, &pl, &len, &e) == 1) {
            SKV_CK_OK(skv_proto_envelope_decode(env, pl, len, &e), &e);
            got = 1;
            break;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        ck_assert_msg(e2e_now_ms() < end, "no answer from the manager");
        if (poll(&pf, 1, 100) <= 0)
            continue;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            break;
        SKV_CK_OK(skv_proto_reader_feed(r, buf, (size_t)n, &e), &e);
    }
    skv_proto_reader_free(r);
    return got;
}

/* Send frame on a fresh connection; the answer's type (and error code). */
static skv_proto_type exchange(const void *frame, size_t len, int *code)
{
    int fd = raw_connect();
    skv_proto_envelope env = {0};
    raw_send(fd, frame, len);
    skv_proto_type t = SKV_PROTO_UNKNOWN;
    *code = 0;
    if (raw_recv(fd, &env)) {
        t = env.type;
        if (t == SKV_PROTO_ERROR) {
            skv_proto_error er = {0};
            skv_error e = SKV_ERROR_INIT;
            SKV_CK_OK(skv_proto_body_decode(&er, SKV_PROTO_ERROR, env.body,
                                            env.body_len, &e), &e);
            *code = er.code;
            skv_proto_body_free(SKV_PROTO_ERROR, &er);
        }
        skv_proto_envelope_free(&env);
    }
    close(fd);
    return t;
}

/* The connection is closed by the manager (after at most an error). */
static void expect_closed(int fd)
{
    skv_proto_envelope env = {0};
    if (raw_recv(fd, &env)) {
        ck_assert_int_eq(env.type, SKV_PROTO_ERROR);
        skv_proto_envelope_free(&env);
        ck_assert_int_eq(raw_recv(fd, &env), 0);
    }
    close(fd);
}

static void *list_frame(size_t *len, int64_t at, const char *ak,
                        const char *sk)
{
    skv_proto_session_list q = {0};
    skv_proto_credentials cred = {ak, sk};
    void *f = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_proto_message_encode(&f, len, SKV_PROTO_REQUEST, 7,
                                       SKV_PROTO_SESSION_LIST, &q, at, &cred,
                                       &e), &e);
    return f;
}

START_TEST(test_e2e_auth)
{
    E2E_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    E2E_OK(e2e_start_manager(&g, "a1"));
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    SKV_CK_OK(skv_auth_keypair_generate(ak, sk, &e), &e);
    /* wrong secret, unknown key */
    skv_client *cl = NULL;
    skv_proto_agent_list q = {0};
    skv_proto_agent_list_reply rep = {0};
    const char *keys[2][2] = {{g.admin_ak, sk}, {ak, sk}};
    for (int i = 0; i < 2; i++) {
        E2E_OK(e2e_connect(&g, &cl, keys[i][0], keys[i][1]));
        int rc = skv_client_call(cl, SKV_PROTO_AGENT_LIST, &q, &rep, &e);
        ck_assert_msg(rc == SKV_EAUTH, "key set %d: %s %s", i,
                      skv_err_name(rc), e.message);
        skv_client_free(cl);
    }
    /* a replayed frame, on another connection; a stale timestamp */
    size_t len;
    int code;
    void *f = list_frame(&len, unix_ms(), g.admin_ak, g.admin_sk);
    ck_assert_int_eq(exchange(f, len, &code), SKV_PROTO_SESSION_LIST_REPLY);
    ck_assert_int_eq(exchange(f, len, &code), SKV_PROTO_ERROR);
    ck_assert_int_eq(code, SKV_EAUTH);
    skv_free(f);
    f = list_frame(&len, unix_ms() - 3600 * 1000, g.admin_ak, g.admin_sk);
    ck_assert_int_eq(exchange(f, len, &code), SKV_PROTO_ERROR);
    ck_assert_int_eq(code, SKV_EAUTH);
    skv_free(f);
    /* malformed: garbage payload, a tampered body, an oversized header */
    int fd = raw_connect();
    raw_send(fd, "\0\0\0\x0agarbage!!!", 14);
    expect_closed(fd);
    f = list_frame(&len, unix_ms(), g.admin_ak, g.admin_sk);
    ((uint8_t *)f)[len - 2] ^= 0x01;
    fd = raw_connect();
    raw_send(fd, f, len);
    expect_closed(fd);
    skv_free(f);
    fd = raw_connect();
    raw_send(fd, "\x7f\xff\xff\xff", 4);
    expect_closed(fd);
    /* the manager still serves */
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &q, &rep, &e), &e);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    ck_assert(e2e_alive(g.mgr));
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- users do not see each other's sessions ------------------------------ */

/* A new user with its keypair, and a client connected as it. */
static void user_client(skv_client *admin, const char *name, skv_client **cl)
{
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = (char *)name;
    u.user.role = "user";
    u.user.active = 1;
    skv_proto_admin_user_reply ur = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = (char *)name;
    k.keypair.active = 1;
    skv_proto_admin_keypair_reply kr = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e), &e);
    ck_assert_uint_eq(kr.n_keypairs, 1);
    ck_assert_ptr_nonnull(kr.keypairs[0].secret_key);
    snprintf(ak, sizeof(ak), "%s", kr.keypairs[0].access_key);
    snprintf(sk, sizeof(sk), "%s", kr.keypairs[0].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
    E2E_OK(e2e_connect(&g, cl, ak, sk));
}

START_TEST(test_e2e_isolation)
{
    E2E_REQUIRE();
    skv_client *admin = NULL, *alice = NULL, *bob = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(1, &admin);
    user_client(admin, "alice", &alice);
    user_client(admin, "bob", &bob);
    e2e_job j = {"private", "sleep 120", "cpu=0.1,mem=16m", 1, false, NULL};
    char sid[E2E_ID_MAX];
    submit_ok(alice, sid, &j);
    /* bob can neither see, list nor terminate it */
    skv_proto_session_show_reply r = {0};
    int rc = skv_client_show(bob, &r, sid, &e);
    ck_assert_msg(rc == SKV_ENOENT || rc == SKV_EPERM, "bob show: %s",
                  skv_err_name(rc));
    skv_proto_session_list q = {0};
    skv_proto_session_list_reply lr = {0};
    SKV_CK_OK(skv_client_call(bob, SKV_PROTO_SESSION_LIST, &q, &lr, &e), &e);
    ck_assert_uint_eq(lr.n_sessions, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    q.owner = "alice";
    rc = skv_client_call(bob, SKV_PROTO_SESSION_LIST, &q, &lr, &e);
    ck_assert_msg(rc != 0 || lr.n_sessions == 0, "bob lists alice's sessions");
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    skv_proto_session_ref ref = {0};
    rc = skv_client_terminate(bob, &ref, sid, "not mine", 1, &e);
    ck_assert_msg(rc == SKV_ENOENT || rc == SKV_EPERM, "bob terminate: %s",
                  skv_err_name(rc));
    /* alice's session is untouched; she can list and end it */
    SKV_CK_OK(skv_client_show(alice, &r, sid, &e), &e);
    ck_assert_msg(!e2e_final(r.session.status), "alice's session is %s",
                  r.session.status);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    q.owner = NULL;
    SKV_CK_OK(skv_client_call(alice, SKV_PROTO_SESSION_LIST, &q, &lr, &e), &e);
    ck_assert_uint_eq(lr.n_sessions, 1);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    SKV_CK_OK(skv_client_terminate(alice, &ref, sid, "done", 1, &e), &e);
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    E2E_OK(e2e_wait_final(&g, alice, sid, 30000, &r));
    ck_assert_msg(!strcmp(r.session.status, "TERMINATED") ||
                  !strcmp(r.session.status, "CANCELLED"), "%s", r.session.status);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    skv_client_free(alice);
    skv_client_free(bob);
    skv_client_free(admin);
    e2e_stop(&g);
}
END_TEST

/* ---- cluster networking across agents (issue 7) ------------------------- */

/* Three network namespaces as hosts on one switch: a bridge in the
 * manager's namespace M (10.77.0.1) and a veth from it into each agent's
 * namespace A (10.77.0.2) and B (10.77.0.3). The manager listens on TCP
 * in M, where the agents reach it; the test's client uses its Unix
 * socket (a path, not an address). */
static char ns_name[3][32];
enum { NS_A, NS_B, NS_M };

static void ns_setup(void)
{
    char cmd[1024];
    long p = (long)getpid() % 100000;
    for (int i = 0; i < 3; i++)
        snprintf(ns_name[i], sizeof(ns_name[i]), "skv%c%ld", "ABM"[i], p);
    const char *m = ns_name[NS_M];
    int n = snprintf(cmd, sizeof(cmd), "set -e; ip netns add %s; "
                     "ip -n %s link add skvtbr%ld type bridge; "
                     "ip -n %s addr add 10.77.0.1/24 dev skvtbr%ld; "
                     "ip -n %s link set skvtbr%ld up; ip -n %s link set lo up",
                     m, m, p, m, p, m, p, m);
    for (int i = 0; i < 2; i++) {
        const char *h = ns_name[i];
        char c = "AB"[i];
        n += snprintf(cmd + n, sizeof(cmd) - (size_t)n,
                      "; ip netns add %s; ip -n %s link add skvt%c%ld type "
                      "veth peer name skvtM%c%ld netns %s; "
                      "ip -n %s link set skvtM%c%ld master skvtbr%ld up; "
                      "ip -n %s addr add 10.77.0.%d/24 dev skvt%c%ld; "
                      "ip -n %s link set skvt%c%ld up; ip -n %s link set lo up",
                      h, h, c, p, c, p, m, m, c, p, p, h, i + 2, c, p, h, c,
                      p, h);
    }
    ck_assert_msg(n < (int)sizeof(cmd), "namespace setup command too long");
    ck_assert_msg(system(cmd) == 0, "cannot set up the namespaces");
}

static void ns_teardown(void)
{
    char cmd[128];
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", ns_name[i]);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove netns %s\n", ns_name[i]);
    }
}

/* Agent i inside namespace i, reporting its namespace address and
 * reaching the manager over TCP. */
static void start_ns_agent(int i)
{
    char exe[PATH_MAX + 32], id[16], state[PATH_MAX + 32], addr[16];
    char run[PATH_MAX + 48];
    snprintf(exe, sizeof(exe), "%s/sokovan-agent", g.bin);
    snprintf(id, sizeof(id), "a%d", i + 1);
    snprintf(state, sizeof(state), "%s/agent-%s", g.root, id);
    e2e_run_dir(&g, id, run, sizeof(run));
    snprintf(addr, sizeof(addr), "10.77.0.%d", i + 2);
    snprintf(g.agent_cpus[i], sizeof(g.agent_cpus[i]), "%d", i % ncpus());
    char *const argv[] = {exe, "--agent-id", id, "--manager", g.mgr_tcp,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images,
                          "--cpus", g.agent_cpus[i],
                          "--memory", "4g", "--address", addr,
                          "--poll-interval-ms", "10", "--stats-interval-ms",
                          "1000", "--reconnect-max-ms", "500", NULL};
    g.agent[i] = e2e_spawn_ns(&g, ns_name[i], id, argv);
    ck_assert_int_gt(g.agent[i], 0);
    if (i >= g.nagents)
        g.nagents = i + 1;
}

/* No session piece left in ns (polled for up to 15 s); else what is. */
static bool ns_clean(const char *ns, char *out, size_t cap)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "{ ip -n %s -o link | grep -v ': lo:' | "
             "grep -v ': skvt'; ip -n %s rule | grep iif; ip -n %s route | "
             "grep 10.128 | grep -v 'proto 173'; } | cut -c1-60", ns, ns, ns);
    for (int i = 0; i < 150; i++) {
        skv_test_sh_output(cmd, out, cap);
        if (!out[0])
            return true;
        e2e_sleep_ms(100);
    }
    return false;
}

/* main1 of a running session: its address, and the host address and
 * port its container port is published on (from session.show). */
typedef struct main_kernel {
    char address[32];
    char host[32];
    unsigned host_port;
} main_kernel;

/* "tcp:<port>=<host>:<host port>" among k's published ports: host into
 * mk->host, the host port returned (0: not published). */
static unsigned published_port(const skv_proto_kernel_info *k, uint32_t port,
                               main_kernel *mk)
{
    char want[24];
    int n = snprintf(want, sizeof(want), "tcp:%u=", (unsigned)port);
    for (size_t i = 0; i < k->n_published; i++) {
        const char *v = k->published[i];
        const char *colon = strrchr(v, ':');
        if (strncmp(v, want, (size_t)n) || !colon || colon < v + n)
            continue;
        snprintf(mk->host, sizeof(mk->host), "%.*s", (int)(colon - v - n),
                 v + n);
        return (unsigned)atoi(colon + 1);
    }
    return 0;
}

/* Wait until the session is RUNNING with an address for main1. */
static void wait_running(skv_client *cl, const char *sid, uint32_t port,
                         main_kernel *mk)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 300; i++) {
        skv_proto_session_show_reply r = {0};
        SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
        const skv_proto_kernel_info *k = kernel_named(&r.session, "main", 1);
        bool up = !strcmp(r.session.status, "RUNNING") && k && k->address;
        if (up) {
            snprintf(mk->address, sizeof(mk->address), "%s", k->address);
            mk->host_port = published_port(k, port, mk);
            /* agent a<i> runs in the namespace with address 10.77.0.<i+1> */
            char want[32];
            snprintf(want, sizeof(want), "10.77.0.%d",
                     atoi(k->agent_id + 1) + 1);
            ck_assert_str_eq(mk->host, want);
        }
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (up)
            return;
        e2e_sleep_ms(100);
    }
    ck_abort_msg("session %s did not run", sid);
}

START_TEST(test_e2e_cluster_network)
{
    E2E_REQUIRE();
    if (ncpus() < 2 || access("/usr/sbin/ip", X_OK) != 0) {
        fprintf(stderr, "%s: skipped: needs 2 CPUs and /usr/sbin/ip\n",
                __func__);
        return;
    }
    skv_client *admin = NULL, *alice = NULL, *bob = NULL;
    skv_error e = SKV_ERROR_INIT;
    ns_setup();
    snprintf(g.mgr_ns, sizeof(g.mgr_ns), "%s", ns_name[NS_M]);
    snprintf(g.mgr_tcp, sizeof(g.mgr_tcp), "10.77.0.1:5020");
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    start_ns_agent(NS_A);
    start_ns_agent(NS_B);
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 2));
    /* 3 kernels of 1.5 GiB on two 4 GiB agents: two on one agent, one on
     * the other, so at least one sub is on another agent than main1.
     * Every sub reaches main1 by name and the two exchange a line. */
    e2e_job j = {"net", "if test $SOKOVAN_CLUSTER_ROLE = main; then "
                 "for i in 1 2; do echo hello-from-$(hostname) | "
                 "busybox nc -l -p 7411; done; "
                 "else for i in $(seq 1 30); do echo ping-from-$(hostname) | "
                 "busybox nc main1 7411 && exit 0; sleep 1; done; exit 1; fi",
                 "cpu=0.2,mem=1536m", 3, true, NULL, NULL};
    char sid[E2E_ID_MAX];
    submit_ok(admin, sid, &j);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, admin, sid, 90000, &r));
    ck_assert_msg(!strcmp(r.session.status, "TERMINATED") &&
                      r.session.exit_code == 0, "%s %s exit %d",
                  r.session.status, r.session.status_reason ?
                  r.session.status_reason : "", r.session.exit_code);
    const skv_proto_kernel_info *km = kernel_named(&r.session, "main", 1);
    ck_assert_ptr_nonnull(km);
    ck_assert_msg(km->address && !strncmp(km->address, "10.128.", 7),
                  "main1 address %s", km->address ? km->address : "-");
    char out[512];
    int remote = 0;
    for (int i = 1; i <= 2; i++) {
        const skv_proto_kernel_info *ks = kernel_named(&r.session, "sub", i);
        ck_assert_ptr_nonnull(ks);
        remote += strcmp(km->agent_id, ks->agent_id) != 0;
        SKV_CK_OK(e2e_logs(admin, sid, ks->kernel_id, out, sizeof(out), &e),
                  &e);
        ck_assert_msg(!strcmp(out, "hello-from-main1\n"), "sub%d: '%s'", i,
                      out);
    }
    ck_assert_msg(remote >= 1, "all kernels ran on agent %s", km->agent_id);
    SKV_CK_OK(e2e_logs(admin, sid, km->kernel_id, out, sizeof(out), &e), &e);
    ck_assert_msg(strstr(out, "ping-from-sub1\n") &&
                      strstr(out, "ping-from-sub2\n"), "main1: '%s'", out);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    /* Sessions of two users: bob's kernels cannot reach alice's. */
    user_client(admin, "alice", &alice);
    user_client(admin, "bob", &bob);
    e2e_job ja = {"srv", "trap 'exit 7' TERM; "
                  "if test $SOKOVAN_CLUSTER_ROLE = main; then "
                  "busybox nc -l -p 7412; fi; sleep 600 & wait",
                  "cpu=0.2,mem=16m", 2, true, NULL, NULL, 7412};
    char asid[E2E_ID_MAX], bsid[E2E_ID_MAX];
    main_kernel mk;
    submit_ok(alice, asid, &ja);
    wait_running(alice, asid, 7412, &mk);
    ck_assert_msg(mk.host_port > 0, "main1's port 7412 is not published");
    char script[512];
    snprintf(script, sizeof(script), "if test $SOKOVAN_CLUSTER_ROLE = main; "
             "then for i in 1 2 3; do echo x | busybox nc -w 2 %s 7412 && "
             "echo reached && exit 0; sleep 1; done; echo refused; "
             "else sleep 600; fi", mk.address);
    e2e_job jb = {"cli", script, "cpu=0.2,mem=16m", 2, true, NULL, NULL};
    submit_ok(bob, bsid, &jb);
    E2E_OK(e2e_wait_final(&g, bob, bsid, 90000, &r));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    SKV_CK_OK(e2e_logs(bob, bsid, NULL, out, sizeof(out), &e), &e);
    ck_assert_msg(!strcmp(out, "refused\n"), "bob's kernel: '%s'", out);
    /* From another host (the manager's namespace), main1 is reachable
     * through the published port on its agent's address. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "echo via-published | ip netns exec %s "
             "busybox nc -w 3 %s %u", ns_name[NS_M], mk.host, mk.host_port);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    for (int i = 0; i < 100; i++) {
        SKV_CK_OK(e2e_logs(alice, asid, NULL, out, sizeof(out), &e), &e);
        if (strstr(out, "via-published"))
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(!strcmp(out, "via-published\n"), "alice's main1: '%s'",
                  out);
    skv_proto_session_ref ref = {0};
    SKV_CK_OK(skv_client_terminate(alice, &ref, asid, "done", 0, &e), &e);
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    E2E_OK(e2e_wait_final(&g, alice, asid, 60000, &r));
    /* Terminate sends SIGTERM: the kernels' own exit code is recorded. */
    for (size_t i = 0; i < r.session.n_kernels; i++)
        ck_assert_msg(r.session.kernels[i].exit_code == 7,
                      "kernel %s ended with %d", r.session.kernels[i].role,
                      (int)r.session.kernels[i].exit_code);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    /* Nothing of the sessions is left on either agent: no link but lo and
     * the namespace's veth, no policy rule of a bridge, no route to a
     * session subnet but the agents' routes (protocol 173). A session ends
     * when its kernels have; their kernel.destroy may still be on its
     * way, so this polls. */
    for (int i = NS_A; i <= NS_B; i++)
        ck_assert_msg(ns_clean(ns_name[i], out, sizeof(out)), "%s: %s",
                      ns_name[i], out);
    skv_client_free(alice);
    skv_client_free(bob);
    skv_client_free(admin);
    e2e_stop(&g);
    ns_teardown();
}
END_TEST

/* Routes stay right as agents join and leave (issue 14: route deltas):
 * with a1 alone, no peer route; a2 joins: each has the route to the other
 * (a1's from a delta, a2's from its register reply); a2 is killed -9 and
 * declared lost: a1's route to it is withdrawn (before, a lost agent's
 * route stayed forever); a2 comes back: the route returns. */
static bool ns_route_poll(int ns, const char *via, bool want, int ms)
{
    char cmd[256], out[512];
    snprintf(cmd, sizeof(cmd), "ip -n %s route show proto 173 | grep -c "
             "'via %s ' || true", ns_name[ns], via);
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        skv_test_sh_output(cmd, out, sizeof(out));
        if ((atoi(out) == 1) == want)
            return true;
        e2e_sleep_ms(100);
    }
    return false;
}

START_TEST(test_e2e_routes_join_leave)
{
    E2E_REQUIRE();
    if (ncpus() < 2 || access("/usr/sbin/ip", X_OK) != 0) {
        fprintf(stderr, "%s: skipped: needs 2 CPUs and /usr/sbin/ip\n",
                __func__);
        return;
    }
    skv_client *admin = NULL;
    ns_setup();
    snprintf(g.mgr_ns, sizeof(g.mgr_ns), "%s", ns_name[NS_M]);
    snprintf(g.mgr_tcp, sizeof(g.mgr_tcp), "10.77.0.1:5021");
    snprintf(g.hb_timeout_ms, sizeof(g.hb_timeout_ms), "3000");
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    start_ns_agent(NS_A);
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 1));
    ck_assert(ns_route_poll(NS_A, "10.77.0.3", false, 1000));
    start_ns_agent(NS_B);
    E2E_OK(e2e_wait_agents(&g, admin, 2));
    ck_assert_msg(ns_route_poll(NS_A, "10.77.0.3", true, 10000),
                  "a1 has no route to a2 after a2 joined");
    ck_assert_msg(ns_route_poll(NS_B, "10.77.0.2", true, 10000),
                  "a2 has no route to a1");
    e2e_kill(&g, &g.agent[NS_B], SIGKILL, "a2");
    ck_assert_msg(ns_route_poll(NS_A, "10.77.0.3", false, 15000),
                  "a1 still routes to a2 after a2 was lost");
    start_ns_agent(NS_B);
    ck_assert_msg(ns_route_poll(NS_A, "10.77.0.3", true, 15000),
                  "a1 has no route to a2 after a2 came back");
    ck_assert(ns_route_poll(NS_B, "10.77.0.2", true, 10000));
    skv_client_free(admin);
    e2e_stop(&g);
    ns_teardown();
}
END_TEST

/* bench/manager, small: a real manager, simulated agents and clients run
 * 300 sessions on 3 and on 20 agents, each TERMINATED by the manager's own
 * count (the bench checks it) with its figures in the JSON line; a --store
 * the manager does not take fails the run loudly (exit 1, the manager's
 * own message), never a silent SQLite run. */
static int bench_run(const char *args, char *out, size_t cap)
{
    char cmd[PATH_MAX + 512];
    snprintf(cmd, sizeof(cmd), "%s/bench/manager %s 2>&1", skv_test_build_dir(),
             args);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_str(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

START_TEST(test_e2e_bench_manager)
{
    E2E_REQUIRE();
    static char out[65536];
    char bench[PATH_MAX + 32];
    snprintf(bench, sizeof(bench), "%s/bench/manager", skv_test_build_dir());
    ck_assert_msg(access(bench, X_OK) == 0, "%s missing (make benches)",
                  bench);
    int rc = bench_run("--sessions 300 --agents 3,20 --clients 4 --timeout "
                       "60", out, sizeof(out));
    ck_assert_msg(rc == 0, "bench/manager exited %d:\n%s", rc, out);
    ck_assert_msg(count_str(out, "\"ok\":true") == 2 &&
                  count_str(out, "\"terminated\":300") == 2 &&
                  count_str(out, "\"untagged\":0") == 2 &&
                  strstr(out, "\"sessions_per_s\":") &&
                  strstr(out, "\"submit_to_dispatch_ms\":{\"p50\":") &&
                  strstr(out, "\"manager_peak_rss_mb\":"), "%s", out);
    rc = bench_run("--sessions 10 --agents 2 --store postgresql://nowhere/x",
                   out, sizeof(out));
    ck_assert_msg(rc == 1 && strstr(out, "FAILED") &&
                  strstr(out, "\"ok\":false") && !strstr(out, "\"ok\":true"),
                  "a --store the manager does not take must fail the run "
                  "(exit %d):\n%s", rc, out);
}
END_TEST

/* One case per test: every test gets a fresh cluster and its own teardown. */
#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 600);                                           \
        tcase_add_unchecked_fixture(tc_, e2e_setup, e2e_teardown);             \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e(void);
Suite *skv_test_suite_e2e(void)
{
    Suite *s = suite_create("e2e");
    ADD_CASE(s, "concurrent", test_e2e_concurrent);
    ADD_CASE(s, "multinode", test_e2e_multinode);
    ADD_CASE(s, "agent_restart", test_e2e_agent_restart);
    ADD_CASE(s, "manager_restart", test_e2e_manager_restart);
    ADD_CASE(s, "auth", test_e2e_auth);
    ADD_CASE(s, "isolation", test_e2e_isolation);
    ADD_CASE(s, "cluster_network", test_e2e_cluster_network);
    ADD_CASE(s, "routes_join_leave", test_e2e_routes_join_leave);
    ADD_CASE(s, "bench_manager", test_e2e_bench_manager);
    return s;
}
