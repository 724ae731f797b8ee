/* End-to-end, the manager database with the real daemons and the CLI
 * (tests/e2e_cluster.h): an online backup taken with `sokovan admin
 * backup` while sessions run, checked with SQLite and restored into a
 * stopped manager; a signed session.submit captured on the socket and
 * replayed after a manager kill -9 and restart.
 *
 * Needs root (containers), /bin/busybox and the daemons (make progs);
 * otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "skv_test.h"
#include "e2e_cluster.h"

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

/* The CLI as the operator runs it; its exit status, stdout+stderr in out. */
static int cli(char *out, size_t cap, const char *args)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof(cmd), "%s/sokovan --endpoint %s --key-file "
             "%s/admin.key %s 2>&1", g.bin, g.endpoint, g.data, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int64_t db_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void db_text(const char *path, const char *sql, char *out, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void cluster_up(skv_client **cl)
{
    E2E_OK(e2e_start_manager(&g, "a1"));
    snprintf(g.agent_cpus[0], sizeof(g.agent_cpus[0]), "0");
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_connect(&g, cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, *cl, 1));
}

static void run_to_end(skv_client *cl, char *sid, const char *script)
{
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {NULL, script, "cpu=0.1,mem=16m", 1, false, NULL};
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, &r));
    ck_assert_str_eq(r.session.status, "TERMINATED");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
}

static int show(skv_client *cl, const char *sid)
{
    skv_proto_session_show_reply r;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_client_show(cl, &r, sid, &e);
    if (!rc)
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    return rc;
}

START_TEST(test_backup_restore)
{
    REQUIRE();
    skv_client *cl = NULL;
    char sid[3][E2E_ID_MAX], late[E2E_ID_MAX], out[4096], path[PATH_MAX + 64];
    cluster_up(&cl);
    for (int i = 0; i < 3; i++)
        run_to_end(cl, sid[i], "echo kept");
    /* A session still running while the backup is taken. */
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {NULL, "sleep 2", "cpu=0.1,mem=16m", 1, false, NULL};
    SKV_CK_OK(e2e_submit(cl, late, &j, &e), &e);
    int st = cli(out, sizeof(out), "admin backup b1");
    ck_assert_msg(st == 0, "admin backup: %d: %s", st, out);
    snprintf(path, sizeof(path), "%s/backups/b1", g.data);
    ck_assert_msg(strstr(out, path), "%s", out);
    /* Refused: an existing name (never overwritten), a path, no name. */
    ck_assert_int_eq(cli(out, sizeof(out), "admin backup b1"), 1);
    ck_assert_msg(strstr(out, "never overwritten"), "%s", out);
    ck_assert_int_eq(cli(out, sizeof(out), "admin backup ../../etc/x"), 1);
    ck_assert_int_eq(cli(out, sizeof(out), "admin backup"), 2);
    E2E_OK(e2e_sh("test \"$(ls -A %s/backups)\" = b1", g.data, ""));
    /* The copy is sound and holds the sessions. */
    char ok[64];
    db_text(path, "PRAGMA integrity_check", ok, sizeof(ok));
    ck_assert_str_eq(ok, "ok");
    ck_assert_int_eq(db_int(path, "SELECT count(*) FROM sessions"), 4);
    ck_assert_int_eq(db_int(path, "SELECT count(*) FROM keypairs"), 2);
    /* A session after the backup is not in it. */
    char after[E2E_ID_MAX];
    run_to_end(cl, after, "true");
    skv_client_free(cl);
    /* Restore: stop, copy into place, start. */
    e2e_kill(&g, &g.agent[0], SIGTERM, "a1");
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    E2E_OK(e2e_sh("cp %s/backups/b1 %s/manager.db", g.data, g.data));
    E2E_OK(e2e_sh("rm -f %s/manager.db-wal %s/manager.db-shm", g.data,
                  g.data));
    E2E_OK(e2e_start_manager(&g, "a1"));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(show(cl, sid[i]), 0);
    ck_assert_int_eq(show(cl, after), SKV_ENOENT);
    /* The session running at backup time ends after the restore. */
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, cl, late, 60000, &r));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- replay across a restart ------------------------------------------- */

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

/* Send frame on a fresh connection; the answer's type (and error text). */
static skv_proto_type exchange(const void *frame, size_t len, char *why,
                               size_t wn)
{
    int fd = raw_connect();
    ck_assert_int_eq(send(fd, frame, len, MSG_NOSIGNAL), (ssize_t)len);
    skv_proto_reader *rd = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_proto_reader_new(&rd, 0, &e), &e);
    skv_proto_type t = SKV_PROTO_UNKNOWN;
    why[0] = '\0';
    for (int64_t end = e2e_now_ms() + 10000; e2e_now_ms() < end;) {
        const void *pl;
        size_t n;
        if (skv_proto_reader_next(rd, &pl, &n, &e) == 1) {
            skv_proto_envelope env;
            SKV_CK_OK(skv_proto_envelope_decode(&env, pl, n, &e), &e);
            t = env.type;
            skv_proto_error er = {0};
            if (t == SKV_PROTO_ERROR &&
                !skv_proto_body_decode(&er, t, env.body, env.body_len, &e)) {
                snprintf(why, wn, "%s", er.message ? er.message : "");
                skv_proto_body_free(SKV_PROTO_ERROR, &er);
            }
            skv_proto_envelope_free(&env);
            break;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        char buf[4096];
        if (poll(&pf, 1, 100) <= 0)
            continue;
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        if (got <= 0)
            break;
        SKV_CK_OK(skv_proto_reader_feed(rd, buf, (size_t)got, &e), &e);
    }
    skv_proto_reader_free(rd);
    close(fd);
    return t;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *submit_frame(size_t *len)
{
    static char *cmd[] = {"true"};
    skv_slots *req = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=0.1,mem=16m", NULL, &e), &e);
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.session_type = "batch";
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 1;
    s.kernels = &k;
    s.n_kernels = 1;
    skv_proto_credentials cred = {g.admin_ak, g.admin_sk};
    void *f = NULL;
    SKV_CK_OK(skv_proto_message_encode(&f, len, SKV_PROTO_REQUEST, 9,
                                       SKV_PROTO_SESSION_SUBMIT, &s,
                                       wall_ms(), &cred, &e), &e);
    skv_slots_free(req);
    return f;
}

static int64_t count_sessions(void)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/manager.db", g.data);
    return db_int(p, "SELECT count(*) FROM sessions");
}

START_TEST(test_replay_after_restart)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    size_t len;
    char why[256];
    void *f = submit_frame(&len);
    ck_assert_int_eq(exchange(f, len, why, sizeof(why)),
                     SKV_PROTO_SESSION_SUBMIT_REPLY);
    ck_assert_int_eq(exchange(f, len, why, sizeof(why)), SKV_PROTO_ERROR);
    /* kill -9: nothing flushed at exit; the nonce was committed with the
     * session. Then a clean restart, the same. */
    for (int round = 0; round < 2; round++) {
        e2e_kill(&g, &g.mgr, round ? SIGTERM : SIGKILL, "manager");
        E2E_OK(e2e_start_manager(&g, "a1"));
        ck_assert_int_eq(exchange(f, len, why, sizeof(why)), SKV_PROTO_ERROR);
        ck_assert_msg(strstr(why, "replayed"), "round %d: %s", round, why);
    }
    skv_free(f);
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    ck_assert_int_eq(count_sessions(), 1);
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

Suite *skv_test_suite_e2e_store(void);
Suite *skv_test_suite_e2e_store(void)
{
    Suite *s = suite_create("e2e_store");
    ADD_CASE(s, "backup_restore", test_backup_restore);
    ADD_CASE(s, "replay_after_restart", test_replay_after_restart);
    return s;
}
