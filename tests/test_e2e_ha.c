/* End-to-end failover through the real daemons: a 1,000-submission burst
 * while the manager is killed with SIGKILL.
 *
 * SQLite variant: the single manager is restarted on its data dir.
 * PostgreSQL variant: the manager keeps its state on a real PostgreSQL the
 * test starts (--store), and is restarted on it. Clients and the agent are given a list of
 * manager endpoints whose first entry is a manager that is not there, and
 * the client library's failover (skv_client_options.failover_ms) does all
 * reconnecting and resending: the test itself never retries. Checked:
 * service is back within 5 s of the kill, no acknowledged submission is
 * lost, none duplicated (each client token names one session, a resent
 * token returns it), no session ran twice, and the accounting is exact
 * (every session TERMINATED once, the agent's occupied slots back to 0).
 *
 * Standby variant: two managers on one PostgreSQL, both in every list;
 * the leader is killed and never restarted: the standby takes over. The
 * fencing test pauses the leader (SIGSTOP) past its lease: the standby
 * takes over, and the old leader, resumed, commits nothing and exits.
 * A second manager on a SQLite data_dir is refused with a clear error.
 * SPDX-License-Identifier: Apache-2.0 */
#include <libpq-fe.h>
#include <pthread.h>

#include "skv_test.h"
#include "e2e_cluster.h"
#include "pg_harness.h"
#include "sokovan/slots.h"

static e2e_cluster g;
static const char *g_skip;

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
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

enum { BURST = 1000, KILL_AT = 250, TAKEOVER_MS = 5000 };

/* "unix:<root>/gone.sock,unix:<manager socket>": a dead standby first. */
static char g_list[2 * PATH_MAX + 32];

/* The second manager (standby tests): its own data dir and socket. */
static char g_data2[PATH_MAX], g_sock2[PATH_MAX];
static pid_t g_mgr2 = -1;

/* sokovan-manager on store (a PostgreSQL URI) with the lease timings the
 * tests use (lease 1.5 s, polled every 200 ms). */
static pid_t spawn_manager(const char *name, const char *data,
                           const char *sock, const char *store)
{
    char exe[PATH_MAX + 32];
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g.bin);
    char *const argv[] = {exe, "--data-dir", (char *)data, "--listen",
                          (char *)sock, "--tcp", "none",
                          "--bootstrap-agents", "a1",
                          "--heartbeat-interval-ms", "500",
                          "--heartbeat-timeout-ms", "15000",
                          "--store", (char *)store, "--ha-poll-ms", "200",
                          "--ha-lease-ms", "1500", NULL};
    unlink(sock);
    return e2e_spawn(&g, name, argv);
}

/* e2e_start_manager with --store: the same arguments, then the store. */
static int start_manager_on(const char *store)
{
    if (!store)
        return e2e_start_manager(&g, "a1");
    char key[PATH_MAX + 16];
    snprintf(key, sizeof(key), "%s/admin.key", g.data);
    g.mgr = spawn_manager("manager", g.data, g.sock, store);
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

static void make_list(void)
{
    snprintf(g_list, sizeof(g_list), "unix:%s/gone.sock,unix:%s", g.root,
             g.sock);
}

/* Both managers: the leader first, the standby second. */
static void make_pair_list(void)
{
    snprintf(g_list, sizeof(g_list), "unix:%s,unix:%s", g.sock, g_sock2);
}

/* Wait up to ms for text in a daemon's log; 0 when it is there. */
static int wait_log(const char *name, const char *text, int ms)
{
    char path[PATH_MAX + 64], line[1024];
    snprintf(path, sizeof(path), "%s/logs/%s.log", g.root, name);
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;
         e2e_sleep_ms(20)) {
        FILE *f = fopen(path, "r");
        bool found = false;
        while (f && !found && fgets(line, sizeof(line), f))
            found = strstr(line, text) != NULL;
        if (f)
            fclose(f);
        if (found)
            return 0;
    }
    return -1;
}

static skv_client *connect_one(const char *sock);
static int list_one(skv_client *cl, skv_error *e);

/* A second manager on the same PostgreSQL: it must stand by. */
static void start_standby(const char *store)
{
    snprintf(g_data2, sizeof(g_data2), "%s/data2", g.root);
    snprintf(g_sock2, sizeof(g_sock2), "%s/m2.sock", g.root);
    g_mgr2 = spawn_manager("manager2", g_data2, g_sock2, store);
    ck_assert_int_gt(g_mgr2, 0);
    if (wait_log("manager2", "standby: the leader is", 15000) == 0)
        return;
    /* Two leaders (the fault this guards against): say so. */
    char tail[600];
    e2e_log_tail(&g, "manager2", tail, sizeof(tail));
    skv_error e = SKV_ERROR_INIT;
    int rc = -1;
    if (e2e_alive(g_mgr2)) {
        skv_client *cl = connect_one(g_sock2);
        rc = list_one(cl, &e);
        skv_client_free(cl);
    }
    ck_assert_msg(0, "the second manager on one PostgreSQL did not stand "
                  "by%s: %s", rc == 0 ? " (it serves as a second leader: "
                  "it answered session.list)" : "", tail);
}

/* One scalar from the store, read behind the managers' backs. */
static long long pg_scalar(const skv_pg *pg, const char *sql, char *text,
                           size_t n)
{
    PGconn *c = PQconnectdb(pg->conninfo);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "libpq: %s",
                  PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1,
                  "%s: %s", sql, PQerrorMessage(c));
    long long v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    if (text)
        snprintf(text, n, "%s", PQnfields(r) > 1 ? PQgetvalue(r, 0, 1) : "");
    PQclear(r);
    PQfinish(c);
    return v;
}

/* A client of exactly one manager, without failover. */
static skv_client *connect_one(const char *sock)
{
    char ep[PATH_MAX + 8];
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    snprintf(ep, sizeof(ep), "unix:%s", sock);
    o.endpoint = ep;
    o.access_key = g.admin_ak;
    o.secret_key = g.admin_sk;
    o.timeout_ms = 20000;
    skv_client *cl = NULL;
    SKV_CK_OK(skv_client_connect(&cl, &o, &e), &e);
    return cl;
}

/* rc of a one-row session.list on cl; the error in e. */
static int list_one(skv_client *cl, skv_error *e)
{
    skv_proto_session_list q = {0};
    skv_proto_session_list_reply r = {0};
    q.limit = 1;
    int rc = skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &r, e);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &r);
    return rc;
}

/* The standby refuses with SKV_ESTATE "standby: ... the leader is <the
 * leader's socket>": the answer clients and agents fail over on. */
static void check_standby_answer(void)
{
    skv_client *cl = connect_one(g_sock2);
    skv_error e = SKV_ERROR_INIT;
    int rc = list_one(cl, &e);
    ck_assert_msg(rc == SKV_ESTATE && !strncmp(e.message, "standby", 7) &&
                  strstr(e.message, g.sock), "a standby answered %d (%s); "
                  "wanted SKV_ESTATE 'standby: ... the leader is ...%s'",
                  rc, e.message, g.sock);
    skv_client_free(cl);
}

/* Agent a1 on every CPU, told the same list. */
static void start_agent_listed(void)
{
    char exe[PATH_MAX + 32], state[PATH_MAX + 32], run[PATH_MAX + 48];
    char cpus[32];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(cpus, sizeof(cpus), "0-%ld", n > 1 ? n - 1 : 0);
    snprintf(exe, sizeof(exe), "%s/sokovan-agent", g.bin);
    snprintf(state, sizeof(state), "%s/agent-a1", g.root);
    e2e_run_dir(&g, "a1", run, sizeof(run));
    char *const argv[] = {exe, "--agent-id", "a1", "--manager", g_list,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images, "--cpus",
                          cpus, "--memory", "4g", "--poll-interval-ms", "10",
                          "--stats-interval-ms", "1000",
                          "--reconnect-max-ms", "200", NULL};
    g.agent[0] = e2e_spawn(&g, "a1", argv);
    ck_assert_int_gt(g.agent[0], 0);
    g.nagents = 1;
}

static skv_client *connect_listed(int failover_ms)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    o.endpoint = g_list;
    o.access_key = g.admin_ak;
    o.secret_key = g.admin_sk;
    o.timeout_ms = 20000;
    o.failover_ms = failover_ms;
    skv_client *cl = NULL;
    SKV_CK_OK(skv_client_connect(&cl, &o, &e), &e);
    return cl;
}

typedef struct burst {
    char sid[BURST][E2E_ID_MAX];
    int acked;
    int failed_at;               /* -1, or the submission that failed */
    char why[SKV_ERROR_MESSAGE_MAX];
    int64_t killed_at;           /* set by the test; 0 before the kill */
    int64_t first_after;         /* first acknowledgement after it */
    pthread_mutex_t mu;
} burst;

static burst g_burst;

static void job_of(int i, char *script, char *token, e2e_job *j)
{
    snprintf(script, 32, "echo run-%d", i);
    snprintf(token, 32, "ha-%d", i);
    *j = (e2e_job){NULL, script, "cpu=0.1,mem=16m", 1, false, token};
}

/* One client, no retries of its own: a failure is the library's. */
static void *burst_main(void *arg)
{
    burst *b = arg;
    skv_client *cl = connect_listed(30000);
    for (int i = 0; i < BURST; i++) {
        char script[32], token[32], sid[E2E_ID_MAX];
        e2e_job j;
        job_of(i, script, token, &j);
        skv_error e = SKV_ERROR_INIT;
        int rc = e2e_submit(cl, sid, &j, &e);
        pthread_mutex_lock(&b->mu);
        if (rc == 0) {
            memcpy(b->sid[i], sid, sizeof(sid));
            b->acked = i + 1;
            if (b->killed_at && !b->first_after)
                b->first_after = e2e_now_ms();
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

static int acked(burst *b)
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

/* TERMINATED with exit 0, RUNNING exactly once, output "run-<i>\n" once. */
static void check_once(skv_client *cl, const char *sid, int i)
{
    skv_proto_session_show_reply r;
    skv_error e = SKV_ERROR_INIT;
    E2E_OK(e2e_wait_final(&g, cl, sid, 180000, &r));
    ck_assert_msg(!strcmp(r.session.status, "TERMINATED") &&
                  r.session.exit_code == 0, "%s: %s exit %d (%s)", sid,
                  r.session.status, r.session.exit_code,
                  r.session.status_reason ? r.session.status_reason : "");
    ck_assert_msg(count_status(&r.session, "RUNNING") == 1, "%s ran %d times",
                  sid, count_status(&r.session, "RUNNING"));
    ck_assert_uint_eq(r.session.n_kernels, 1);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    char buf[256], want[32];
    snprintf(want, sizeof(want), "run-%d\n", i);
    SKV_CK_OK(e2e_logs(cl, sid, NULL, buf, sizeof(buf), &e), &e);
    ck_assert_msg(!strcmp(buf, want), "%s: output '%s', wanted '%s'", sid,
                  buf, want);
}

/* Resending a token gets the session it already named, never a new one. */
static void check_tokens(skv_client *cl, burst *b)
{
    for (int i = 0; i < BURST; i += 97) {
        char script[32], token[32], sid[E2E_ID_MAX];
        e2e_job j;
        job_of(i, script, token, &j);
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
        ck_assert_str_eq(sid, b->sid[i]);
    }
}

/* Exactly BURST sessions exist, and the agent holds nothing any more. */
static void check_accounting(skv_client *cl)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_list q = {0};
    q.limit = 2 * BURST;
    skv_proto_session_list_reply lr = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &lr, &e), &e);
    ck_assert_uint_eq(lr.total, BURST);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    skv_proto_agent_list aq = {0};
    skv_proto_agent_list_reply ar = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &aq, &ar, &e), &e);
    ck_assert_uint_eq(ar.n_agents, 1);
    ck_assert_uint_eq(ar.agents[0].n_running, 0);
    ck_assert_msg(!ar.agents[0].occupied ||
                  skv_slots_is_zero(ar.agents[0].occupied),
                  "agent a1 still has slots occupied");
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &ar);
}

/* pg: the standby variant (a second manager on the same PostgreSQL takes
 * over; the killed leader stays dead); NULL: the killed manager is
 * restarted on store. */
static void burst_with_kill(const char *store, const char *what,
                            const skv_pg *pg)
{
    E2E_OK(start_manager_on(store));
    make_list();
    if (pg) {
        start_standby(store);
        check_standby_answer();
        make_pair_list();
    }
    start_agent_listed();
    skv_client *cl = connect_listed(30000);
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    skv_client_free(cl);
    burst *b = &g_burst;
    memset(b, 0, sizeof(*b));
    b->failed_at = -1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, burst_main, b), 0);
    for (int64_t end = e2e_now_ms() + 60000;
         acked(b) >= 0 && acked(b) < KILL_AT && e2e_now_ms() < end;)
        e2e_sleep_ms(2);
    pthread_mutex_lock(&b->mu);
    b->killed_at = e2e_now_ms();
    pthread_mutex_unlock(&b->mu);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    int at_kill = acked(b);
    if (!pg)
        E2E_OK(start_manager_on(store));
    pthread_join(th, NULL);
    ck_assert_msg(b->failed_at < 0, "submission %d failed: %s", b->failed_at,
                  b->why);
    ck_assert_int_eq(b->acked, BURST);
    ck_assert_msg(at_kill >= KILL_AT && at_kill < BURST, "killed at %d acks",
                  at_kill);
    int64_t takeover = b->first_after - b->killed_at;
    fprintf(stderr, "e2e_ha %s: killed after %d acks, served again "
            "%lld ms after the kill\n", what, at_kill, (long long)takeover);
    ck_assert_msg(b->first_after > 0 && takeover <= TAKEOVER_MS,
                  "service back %lld ms after the kill", (long long)takeover);
    cl = connect_listed(30000);
    for (int i = 0; i < BURST; i++)
        check_once(cl, b->sid[i], i);
    check_tokens(cl, b);
    check_accounting(cl);
    pthread_mutex_destroy(&b->mu);
    skv_client_free(cl);
    if (pg) {
        /* One election after the first: the standby's, and it leads. */
        char holder[256];
        long long epoch = pg_scalar(pg, "SELECT epoch, holder FROM ha_lease"
                                    " WHERE name = 'manager'", holder,
                                    sizeof(holder));
        ck_assert_msg(epoch == 2 && strstr(holder, g_sock2),
                      "lease: epoch %lld held by '%s'", epoch, holder);
        e2e_kill(&g, &g_mgr2, SIGTERM, "manager2");
    }
    e2e_stop(&g);
}

START_TEST(test_ha_sqlite_restart)
{
    REQUIRE();
    burst_with_kill(NULL, "sqlite", NULL);
}
END_TEST

/* The same burst and kill with the state on PostgreSQL. */
START_TEST(test_ha_postgres_restart)
{
    REQUIRE();
    skv_pg pg;
    const char *skip = skv_pg_start(&pg);
    if (skip) {
        fprintf(stderr, "test_ha_postgres_restart: SKIP: %s\n", skip);
        return;
    }
    ck_assert_msg(skv_pg_running(&pg), "postgres: %s", pg.why);
    burst_with_kill(pg.uri, "postgresql", NULL);
    skv_pg_stop(&pg);
}
END_TEST

static bool pg_or_skip(skv_pg *pg, const char *test)
{
    const char *skip = skv_pg_start(pg);
    if (skip) {
        fprintf(stderr, "%s: SKIP: %s\n", test, skip);
        return false;
    }
    ck_assert_msg(skv_pg_running(pg), "postgres: %s", pg->why);
    return true;
}

/* Two managers on one PostgreSQL; the leader killed during the burst and
 * never restarted: the standby takes over within 5 s, nothing lost,
 * duplicated or run twice. */
START_TEST(test_ha_standby_takeover)
{
    REQUIRE();
    skv_pg pg;
    if (!pg_or_skip(&pg, "test_ha_standby_takeover"))
        return;
    burst_with_kill(pg.uri, "postgresql standby", &pg);
    skv_pg_stop(&pg);
}
END_TEST

enum { FENCE_RUNS = 20, LEASE_MS = 1500 };

typedef struct fenced_call {
    skv_client *cl;
    int rc;
    char why[SKV_ERROR_MESSAGE_MAX];
} fenced_call;

/* A submission sent to the paused leader only (no failover). */
static void *fenced_main(void *arg)
{
    fenced_call *f = arg;
    char script[32], token[32], sid[E2E_ID_MAX];
    e2e_job j;
    job_of(BURST + 1, script, token, &j);
    skv_error e = SKV_ERROR_INIT;
    f->rc = e2e_submit(f->cl, sid, &j, &e);
    snprintf(f->why, sizeof(f->why), "%s", f->rc ? e.message : sid);
    return NULL;
}

static long long count_sessions(const skv_pg *pg)
{
    return pg_scalar(pg, "SELECT count(*) FROM sessions", NULL, 0);
}

/* Wait for a pid to exit; its wait status, or -1 when still running. */
static int wait_exit(pid_t pid, int ms)
{
    int st = 0;
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;
         e2e_sleep_ms(20))
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
    return -1;
}

/* The leader paused past its lease: the standby takes over; the old
 * leader, resumed with a submission waiting on its socket, commits
 * nothing (row count and epoch unchanged) and exits with status 1. */
START_TEST(test_ha_fencing)
{
    REQUIRE();
    skv_pg pg;
    if (!pg_or_skip(&pg, "test_ha_fencing"))
        return;
    E2E_OK(start_manager_on(pg.uri));
    start_standby(pg.uri);
    make_pair_list();
    start_agent_listed();
    skv_client *cl = connect_listed(30000);
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    char sid[FENCE_RUNS][E2E_ID_MAX];
    for (int i = 0; i < FENCE_RUNS; i++) {
        char script[32], token[32];
        e2e_job j;
        skv_error e = SKV_ERROR_INIT;
        job_of(i, script, token, &j);
        SKV_CK_OK(e2e_submit(cl, sid[i], &j, &e), &e);
    }
    for (int i = 0; i < FENCE_RUNS; i++)
        check_once(cl, sid[i], i);
    ck_assert_int_eq(count_sessions(&pg), FENCE_RUNS);

    /* A connection to the leader alone, authenticated before the pause. */
    fenced_call f = {connect_one(g.sock), 0, ""};
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(list_one(f.cl, &e), &e);
    ck_assert_int_eq(kill(g.mgr, SIGSTOP), 0);
    int64_t paused = e2e_now_ms();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, fenced_main, &f), 0);

    /* The standby answers as the leader once the lease ran out. */
    skv_client *two = connect_one(g_sock2);
    int rc = -1;
    while ((rc = list_one(two, &e)) != 0 &&
           e2e_now_ms() - paused < LEASE_MS + 5000)
        e2e_sleep_ms(50);
    int64_t took = e2e_now_ms() - paused;
    fprintf(stderr, "e2e_ha fencing: the standby served %lld ms after the "
            "leader was paused (lease %d ms)\n", (long long)took, LEASE_MS);
    ck_assert_msg(rc == 0, "the standby never took over: %s", e.message);
    ck_assert_msg(took >= LEASE_MS - 200, "taken over after %lld ms, before "
                  "the %d ms lease ran out", (long long)took, LEASE_MS);
    char holder[256];
    ck_assert_int_eq(pg_scalar(&pg, "SELECT epoch, holder FROM ha_lease "
                               "WHERE name = 'manager'", holder,
                               sizeof(holder)), 2);
    ck_assert_msg(strstr(holder, g_sock2), "lease held by '%s'", holder);

    /* Resumed: it must neither commit the waiting submission nor stay. */
    ck_assert_int_eq(kill(g.mgr, SIGCONT), 0);
    int st = wait_exit(g.mgr, 10000);
    pthread_join(th, NULL);
    char tail[800];
    e2e_log_tail(&g, "manager", tail, sizeof(tail));
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
                  "the deposed leader did not exit with status 1 (wait "
                  "status %d): %s", st, tail);
    g.mgr = -1;
    ck_assert_msg(strstr(tail, "stepping down"), "no step-down in the log: "
                  "%s", tail);
    ck_assert_msg(f.rc != 0, "the deposed leader acknowledged session %s",
                  f.why);
    ck_assert_int_eq(count_sessions(&pg), FENCE_RUNS);
    ck_assert_int_eq(pg_scalar(&pg, "SELECT epoch FROM ha_lease WHERE name"
                               " = 'manager'", NULL, 0), 2);
    skv_client_free(f.cl);

    /* The new leader serves: the agent came over, a session runs. */
    char script[32], token[32], more[E2E_ID_MAX];
    e2e_job j;
    job_of(FENCE_RUNS, script, token, &j);
    SKV_CK_OK(e2e_submit(cl, more, &j, &e), &e);
    check_once(cl, more, FENCE_RUNS);
    ck_assert_int_eq(count_sessions(&pg), FENCE_RUNS + 1);
    skv_client_free(two);
    skv_client_free(cl);
    e2e_kill(&g, &g_mgr2, SIGTERM, "manager2");
    e2e_stop(&g);
    skv_pg_stop(&pg);
}
END_TEST

/* SQLite cannot have a standby: a second manager on the same data_dir is
 * refused at once, says why, and the first one keeps serving. */
START_TEST(test_ha_sqlite_second_refused)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    char exe[PATH_MAX + 32], sock[PATH_MAX + 16];
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g.bin);
    snprintf(sock, sizeof(sock), "%s/m2.sock", g.root);
    char *const argv[] = {exe, "--data-dir", g.data, "--listen", sock,
                          "--tcp", "none", NULL};
    pid_t two = e2e_spawn(&g, "manager2", argv);
    ck_assert_int_gt(two, 0);
    int st = wait_exit(two, 10000);
    char tail[800];
    e2e_log_tail(&g, "manager2", tail, sizeof(tail));
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
                  "a second manager on %s: wait status %d: %s", g.data, st,
                  tail);
    ck_assert_msg(strstr(tail, "in use") && strstr(tail, "one manager per "
                  "data_dir") && strstr(tail, "postgresql://"),
                  "unclear refusal: %s", tail);
    skv_client *cl = connect_one(g.sock);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(list_one(cl, &e), &e);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_ha(void);
Suite *skv_test_suite_e2e_ha(void)
{
    Suite *s = suite_create("e2e_ha");
    /* one case per test: each gets a fresh scratch directory */
    TCase *lite = tcase_create("e2e_ha_sqlite");
    tcase_add_unchecked_fixture(lite, setup, teardown);
    tcase_add_test(lite, test_ha_sqlite_restart);
    tcase_set_timeout(lite, 600);
    suite_add_tcase(s, lite);
    TCase *pg = tcase_create("e2e_ha_postgres");
    tcase_add_unchecked_fixture(pg, setup, teardown);
    tcase_add_test(pg, test_ha_postgres_restart);
    tcase_set_timeout(pg, 600);
    suite_add_tcase(s, pg);
    TCase *sb = tcase_create("e2e_ha_standby");
    tcase_add_unchecked_fixture(sb, setup, teardown);
    tcase_add_test(sb, test_ha_standby_takeover);
    tcase_set_timeout(sb, 600);
    suite_add_tcase(s, sb);
    TCase *fe = tcase_create("e2e_ha_fencing");
    tcase_add_unchecked_fixture(fe, setup, teardown);
    tcase_add_test(fe, test_ha_fencing);
    tcase_set_timeout(fe, 300);
    suite_add_tcase(s, fe);
    TCase *two = tcase_create("e2e_ha_sqlite_second");
    tcase_add_unchecked_fixture(two, setup, teardown);
    tcase_add_test(two, test_ha_sqlite_second_refused);
    tcase_set_timeout(two, 120);
    suite_add_tcase(s, two);
    return s;
}
