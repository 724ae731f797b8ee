/* End-to-end, batched submissions through the real daemons: four clients
 * submit as fast as they are acknowledged while the manager is killed
 * with SIGKILL mid-burst. After a restart every acknowledged session is
 * in the database, exactly once, and no more sessions exist than were
 * sent (the unacknowledged ones may or may not have been recorded).
 *
 * Needs root, /bin/busybox and the daemons (make progs); otherwise the
 * test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <sys/wait.h>

#include "e2e_cluster.h"
#include "skv_test.h"

#define CLIENTS 4
#define EACH 400

static e2e_cluster g;

/* One client: submit until refused; each acknowledged id goes to fd as
 * one line (a single write below PIPE_BUF: lines never interleave). */
static int client(int fd)
{
    skv_client *cl = NULL;
    if (e2e_connect(&g, &cl, NULL, NULL))
        return 1;
    e2e_job j = {NULL, "true", "cpu=0.1,mem=16m", 1, false, NULL, NULL, 0};
    for (int i = 0; i < EACH; i++) {
        char sid[E2E_ID_MAX], line[E2E_ID_MAX + 2];
        skv_error e = SKV_ERROR_INIT;
        if (e2e_submit(cl, sid, &j, &e))
            break;    /* the manager is gone */
        int n = snprintf(line, sizeof line, "%s\n", sid);
        if (write(fd, line, (size_t)n) != n)
            break;
    }
    skv_client_free(cl);
    return 0;
}

/* Acknowledged ids read from the pipe into ids (one per line); the
 * manager is killed with SIGKILL once KILL_AFTER were acknowledged, so
 * the kill lands mid-burst however slow the host is. */
#define KILL_AFTER 200
static size_t read_acks(int fd, char (*ids)[E2E_ID_MAX], size_t cap)
{
    static char buf[CLIENTS * EACH * (E2E_ID_MAX + 1)];
    size_t len = 0, n = 0, lines = 0;
    ssize_t r;
    while ((r = read(fd, buf + len, sizeof buf - 1 - len)) > 0) {
        for (ssize_t i = 0; i < r; i++)
            lines += buf[len + (size_t)i] == '\n';
        len += (size_t)r;
        if (lines >= KILL_AFTER && g.mgr > 0)
            e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    }
    buf[len] = 0;
    for (char *p = buf, *save = NULL; (p = strtok_r(p, "\n", &save));
         p = NULL)
        if (n < cap)
            snprintf(ids[n++], E2E_ID_MAX, "%s", p);
    return n;
}

static int64_t db_count(const char *sql, const char *arg)
{
    char p[PATH_MAX + 16];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    snprintf(p, sizeof(p), "%s/manager.db", g.data);
    if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (arg)
            sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

START_TEST(test_kill9_burst)
{
    const char *skip = e2e_prepare(&g, skv_test_build_dir());
    if (skip) {
        fprintf(stderr, "%s: skipped: %s\n", __func__, skip);
        return;
    }
    ck_assert_msg(e2e_start_manager(&g, "a1") == 0, "%s", g.why);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pids[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        if ((pids[i] = fork()) == 0) {
            close(pfd[0]);
            _exit(client(pfd[1]));
        }
        ck_assert_int_gt(pids[i], 0);
    }
    close(pfd[1]);
    static char ids[CLIENTS * EACH][E2E_ID_MAX];
    size_t acked = read_acks(pfd[0], ids, CLIENTS * EACH);
    close(pfd[0]);
    for (int i = 0; i < CLIENTS; i++) {
        int st = 0;
        ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_msg(acked > 0 && acked < CLIENTS * EACH, "acked %zu of %d: "
                  "the kill did not land mid-burst", acked, CLIENTS * EACH);
    /* A restart takes the WAL in; then read the database alone. */
    ck_assert_msg(e2e_start_manager(&g, "a1") == 0, "%s", g.why);
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    size_t lost = 0;
    for (size_t i = 0; i < acked; i++)
        if (db_count("SELECT count(*) FROM sessions WHERE id=?", ids[i]) != 1)
            lost++;
    int64_t total = db_count("SELECT count(*) FROM sessions", NULL);
    fprintf(stderr, "kill9_burst: %zu acknowledged, %lld recorded, %zu "
            "acknowledged but missing\n", acked, (long long)total, lost);
    ck_assert_uint_eq(lost, 0);
    ck_assert_int_ge(total, (int64_t)acked);
    ck_assert_int_le(total, CLIENTS * EACH);
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_batch(void);
Suite *skv_test_suite_e2e_batch(void)
{
    Suite *s = suite_create("e2e_batch");
    TCase *tc = tcase_create("kill9_burst");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill9_burst);
    suite_add_tcase(s, tc);
    return s;
}
