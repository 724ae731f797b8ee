/* The store's write batching on each engine: units whose SAVEPOINT is
 * sent only at their first write (db_unit.c), session_history rows
 * buffered for the transaction (history_buf.c) and nonces written as
 * multi-row INSERTs (nonces.c). A failed unit leaves none of its rows,
 * the units around it keep theirs, a rollback keeps none, a read inside
 * the transaction sees its own rows.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>

#include "../src/manager/store/store.h"
#include "pg_harness.h"
#include "skv_test.h"

static skv_pg g_pg;

static skv__db *open_sqlite(void)
{
    sqlite3 *h = NULL;
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE,
                                     NULL), SQLITE_OK);
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "PRAGMA foreign_keys=ON", &e), &e);
    return db;
}

/* NULL (and SKIP said) only where PostgreSQL is not installed. */
static skv__db *open_postgres(void)
{
    const char *skip = skv_pg_start(&g_pg);
    if (skip) {
        fprintf(stderr, "db_units on postgres: SKIP: %s\n", skip);
        return NULL;
    }
    ck_assert_msg(skv_pg_running(&g_pg), "postgres: %s", g_pg.why);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(g_pg.conninfo, &db, &e), &e);
    return db;
}

/* The tables as the store's migrations make them, the least of them. */
static skv__db *open_engine(int i)
{
    skv__db *db = i == 0 ? open_sqlite() : open_postgres();
    if (!db)
        return NULL;
    skv_error e = SKV_ERROR_INIT;
    const char *serial = i == 0 ? "INTEGER" : "BIGSERIAL";
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE TABLE sessions(id TEXT PRIMARY KEY);"
             "CREATE TABLE session_history(id %s PRIMARY KEY, session_id TEXT"
             " NOT NULL REFERENCES sessions(id), status TEXT NOT NULL, ts_ms "
             "BIGINT NOT NULL, reason TEXT);"
             "CREATE TABLE auth_nonces(ts_ms BIGINT NOT NULL, access_key TEXT"
             " NOT NULL, nonce %s NOT NULL, PRIMARY KEY (ts_ms, access_key, "
             "nonce));"
             "CREATE TABLE t(k TEXT PRIMARY KEY);"
             "INSERT INTO sessions(id) VALUES ('s1'), ('s2')", serial,
             i == 0 ? "BLOB" : "BYTEA");
    SKV_CK_OK(skv__db_exec(db, sql, &e), &e);
    return db;
}

static int put_t(skv__db *db, const char *k, skv_error *e)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO t(k) VALUES (?)", &st, e);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, k);
    rc = skv__db_step(st, e);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

static int64_t count(skv__db *db, const char *sql)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, sql, &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return n;
}

/* The statuses of s1's history in id order, joined by ','. */
static void history(skv__db *db, char *out, size_t cap)
{
    skv_proto_session_info i;
    memset(&i, 0, sizeof i);
    i.session_id = (char *)"s1";
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_session_history(db, &i, &e), &e);
    out[0] = 0;
    for (size_t k = 0; k < i.n_history; k++) {
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k ? "," : "",
                 i.history[k].status);
        free(i.history[k].status);
        free(i.history[k].reason);
    }
    free(i.history);
}

static void add(skv__db *db, const char *status)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_history_add(db, "s1", status, "why", 7, &e), &e);
}

/* A unit that fails (a duplicate key: SQLite at once, PostgreSQL's
 * pipeline at the release) takes its history rows with it; the units
 * before and after it keep theirs, in order. */
START_TEST(test_units_failed_unit_rows)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(put_t(db, "dup", &e), &e);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "A");
    SKV_CK_OK(put_t(db, "a", &e), &e);
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "B");
    int rc = put_t(db, "dup", &e);
    if (!rc)
        rc = skv__mgr_store_release(db, &e);
    ck_assert_int_eq(rc, SKV_EEXIST);
    skv__mgr_store_rollback_to(db);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "C");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    char h[256];
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A,C");
    ck_assert_int_eq(count(db, "SELECT count(*) FROM t"), 2);
    skv__db_close(db);
}
END_TEST

/* Optimistic units (PostgreSQL, skv__db_defer_releases): the failing
 * unit's release does not see its error, so the whole transaction fails
 * at COMMIT and nothing of it lands (rows, history). The same units again
 * without it (the manager's careful mode): the failing unit is refused
 * alone at its release and the others commit. */
static int unit_put(skv__db *db, const char *status, const char *k,
                    skv_error *e)
{
    int rc = skv__mgr_store_savepoint(db, e);
    if (rc)
        return rc;
    add(db, status);
    if (!(rc = put_t(db, k, e)))
        rc = skv__mgr_store_release(db, e);
    if (rc)
        skv__mgr_store_rollback_to(db);
    return rc;
}

START_TEST(test_units_optimistic_then_careful)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char h[256];
    SKV_CK_OK(put_t(db, "dup", &e), &e);
    skv__db_defer_errors(db);
    skv__db_defer_releases(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(unit_put(db, "A", "a", &e), &e);
    SKV_CK_OK(unit_put(db, "B", "dup", &e), &e);   /* not known yet */
    ck_assert_int_eq(unit_put(db, "C", "c", &e), 0);
    ck_assert_int_eq(skv__db_commit(db, &e), SKV_EEXIST);
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "");
    ck_assert_int_eq(count(db, "SELECT count(*) FROM t"), 1);
    skv__db_defer_errors(db);    /* careful: releases wait */
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(unit_put(db, "A", "a", &e), &e);
    ck_assert_int_eq(unit_put(db, "B", "dup", &e), SKV_EEXIST);
    SKV_CK_OK(unit_put(db, "C", "c", &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A,C");
    ck_assert_int_eq(count(db, "SELECT count(*) FROM t"), 3);
    skv__db_close(db);
}
END_TEST

/* A rolled-back transaction's rows never land, not even with the next
 * transaction's commit. */
START_TEST(test_units_rollback_drops_rows)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "GONE");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    skv__db_rollback(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    add(db, "KEPT");
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    char h[256];
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "KEPT");
    skv__db_close(db);
}
END_TEST

/* A failed COMMIT drops the buffer too: the rows of a transaction the
 * engine refused (here a key a second connection took first on
 * PostgreSQL; on SQLite a failing deferred foreign key) never land. */
START_TEST(test_units_failed_commit_drops_rows)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_exec(db, "CREATE TABLE c(k TEXT PRIMARY KEY REFERENCES"
                           " sessions(id) DEFERRABLE INITIALLY DEFERRED)",
                           &e), &e);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    add(db, "GONE");
    SKV_CK_OK(skv__db_exec(db, "INSERT INTO c(k) VALUES ('nosuch')", &e),
              &e);
    ck_assert_int_lt(skv__db_commit(db, &e), 0);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    add(db, "KEPT");
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    char h[256];
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "KEPT");
    skv__db_close(db);
}
END_TEST

/* A read inside the transaction sees the rows buffered so far. When the
 * read comes inside a unit that then fails, the earlier units' rows it
 * wrote (its ROLLBACK TO undid them) are written again at COMMIT. */
START_TEST(test_units_read_sees_own_rows)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char h[256];
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "A");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "B");
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A,B");
    skv__mgr_store_rollback_to(db);     /* the unit failed after its read */
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A");
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "C");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A,C");
    skv__db_close(db);
}
END_TEST

/* Same as above but without a read between the rollback and COMMIT:
 * the rows the failed unit's read flushed for earlier units must be
 * written again by COMMIT itself. */
START_TEST(test_units_reflush_at_commit)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char h[256];
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "A");
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "B");
    history(db, h, sizeof h);
    skv__mgr_store_rollback_to(db);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "A");
    skv__db_close(db);
}
END_TEST

/* Many rows (more than one chunk, and not a power of two) land in the
 * order they were added, ids ascending. */
START_TEST(test_units_many_rows_in_order)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    char s[16], want[2048] = "", h[2048];
    for (int k = 0; k < 203; k++) {
        snprintf(s, sizeof s, "S%d", k);
        add(db, s);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                 k ? "," : "", s);
    }
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    history(db, h, sizeof h);
    ck_assert_str_eq(h, want);
    /* outside a transaction a row is written at once */
    add(db, "NOW");
    ck_assert_int_eq(count(db, "SELECT count(*) FROM session_history"), 204);
    skv__db_close(db);
}
END_TEST

/* A unit that runs no statement sends no SAVEPOINT; one that writes
 * sends one; one that only reads sends none on SQLite (a failed read
 * there leaves the transaction alive) and one on PostgreSQL (a failed
 * read aborts the transaction, which only a savepoint undoes alone). */
START_TEST(test_units_savepoint_at_first_write)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    const skv__db_stats *s = skv__db_stats_of(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    uint64_t sp = s->savepoints;
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "BUFFERED");        /* no statement: waits for COMMIT */
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    ck_assert_uint_eq(s->savepoints, sp);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    ck_assert_int_eq(count(db, "SELECT count(*) FROM t"), 0);
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    ck_assert_uint_eq(s->savepoints, sp + (_i == 0 ? 0 : 1));
    sp = s->savepoints;
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    SKV_CK_OK(put_t(db, "x", &e), &e);
    SKV_CK_OK(put_t(db, "y", &e), &e);
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    ck_assert_uint_eq(s->savepoints, sp + 1);
    /* a unit without a savepoint still undoes its buffered rows */
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    add(db, "UNDONE");
    skv__mgr_store_rollback_to(db);
    ck_assert_uint_eq(s->savepoints, sp + 1);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    char h[256];
    history(db, h, sizeof h);
    ck_assert_str_eq(h, "BUFFERED");
    ck_assert_int_eq(count(db, "SELECT count(*) FROM t"), 2);
    skv__db_close(db);
}
END_TEST

/* ---- held status writes (row_buf.c) ------------------------------- */
static skv__db *open_kernels(int i)
{
    skv__db *db = open_engine(i);
    skv_error e = SKV_ERROR_INIT;
    if (db)
        SKV_CK_OK(skv__db_exec(db, "CREATE TABLE kernels(id TEXT PRIMARY "
                  "KEY, status TEXT, container_id TEXT, exit_code BIGINT, "
                  "reason TEXT, live INTEGER); INSERT INTO kernels(id, "
                  "status, live) VALUES ('k1', 'PREPARING', 1)", &e), &e);
    return db;
}

/* A transaction like the manager's batches: optimistic units on
 * PostgreSQL (the only case where writes are held), plain on SQLite. */
static void batch_begin(skv__db *db, int i)
{
    skv_error e = SKV_ERROR_INIT;
    if (i == 1) {
        skv__db_defer_errors(db);
        skv__db_defer_releases(db);
    }
    SKV_CK_OK(skv__db_begin(db, &e), &e);
}

/* "status|container|exit|reason|live" of k1. */
static void kernel_row(skv__db *db, char *out, size_t cap)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT status, container_id, exit_code, "
              "reason, live FROM kernels WHERE id='k1'", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    snprintf(out, cap, "%s|%s|%lld|%s|%s", skv__db_column_text(st, 0),
             skv__db_column_is_null(st, 1) ? "-" : skv__db_column_text(st, 1),
             (long long)skv__db_column_int64(st, 2),
             skv__db_column_is_null(st, 3) ? "-" : skv__db_column_text(st, 3),
             skv__db_column_is_null(st, 4) ? "-" : skv__db_column_text(st, 4));
    skv__db_done(st);
}

static void unit_ended(skv__db *db, int code, const char *why, bool keep)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_ended(db, "k1", "TERMINATED", code, why,
                                          &e), &e);
    if (keep)
        SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    else
        skv__mgr_store_rollback_to(db);
}

/* RUNNING and the exit in one batch of units: on PostgreSQL's optimistic
 * units one UPDATE (the row as the three writes one by one leave it), on
 * SQLite one per kept or failed write; a failed unit's write never lands
 * on either. */
START_TEST(test_units_held_status_writes)
{
    skv__db *db = open_kernels(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char r[128];
    const skv__db_stats *s = skv__db_stats_of(db);
    batch_begin(db, _i);
    uint64_t up = s->updates, sp = s->savepoints;
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_running(db, "k1", "c1", &e), &e);
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    unit_ended(db, 3, "failed unit", false);
    unit_ended(db, 4, "exited", true);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_uint_eq(s->updates - up, _i == 0 ? 3 : 1);
    ck_assert_uint_eq(s->savepoints - sp, _i == 0 ? 3 : 0);
    kernel_row(db, r, sizeof r);
    ck_assert_str_eq(r, "TERMINATED|c1|4|exited|-");
    skv__db_close(db);
}
END_TEST

/* 300 rows written twice each, the rows interleaved (all RUNNING, then
 * all exits): one UPDATE per row on PostgreSQL's optimistic units, each
 * row merged with its own later write only. */
START_TEST(test_units_held_many_rows)
{
    skv__db *db = open_kernels(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char id[16], c[16], sql[160];
    for (int k = 0; k < 300; k++) {
        snprintf(sql, sizeof sql, "INSERT INTO kernels(id, status, live) "
                 "VALUES ('m%d', 'PREPARING', 1)", k);
        SKV_CK_OK(skv__db_exec(db, sql, &e), &e);
    }
    const skv__db_stats *s = skv__db_stats_of(db);
    batch_begin(db, _i);
    uint64_t up = s->updates;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < 300; k++) {
            snprintf(id, sizeof id, "m%d", k);
            snprintf(c, sizeof c, "c%d", k);
            SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
            SKV_CK_OK(pass ? skv__mgr_store_kernel_ended(db, id, "TERMINATED",
                                                         k, "x", &e)
                           : skv__mgr_store_kernel_running(db, id, c, &e),
                      &e);
            SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
        }
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_uint_eq(s->updates - up, _i == 0 ? 600 : 300);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "SELECT count(*) FROM kernels WHERE id "
              "LIKE 'm%' AND status='TERMINATED' AND live IS NULL AND "
              "container_id='c' || substr(id, 2) AND reason='x' AND "
              "'m' || exit_code = id", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_int_eq(skv__db_column_int64(st, 0), 300);
    skv__db_done(st);
    skv__db_close(db);
}
END_TEST

/* A read of the table inside the transaction sees the held writes; when
 * the unit that read fails, the earlier unit's write it flushed (its
 * ROLLBACK TO undid it) is written again at COMMIT, its own never. */
START_TEST(test_units_held_read_then_fail)
{
    skv__db *db = open_kernels(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    char r[128];
    batch_begin(db, _i);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_running(db, "k1", "c1", &e), &e);
    SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_ended(db, "k1", "TERMINATED", 3, "x",
                                          &e), &e);
    kernel_row(db, r, sizeof r);
    ck_assert_str_eq(r, "TERMINATED|c1|3|x|-");
    skv__mgr_store_rollback_to(db);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    kernel_row(db, r, sizeof r);
    ck_assert_str_eq(r, "RUNNING|c1|0|-|1");
    skv__db_close(db);
}
END_TEST

/* 150 nonces (chunks of 64, 64, 16, 4, 2) with one repeated: the repeat
 * is absorbed (ON CONFLICT DO NOTHING), the rest land. */
START_TEST(test_units_nonces_multirow)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_store_nonce v[150];
    unsigned char raw[150][16];
    for (int k = 0; k < 150; k++) {
        memset(raw[k], 0, sizeof raw[k]);
        memcpy(raw[k], &k, sizeof k);
        v[k] = (skv__mgr_store_nonce){"ak", raw[k], sizeof raw[k], 1000 + k};
    }
    v[149] = v[3];
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_nonces_put(db, v, 150, &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(count(db, "SELECT count(*) FROM auth_nonces"), 149);
    skv__db_close(db);
}
END_TEST

Suite *skv_test_suite_db_units(void);
Suite *skv_test_suite_db_units(void)
{
    Suite *s = suite_create("db_units");
    TCase *tc = tcase_create("db_units");
    tcase_add_loop_test(tc, test_units_failed_unit_rows, 0, 2);
    tcase_add_loop_test(tc, test_units_rollback_drops_rows, 0, 2);
    tcase_add_test(tc, test_units_optimistic_then_careful);
    tcase_add_loop_test(tc, test_units_failed_commit_drops_rows, 0, 2);
    tcase_add_loop_test(tc, test_units_read_sees_own_rows, 0, 2);
    tcase_add_loop_test(tc, test_units_reflush_at_commit, 0, 2);
    tcase_add_loop_test(tc, test_units_many_rows_in_order, 0, 2);
    tcase_add_loop_test(tc, test_units_savepoint_at_first_write, 0, 2);
    tcase_add_loop_test(tc, test_units_nonces_multirow, 0, 2);
    tcase_add_loop_test(tc, test_units_held_status_writes, 0, 2);
    tcase_add_loop_test(tc, test_units_held_read_then_fail, 0, 2);
    tcase_add_loop_test(tc, test_units_held_many_rows, 0, 2);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
