/* The manager's `store` setting (skv_manager_options.store, --store):
 * SQLite stays the default; a malformed string and an unreachable server
 * are refused with a clear error before anything is created, through the
 * library and the real daemon; a PostgreSQL server that answers holds the
 * manager's state.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <sys/stat.h>

#include "../src/manager/store/db.h"
#include "pg_harness.h"
#include "skv_test.h"
#include "sokovan/manager.h"

static int send_none(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)conn;
    (void)frame;
    (void)len;
    (void)p;
    return 0;
}

static char g_dir[64];

/* A fresh parent directory; the data_dir under it must not appear. */
static const char *data_dir(void)
{
    static char d[96];
    snprintf(g_dir, sizeof g_dir, "/tmp/skv-store-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    snprintf(d, sizeof d, "%s/data", g_dir);
    return d;
}

static void cleanup(void)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int open_with(const char *dir, const char *store, skv_error *e)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    o.data_dir = dir;
    o.store = store;
    skv_manager *m = NULL;
    int rc = skv_manager_open(&m, &o, send_none, NULL, 1000, e);
    skv_manager_free(m);
    return rc;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

START_TEST(test_store_refusals_leave_nothing)
{
    const char *dir = data_dir();
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(open_with(dir, "mysql://h/db", &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "store must be"));
    ck_assert_int_eq(open_with(dir, "postgresql://h/db?bogus=1", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(open_with(dir, "postgresql://skv:pw1234@%2Fnonexistent"
                               "/db", &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "cannot connect"));
    ck_assert_ptr_null(strstr(e.message, "pw1234"));
    ck_assert(!exists(dir));
    SKV_CK_OK(open_with(dir, "sqlite", &e), &e);     /* the default */
    ck_assert(exists(dir));
    cleanup();
}
END_TEST

static int64_t backends(const skv_pg *pg)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(pg->conninfo, &db, &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "SELECT COUNT(*) FROM pg_stat_activity"
                              " WHERE application_name = 'sokovan-manager'",
                              &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    skv__db_close(db);
    return n - 1;                          /* not this one */
}

/* A server that answers: the manager keeps its state there (tables in
 * PostgreSQL, no manager.db in data_dir, keys still in data_dir), and
 * closing it leaves no connection open on the server. */
START_TEST(test_store_postgres_opens)
{
    skv_pg pg;
    const char *skip = skv_pg_start(&pg);
    if (skip) {
        fprintf(stderr, "store_uri: SKIP: %s\n", skip);
        return;
    }
    ck_assert_msg(skv_pg_running(&pg), "postgres: %s", pg.why);
    const char *dir = data_dir();
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(open_with(dir, pg.uri, &e), &e);
    char p[160];
    snprintf(p, sizeof p, "%s/manager.db", dir);
    ck_assert(!exists(p));
    snprintf(p, sizeof p, "%s/admin.key", dir);
    ck_assert(exists(p));
    ck_assert_int_eq(backends(&pg), 0);
    skv__db *db = NULL;
    SKV_CK_OK(skv__db_open_postgres(pg.conninfo, &db, &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "SELECT COUNT(*) FROM keypairs", &st, &e),
              &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_int_ge(skv__db_column_int64(st, 0), 1);   /* the admin's */
    skv__db_done(st);
    skv__db_close(db);
    cleanup();
    skv_pg_stop(&pg);
}
END_TEST

/* The daemon: --store with an unreachable server exits non-zero with the
 * reason, creating neither the data dir nor the socket. */
START_TEST(test_store_flag_daemon)
{
    char bin[PATH_MAX], cmd[PATH_MAX * 2], out[2048];
    snprintf(bin, sizeof bin, "%s/bin/sokovan-manager", skv_test_build_dir());
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "test_store_flag_daemon: SKIP: no %s\n", bin);
        return;
    }
    const char *dir = data_dir();
    snprintf(cmd, sizeof cmd, "%s --data-dir %s --listen %s/m.sock --tcp none"
             " --store 'postgresql://skv@%%2Fnonexistent/db' 2>&1; echo "
             "rc=$?", bin, dir, g_dir);
    skv_test_sh_output(cmd, out, sizeof out);
    ck_assert_msg(strstr(out, "cannot connect") && !strstr(out, "rc=0"),
                  "%s", out);
    ck_assert(!exists(dir));
    char sock[96];
    snprintf(sock, sizeof sock, "%s/m.sock", g_dir);
    ck_assert(!exists(sock));
    snprintf(cmd, sizeof cmd, "%s --help 2>&1 | grep -e --store", bin);
    skv_test_sh_output(cmd, out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "--store"));
    cleanup();
}
END_TEST

Suite *skv_test_suite_store_uri(void);
Suite *skv_test_suite_store_uri(void)
{
    Suite *s = suite_create("store_uri");
    TCase *tc = tcase_create("store_uri");
    tcase_add_test(tc, test_store_refusals_leave_nothing);
    tcase_add_test(tc, test_store_postgres_opens);
    tcase_add_test(tc, test_store_flag_daemon);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
