/* Leader election and fencing (src/manager/store/lease.c) on a real
 * PostgreSQL: one leader among several managers, a standby elected once
 * the leader's process is killed with SIGKILL, and a deposed leader's
 * write refused by the epoch check.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>
#include <time.h>

#include "../src/manager/store/db.h"
#include "../src/manager/store/lease.h"
#include "../src/manager/store/store.h"
#include "pg_harness.h"
#include "skv_test.h"
#include "sokovan/manager_lease.h"

static skv_pg g_pg;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool pg_up(void)
{
    const char *skip = skv_pg_start(&g_pg);
    if (skip) {
        fprintf(stderr, "lease: SKIP: %s\n", skip);
        return false;
    }
    ck_assert_msg(skv_pg_running(&g_pg), "postgres: %s", g_pg.why);
    return true;
}

static skv__db *conn(void)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(g_pg.conninfo, &db, &e), &e);
    return db;
}

static int try_lead(skv__db *db, const char *who, int64_t *epoch)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__mgr_store_lease_try(db, who, 1, epoch, &e);
    ck_assert_msg(rc >= 0, "lease_try %s: %s", who, e.message);
    return rc;
}

/* A write as a leader makes it: check, then insert, in one transaction. */
static int fenced_write(skv__db *db, int64_t epoch, const char *k,
                        skv_error *e)
{
    int rc = skv__db_begin(db, e);
    if (!rc)
        rc = skv__mgr_store_lease_check(db, epoch, e);
    if (!rc)
        rc = skv__db_exec(db, "CREATE TABLE IF NOT EXISTS w (k TEXT)", e);
    skv__db_stmt *st = NULL;
    if (!rc && !(rc = skv__db_prepare(db, "INSERT INTO w (k) VALUES (?)",
                                      &st, e))) {
        skv__db_bind_text(st, 1, k);
        rc = skv__db_step(st, e);
        skv__db_done(st);
    }
    if (rc < 0) {
        skv__db_rollback(db);
        return rc;
    }
    return skv__db_commit(db, e);
}

START_TEST(test_lease_one_leader)
{
    if (!pg_up())
        return;
    skv__db *a = conn(), *b = conn(), *c = conn();
    int64_t ea = 0, eb = 0;
    ck_assert_int_eq(try_lead(a, "a:1", &ea), 1);
    ck_assert_int_eq(ea, 1);
    ck_assert_int_eq(try_lead(b, "b:2", &eb), 0);
    ck_assert_int_eq(try_lead(c, "c:3", &eb), 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(fenced_write(a, ea, "x", &e), &e);
    char holder[128];
    SKV_CK_OK(skv__mgr_store_lease_read(b, &eb, holder, &e), &e);
    ck_assert_int_eq(eb, 1);
    ck_assert_str_eq(holder, "a:1");
    /* a clean stop hands over at once */
    skv__mgr_store_lease_release(a);
    ck_assert_int_eq(try_lead(b, "b:2", &eb), 1);
    ck_assert_int_eq(eb, 2);
    ck_assert_int_eq(skv__mgr_store_lease_try(c, "", 1, &eb, &e), SKV_EINVAL);
    skv__db_close(a);
    skv__db_close(b);
    skv__db_close(c);
}
END_TEST

/* The leader is a separate process, killed with SIGKILL: its connection
 * ends, PostgreSQL drops its lock, the polling standby is elected well
 * within 5 s, and the epoch says a new leader reigns. */
START_TEST(test_lease_standby_takes_over_after_kill)
{
    if (!pg_up())
        return;
    int ready[2];
    ck_assert_int_eq(pipe(ready), 0);
    pid_t leader = fork();
    ck_assert_int_ge(leader, 0);
    if (leader == 0) {
        skv__db *db = NULL;
        int64_t ep = 0;
        char ok = skv__db_open_postgres(g_pg.conninfo, &db, NULL) == 0 &&
                  skv__mgr_store_lease_try(db, "leader", 1, &ep, NULL) == 1;
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char ok = 0;
    ck_assert_int_eq(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    ck_assert_msg(ok, "the leader process was not elected");
    skv__db *standby = conn();
    int64_t ep = 0;
    ck_assert_int_eq(try_lead(standby, "standby", &ep), 0);
    kill(leader, SIGKILL);
    int64_t t0 = now_ms();
    waitpid(leader, NULL, 0);
    int elected = 0;
    while (!(elected = try_lead(standby, "standby", &ep)) &&
           now_ms() - t0 < 10000)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    int64_t took = now_ms() - t0;
    fprintf(stderr, "lease: standby elected %lld ms after the kill\n",
            (long long)took);
    ck_assert_int_eq(elected, 1);
    ck_assert_int_le(took, 5000);
    ck_assert_int_eq(ep, 2);
    skv__db_close(standby);
}
END_TEST

/* A leader that lost its connection and comes back on a new one, with
 * its old epoch, after a standby took over: its write is refused and
 * leaves nothing; the new leader's goes through. */
START_TEST(test_lease_deposed_write_refused)
{
    if (!pg_up())
        return;
    skv__db *old = conn(), *next = conn(), *admin = conn();
    int64_t e_old = 0, e_new = 0, pid = 0;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(try_lead(old, "old", &e_old), 1);
    SKV_CK_OK(fenced_write(old, e_old, "before", &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(old, "SELECT pg_backend_pid()", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    pid = skv__db_column_int64(st, 0);
    skv__db_done(st);
    SKV_CK_OK(skv__db_prepare(admin, "SELECT pg_terminate_backend(?)", &st,
                              &e), &e);
    skv__db_bind_int64(st, 1, pid);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    skv__db_done(st);
    /* the old connection is gone for good: its writes fail outright */
    ck_assert_int_eq(fenced_write(old, e_old, "lost", &e), SKV_EIO);
    for (int i = 0; i < 100 && !try_lead(next, "next", &e_new); i++)
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    ck_assert_int_eq(e_new, e_old + 1);
    skv__db_close(old);
    old = conn();                          /* it reconnects, not elected */
    ck_assert_int_eq(fenced_write(old, e_old, "late", &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "deposed"));
    SKV_CK_OK(fenced_write(next, e_new, "after", &e), &e);
    SKV_CK_OK(skv__db_prepare(admin, "SELECT string_agg(k, ',' ORDER BY k)"
                              " FROM w", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_str_eq(skv__db_column_text(st, 0), "after,before");
    skv__db_done(st);
    skv__db_close(old);
    skv__db_close(next);
    skv__db_close(admin);
}
END_TEST

/* SQLite: one manager per file; elected at once, checks pass. */
START_TEST(test_lease_sqlite_single)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &h), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    int64_t ep = 0;
    ck_assert_int_eq(try_lead(db, "only", &ep), 1);
    ck_assert_int_eq(ep, 1);
    SKV_CK_OK(fenced_write(db, ep, "x", &e), &e);
    skv__db_close(db);
}
END_TEST

/* A fenced store connection (lease_fence): every transaction begun on it
 * checks the epoch first, so once another manager was elected not even a
 * BEGIN goes through, and nothing is written. */
START_TEST(test_lease_fence_every_begin)
{
    if (!pg_up())
        return;
    skv__db *lease = conn(), *store = conn(), *next = conn();
    int64_t ep = 0, ep2 = 0;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(try_lead(lease, "a", &ep), 1);
    SKV_CK_OK(skv__mgr_store_lease_fence(store, &ep, 1000, &e), &e);
    SKV_CK_OK(skv__db_begin(store, &e), &e);
    SKV_CK_OK(skv__db_exec(store, "CREATE TABLE IF NOT EXISTS w (k TEXT)",
                           &e), &e);
    SKV_CK_OK(skv__db_commit(store, &e), &e);
    SKV_CK_OK(skv__mgr_store_lease_renew(lease, ep, &e), &e);
    skv__mgr_store_lease_release(lease);
    ck_assert_int_eq(try_lead(next, "b", &ep2), 1);
    ck_assert_int_eq(ep2, ep + 1);
    ck_assert_int_eq(skv__db_begin(store, &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "deposed"));
    ck_assert(!skv__db_in_transaction(store));
    ck_assert_int_eq(skv__mgr_store_lease_renew(lease, ep, &e), SKV_ESTATE);
    /* a fence with a stale epoch fails at once */
    skv__db *late = conn();
    ck_assert_int_eq(skv__mgr_store_lease_fence(late, &ep, 1000, &e),
                     SKV_ESTATE);
    skv__db_close(late);
    skv__db_close(store);
    skv__db_close(lease);
    skv__db_close(next);
}
END_TEST

/* One batch as the manager runs it (mgr_batch.c): deferred errors and
 * optimistic units, BEGIN (with the fence's epoch check) and every
 * statement queued; two units each insert k. */
static int batch(skv__db *db, const char *k, bool hold, skv_error *e)
{
    skv__db_defer_errors(db);
    skv__db_defer_releases(db);
    int rc = skv__db_begin(db, e);
    for (int i = 0; !rc && i < 2; i++) {

        skv__db_stmt *st = NULL;
        if ((rc = skv__mgr_store_savepoint(db, e)) ||
            (rc = skv__db_prepare(db, "INSERT INTO w (k) VALUES (?)", &st,
                                  e)))
            break;
        skv__db_bind_text(st, 1, k);
        rc = skv__db_step(st, e);
        skv__db_done(st);
        if (rc >= 0)
            rc = skv__mgr_store_release(db, e);
    }
    if (rc < 0) {
        skv__db_rollback(db);
        return rc;
    }
    return hold ? 0 : skv__db_commit(db, e);
}

static int64_t rows_of(skv__db *db, const char *k)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT count(*) FROM w WHERE k = ?", &st,
                              &e), &e);
    skv__db_bind_text(st, 1, k);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return n;
}

/* The epoch check of a batch waits for nothing: BEGIN, the check, the
 * units and COMMIT are one round trip. It still holds the lease row until
 * COMMIT (a new leader's increment waits for it), and once another
 * manager was elected the same batch goes through unit by unit but its
 * COMMIT fails "deposed" and writes nothing. */
START_TEST(test_lease_batch_check_waits_for_nothing)
{
    if (!pg_up())
        return;
    skv__db *lease = conn(), *store = conn(), *next = conn();
    int64_t ep = 0, ep2 = 0;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(try_lead(lease, "a", &ep), 1);
    SKV_CK_OK(skv__mgr_store_lease_fence(store, &ep, 5000, &e), &e);
    SKV_CK_OK(skv__db_exec(next, "CREATE TABLE IF NOT EXISTS w (k TEXT)",
                           &e), &e);
    SKV_CK_OK(batch(store, "warm", false, &e), &e);  /* statements parsed */
    uint64_t rt = skv__db_stats_of(store)->round_trips;
    SKV_CK_OK(batch(store, "one", false, &e), &e);
    ck_assert_int_eq(skv__db_stats_of(store)->round_trips - rt, 1);
    ck_assert_int_eq(rows_of(next, "one"), 2);
    /* Open, its check run: the epoch cannot move under it. */
    SKV_CK_OK(batch(store, "held", true, &e), &e);
    ck_assert_int_eq(rows_of(store, "held"), 2);      /* syncs the pipe */
    SKV_CK_OK(skv__db_exec(next, "SET lock_timeout = 200", &e), &e);
    ck_assert_int_eq(skv__db_exec(next, "UPDATE ha_lease SET epoch = epoch"
                                  " + 1 WHERE name = 'manager'", &e),
                     SKV_EBUSY);
    SKV_CK_OK(skv__db_commit(store, &e), &e);
    ck_assert_int_eq(rows_of(next, "held"), 2);
    /* Deposed: the units wait for nothing, the failure comes with COMMIT
     * (which rolls back). */
    skv__mgr_store_lease_release(lease);
    ck_assert_int_eq(try_lead(next, "b", &ep2), 1);
    ck_assert_int_eq(ep2, ep + 1);
    rt = skv__db_stats_of(store)->round_trips;
    SKV_CK_OK(batch(store, "late", true, &e), &e);
    ck_assert_int_eq(skv__db_stats_of(store)->round_trips - rt, 0);
    ck_assert_int_eq(skv__db_commit(store, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "deposed: this manager led at epoch"),
                  "%s", e.message);
    ck_assert(!skv__db_in_transaction(store));
    ck_assert_int_eq(rows_of(next, "late"), 0);
    /* A lost lease row fails the check the same way. */
    SKV_CK_OK(skv__db_exec(next, "DELETE FROM ha_lease", &e), &e);
    ep = ep2;
    ck_assert_int_eq(batch(store, "gone", false, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "no lease row"), "%s", e.message);
    ck_assert_int_eq(rows_of(next, "gone"), 0);
    skv__db_close(store);
    skv__db_close(lease);
    skv__db_close(next);
}
END_TEST

/* A leader that stops talking (paused, hung) loses the lease after
 * lease_ms: PostgreSQL ends its idle session, the standby is elected and
 * the old leader's renew fails. */
START_TEST(test_lease_silent_leader_loses)
{
    if (!pg_up())
        return;
    skv__db *a = conn(), *b = conn();
    int64_t ea = 0, eb = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_lease_hold(a, 300, &e), &e);
    ck_assert_int_eq(try_lead(a, "a", &ea), 1);
    int64_t t0 = now_ms();
    while (!try_lead(b, "b", &eb) && now_ms() - t0 < 5000)
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    int64_t took = now_ms() - t0;
    ck_assert_int_eq(eb, ea + 1);
    ck_assert_msg(took >= 250 && took < 3000, "elected after %lld ms",
                  (long long)took);
    ck_assert_int_eq(skv__mgr_store_lease_renew(a, ea, &e), SKV_EIO);
    skv__db_close(a);
    skv__db_close(b);
}
END_TEST

/* skv_manager_lease: bad input refused before any connection. */
START_TEST(test_lease_api_rejects)
{
    skv_manager_lease *l = (skv_manager_lease *)1;
    skv_manager_lease_options o = SKV_MANAGER_LEASE_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    o.store = "postgresql://nobody@127.0.0.1:1/x";
    o.holder = "h";
    o.lease_ms = 1000;
    ck_assert_int_eq(skv_manager_lease_open(NULL, &o, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_manager_lease_open(&l, NULL, &e), SKV_EINVAL);
    ck_assert_ptr_null(l);
    o.lease_ms = 10;
    ck_assert_int_eq(skv_manager_lease_open(&l, &o, &e), SKV_ERANGE);
    o.lease_ms = 1000;
    o.holder = "";
    ck_assert_int_eq(skv_manager_lease_open(&l, &o, &e), SKV_EINVAL);
    o.holder = "h";
    o.store = "sqlite";
    ck_assert_int_eq(skv_manager_lease_open(&l, &o, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "PostgreSQL"));
    o.store = "postgresql://nobody@127.0.0.1:1/x";
    o.version = 99;
    ck_assert_int_eq(skv_manager_lease_open(&l, &o, &e), SKV_EVERSION);
    o.version = SKV_MANAGER_LEASE_OPTIONS_VERSION;
    ck_assert_int_eq(skv_manager_lease_open(&l, &o, &e), SKV_EIO);
    ck_assert_ptr_null(l);
    ck_assert_int_eq(skv_manager_lease_try(NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_manager_lease_renew(NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_manager_lease_epoch(NULL), 0);
    skv_manager_lease_free(NULL);
}
END_TEST

/* The public lease end to end: elected, renewed, handed over on free. */
START_TEST(test_lease_api_cycle)
{
    if (!pg_up())
        return;
    skv_manager_lease_options o = SKV_MANAGER_LEASE_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    o.store = g_pg.uri;
    o.holder = "one";
    o.lease_ms = 1000;
    skv_manager_lease *one = NULL, *two = NULL;
    SKV_CK_OK(skv_manager_lease_open(&one, &o, &e), &e);
    o.holder = "two";
    SKV_CK_OK(skv_manager_lease_open(&two, &o, &e), &e);
    ck_assert_int_eq(skv_manager_lease_renew(one, &e), SKV_ESTATE);
    ck_assert_int_eq(skv_manager_lease_try(one, 1, &e), 1);
    ck_assert_int_eq(skv_manager_lease_try(one, 1, &e), 1);   /* no bump */
    int64_t ep = skv_manager_lease_epoch(one);
    ck_assert_int_eq(skv_manager_lease_try(two, 1, &e), 0);
    char who[128];
    int64_t at = 0;
    SKV_CK_OK(skv_manager_lease_leader(two, who, sizeof(who), &at, &e), &e);
    ck_assert_str_eq(who, "one");
    ck_assert_int_eq(at, ep);
    SKV_CK_OK(skv_manager_lease_renew(one, &e), &e);
    skv_manager_lease_free(one);
    ck_assert_int_eq(skv_manager_lease_try(two, 1, &e), 1);
    ck_assert_int_eq(skv_manager_lease_epoch(two), ep + 1);
    skv_manager_lease_free(two);
}
END_TEST

Suite *skv_test_suite_lease(void);
Suite *skv_test_suite_lease(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = tcase_create("lease");
    tcase_add_test(tc, test_lease_one_leader);
    tcase_add_test(tc, test_lease_standby_takes_over_after_kill);
    tcase_add_test(tc, test_lease_deposed_write_refused);
    tcase_add_test(tc, test_lease_sqlite_single);
    tcase_add_test(tc, test_lease_fence_every_begin);
    tcase_add_test(tc, test_lease_batch_check_waits_for_nothing);
    tcase_add_test(tc, test_lease_silent_leader_loses);
    tcase_add_test(tc, test_lease_api_rejects);
    tcase_add_test(tc, test_lease_api_cycle);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
