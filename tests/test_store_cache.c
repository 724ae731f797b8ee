/* The store's session-state cache (src/manager/store/state_cache.h): it
 * must say what a SELECT on the same connection says, whatever undid a
 * write: a rolled-back transaction, a batch unit's ROLLBACK TO, a commit
 * the engine refused, a new leader's fence; and a reopened store reads
 * the database, not what an earlier process remembered.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/manager/store/schema.h"
#include "../src/manager/store/state_cache.h"
#include "../src/manager/store/store.h"
#include "../src/manager/store/store_int.h"
#include "pg_harness.h"
#include "skv_test.h"

#define SID "s-cache-1"

static char dir[64], path[96];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-scache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.db", dir);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A connection to the test's file with the manager's schema. */
static skv__db *open_db(void)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE |
                                     SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "PRAGMA foreign_keys=ON", &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    return db;
}

static void add_session(skv__db *db, const char *sid)
{
    char sql[512];
    skv_error e = SKV_ERROR_INIT;
    snprintf(sql, sizeof sql, "INSERT INTO sessions(id, owner, domain, "
             "project, resource_group, session_type, cluster_mode, "
             "cluster_size, image, spec, status, created_ms) VALUES('%s', "
             "'u', 'd', 'p', 'g', 'batch', 'single-node', 1, 'i', x'00', "
             "'PENDING', 1)", sid);
    SKV_CK_OK(skv__db_exec(db, sql, &e), &e);
}

static skv_manager_session_state state(skv__db *db, const char *sid)
{
    skv_manager_session_state s = SKV_SESSION_ERROR;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_session_state(db, sid, &s, &e), &e);
    return s;
}

static void set(skv__db *db, const char *sid, const char *status)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_session_status(db, sid, status, "test", 5, &e),
              &e);
}

static uint64_t hits(skv__db *db)
{
    uint64_t h = 0, m = 0;
    skv__mgr_store_state_stats(db, &h, &m);
    return h;
}

/* The write is served from memory, and a rollback of the transaction
 * that made it is not. */
START_TEST(test_cache_rollback)
{
    skv__db *db = open_db();
    skv_error e = SKV_ERROR_INIT;
    add_session(db, SID);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    set(db, SID, "RUNNING");
    uint64_t h = hits(db);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_RUNNING);
    ck_assert_uint_eq(hits(db), h + 1);    /* no SELECT */
    skv__db_rollback(db);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    /* Committed: served from memory again. */
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    set(db, SID, "SCHEDULED");
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    h = hits(db);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_SCHEDULED);
    ck_assert_uint_eq(hits(db), h + 1);
    /* No such session: not cached as anything. */
    skv_manager_session_state s;
    ck_assert_int_eq(skv__mgr_store_session_state(db, "s-none", &s, &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv__mgr_store_session_status(db, "s-none", "RUNNING",
                                                   NULL, 5, &e), SKV_ENOENT);
    ck_assert_int_eq(skv__mgr_store_session_state(db, "s-none", &s, &e),
                     SKV_ENOENT);
    skv__db_close(db);
}
END_TEST

/* A failed unit of a batch (ROLLBACK TO its savepoint) undoes its state
 * change, and the batch's other units keep theirs. */
START_TEST(test_cache_unit_rollback)
{
    skv__db *db = open_db();
    skv_error e = SKV_ERROR_INIT;
    add_session(db, SID);
    add_session(db, "s-cache-2");
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    set(db, "s-cache-2", "SCHEDULED");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    set(db, SID, "RUNNING");
    ck_assert_int_eq(state(db, SID), SKV_SESSION_RUNNING);
    skv__mgr_store_rollback_to(db);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    ck_assert_int_eq(state(db, "s-cache-2"), SKV_SESSION_SCHEDULED);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    ck_assert_int_eq(state(db, "s-cache-2"), SKV_SESSION_SCHEDULED);
    skv__db_close(db);
}
END_TEST

/* The engine refuses the commit (a foreign key checked at commit): the
 * whole batch is gone, its state changes with it. */
START_TEST(test_cache_failed_commit)
{
    skv__db *db = open_db();
    skv_error e = SKV_ERROR_INIT;
    add_session(db, SID);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "PRAGMA defer_foreign_keys=ON", &e), &e);
    set(db, SID, "RUNNING");
    SKV_CK_OK(skv__mgr_store_history_add(db, "s-nobody", "RUNNING", NULL, 5,
                                         &e), &e);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_RUNNING);
    ck_assert_int_lt(skv__db_commit(db, &e), 0);
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(state(db, SID), SKV_SESSION_PENDING);
    skv__db_close(db);
}
END_TEST

static int fence_ok(skv__db *db, void *arg, skv_error *err)
{
    (void)db, (void)arg, (void)err;
    return 0;
}

static void other_writer(const char *status)
{
    sqlite3 *h = NULL;
    char sql[160];
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    snprintf(sql, sizeof sql, "UPDATE sessions SET status='%s' WHERE id='"
             SID "'", status);
    ck_assert_int_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* What another writer changed is read once this connection becomes the
 * leader (its fence is installed), and after a reopen (a restart). */
START_TEST(test_cache_fence_and_reopen)
{
    skv__db *db = open_db();
    add_session(db, SID);
    set(db, SID, "RUNNING");
    other_writer("TERMINATING");     /* a leader elsewhere meanwhile */
    ck_assert_int_eq(state(db, SID), SKV_SESSION_RUNNING);   /* stale */
    skv__db_on_begin(db, fence_ok, NULL);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_TERMINATING);
    skv__db_close(db);
    other_writer("ERROR");
    db = open_db();
    ck_assert_int_eq(state(db, SID), SKV_SESSION_ERROR);
    skv__db_close(db);
}
END_TEST

/* Ids the cache does not keep (too long) still read right. */
START_TEST(test_cache_long_id)
{
    skv__db *db = open_db();
    char sid[200];
    memset(sid, 'x', sizeof sid - 1);
    sid[sizeof sid - 1] = '\0';
    add_session(db, sid);
    set(db, sid, "SCHEDULED");
    ck_assert_int_eq(state(db, sid), SKV_SESSION_SCHEDULED);
    skv__db_close(db);
}
END_TEST

/* ---- PostgreSQL: a known session's status write waits for nothing ------ */

static void pg_sql(skv__db *db, const char *sql)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_exec(db, sql, &e), &e);
}

static uint64_t trips(skv__db *db)
{
    return skv__db_stats_of(db)->round_trips;
}

/* A batch's transaction (deferred errors, optimistic or careful). */
static void pg_batch(skv__db *db, bool optimistic)
{
    skv_error e = SKV_ERROR_INIT;
    skv__db_defer_errors(db);
    if (optimistic)
        skv__db_defer_releases(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
}

/* The server's answer, not the cache's. */
static void pg_expect_status(skv__db *db, skv_manager_session_state want)
{
    skv__mgr_store_state_forget(db);
    ck_assert_int_eq(state(db, SID), want);
}

/* A session the state cache knows exists, so its status writes do not
 * ask for their row count: in a batch they wait in the pipeline, no round
 * trip each (three per session used to be most of a session's waits). A
 * session the cache does not know is still asked about (a miss: one
 * round trip) and one that does not exist is still refused at once. The
 * server refusing a queued status write fails the unit at its release
 * (careful mode) or the batch at COMMIT (optimistic): nothing of it is
 * kept, and the cache forgets the state the write noted. */
START_TEST(test_cache_pg_known_status_waits_nothing)
{
    skv_pg srv;
    const char *skip = skv_pg_start(&srv);
    if (skip) {
        fprintf(stderr, "store_cache: SKIP: %s\n", skip);
        return;
    }
    ck_assert_msg(skv_pg_running(&srv), "postgres: %s", srv.why);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(srv.conninfo, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    pg_sql(db, "INSERT INTO sessions(id, owner, domain, project, "
           "resource_group, session_type, cluster_mode, cluster_size, image, "
           "spec, status, created_ms) VALUES('" SID "', 'u', 'd', 'p', 'g', "
           "'batch', 'single-node', 1, 'i', decode('00', 'hex'), 'PENDING', "
           "1)");
    pg_sql(db, "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN IF "
           "NEW.status = 'ERROR' THEN RAISE EXCEPTION 'refused'; END IF; "
           "RETURN NEW; END $$ LANGUAGE plpgsql");
    pg_sql(db, "CREATE TRIGGER refuse BEFORE UPDATE ON sessions FOR EACH "
           "ROW EXECUTE FUNCTION refuse()");
    /* statements parsed once, the three texts of the live marker's
     * (sessions.c): not known, final, known live */
    set(db, SID, "SCHEDULED");
    set(db, SID, "CANCELLED");
    set(db, SID, "SCHEDULED");
    set(db, SID, "SCHEDULED");
    ck_assert_int_eq(state(db, SID), SKV_SESSION_SCHEDULED);

    pg_batch(db, true);
    uint64_t t0 = trips(db);
    set(db, SID, "PREPARING");
    set(db, SID, "RUNNING");
    set(db, SID, "TERMINATING");
    ck_assert_uint_eq(trips(db), t0);   /* all three queued */
    ck_assert_int_eq(skv__mgr_store_session_status(db, "s-none", "RUNNING",
                                                   NULL, 5, &e), SKV_ENOENT);
    ck_assert_uint_eq(trips(db), t0 + 1);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    pg_expect_status(db, SKV_SESSION_TERMINATING);

    /* Careful mode: the refused write fails its unit at the release. */
    pg_batch(db, false);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    t0 = trips(db);
    set(db, SID, "ERROR");              /* queued: no error yet */
    ck_assert_uint_eq(trips(db), t0);
    ck_assert_int_lt(skv__mgr_store_release(db, &e), 0);
    ck_assert_ptr_nonnull(strstr(e.message, "refused"));
    skv__mgr_store_rollback_to(db);
    ck_assert_int_eq(state(db, SID), SKV_SESSION_TERMINATING);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    pg_expect_status(db, SKV_SESSION_TERMINATING);

    /* Optimistic: the release does not wait; COMMIT fails, nothing kept. */
    pg_batch(db, true);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    set(db, SID, "ERROR");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    ck_assert_int_lt(skv__db_commit(db, &e), 0);
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(state(db, SID), SKV_SESSION_TERMINATING);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

static int64_t live_of(skv__db *db, const char *sid)
{
    int64_t v = -1;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_int1(db, "SELECT COALESCE(live, 0) FROM "
                                  "sessions WHERE id=?", SKV__ARGS(sid), &v,
                                  &e), &e);
    return v;
}

/* The live marker (core step 3) follows the status whatever the cache
 * knew: cleared by a final status, set again by a later status that is
 * not final, and right after a rollback made the cache forget. */
START_TEST(test_cache_live_marker)
{
    skv__db *db = open_db();
    skv_error e = SKV_ERROR_INIT;
    add_session(db, SID);
    ck_assert_int_eq(live_of(db, SID), 1);
    set(db, SID, "RUNNING");                 /* unknown to the cache */
    set(db, SID, "TERMINATING");             /* known live */
    ck_assert_int_eq(live_of(db, SID), 1);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    set(db, SID, "TERMINATED");
    ck_assert_int_eq(live_of(db, SID), 0);
    skv__db_rollback(db);
    ck_assert_int_eq(live_of(db, SID), 1);
    set(db, SID, "ERROR");
    ck_assert_int_eq(live_of(db, SID), 0);
    set(db, SID, "PENDING");                 /* known final: set again */
    ck_assert_int_eq(live_of(db, SID), 1);
    SKV_CK_OK(skv__mgr_store_session_ended(db, SID, "CANCELLED", NULL, 3, 6,
                                           &e), &e);
    ck_assert_int_eq(live_of(db, SID), 0);
    skv__db_close(db);
}
END_TEST

Suite *skv_test_suite_store_cache(void);
Suite *skv_test_suite_store_cache(void)
{
    Suite *s = suite_create("store_cache");
    TCase *tc = tcase_create("store_cache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_cache_rollback);
    tcase_add_test(tc, test_cache_unit_rollback);
    tcase_add_test(tc, test_cache_failed_commit);
    tcase_add_test(tc, test_cache_fence_and_reopen);
    tcase_add_test(tc, test_cache_long_id);
    tcase_add_test(tc, test_cache_live_marker);
    suite_add_tcase(s, tc);
    TCase *pg = tcase_create("store_cache_pg");
    tcase_set_timeout(pg, 300);
    tcase_add_test(pg, test_cache_pg_known_status_waits_nothing);
    suite_add_tcase(s, pg);
    return s;
}
