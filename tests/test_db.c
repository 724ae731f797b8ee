/* The store's SQL door (src/manager/store/db.h) on each engine: the same
 * cases run on every engine a test can open, so a statement the store
 * writes once behaves the same on SQLite and PostgreSQL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>

#include "../src/manager/store/db.h"
#include "../src/manager/store/history_buf.h"
#include "pg_harness.h"
#include "skv_test.h"

typedef int (*db_open_fn)(skv__db **out, skv_error *err);

static int open_sqlite(skv__db **out, skv_error *err)
{
    sqlite3 *h = NULL;
    if (sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE, NULL)) {
        sqlite3_close(h);
        return SKV_EIO;
    }
    return skv__db_wrap_sqlite(h, out, err);
}

/* A fresh PostgreSQL cluster for this (forked) test; NULL db and SKIP
 * only where PostgreSQL is not installed. */
static skv_pg g_pg;

static int open_postgres(skv__db **out, skv_error *err)
{
    const char *skip = skv_pg_start(&g_pg);
    if (skip) {
        fprintf(stderr, "db on postgres: SKIP: %s\n", skip);
        return 1;
    }
    ck_assert_msg(skv_pg_running(&g_pg), "postgres: %s", g_pg.why);
    return skv__db_open_postgres(g_pg.conninfo, out, err);
}

/* Engines this run can open, in the order the loop cases use (_i). */
static const db_open_fn engines[] = {open_sqlite, open_postgres};
#define N_ENGINES (int)(sizeof engines / sizeof engines[0])

static skv__db *open_engine(int i)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = engines[i](&db, &e);
    if (rc == 1)
        return NULL; /* skipped, said why */
    SKV_CK_OK(rc, &e);
    SKV_CK_OK(skv__db_exec(db, "CREATE TABLE t (k TEXT PRIMARY KEY, "
                           "n BIGINT NOT NULL, b BYTEA, x TEXT)", &e), &e);
    return db;
}

static void put(skv__db *db, const char *k, int64_t n, const char *b)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "INSERT INTO t (k, n, b) VALUES (?, ?, ?) "
                              "ON CONFLICT (k) DO UPDATE SET n = excluded.n",
                              &st, &e), &e);
    skv__db_bind_text(st, 1, k);
    skv__db_bind_int64(st, 2, n);
    skv__db_bind_blob(st, 3, b, b ? strlen(b) + 1 : 0);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    ck_assert_int_eq(skv__db_changes(st), 1);
    skv__db_done(st);
}

static int64_t get_n(skv__db *db, const char *k)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT n FROM t WHERE k = ?", &st, &e),
              &e);
    skv__db_bind_text(st, 1, k);
    int64_t n = skv__db_step(st, &e) == SKV__DB_ROW
                    ? skv__db_column_int64(st, 0) : -1;
    skv__db_done(st);
    return n;
}

START_TEST(test_db_roundtrip)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    put(db, "a", INT64_C(1) << 40, "blob\001");
    put(db, "z", -3, NULL);
    put(db, "a", 7, NULL);                 /* upsert keeps one row */
    ck_assert_int_eq(get_n(db, "a"), 7);
    ck_assert_int_eq(get_n(db, "missing"), -1);
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT k, b, x FROM t ORDER BY k", &st,
                              &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    size_t len = 0;
    const char *b = skv__db_column_blob(st, 1, &len);
    ck_assert_int_eq(len, 6);
    ck_assert_mem_eq(b, "blob\001", 6);
    ck_assert(skv__db_column_is_null(st, 2));
    ck_assert_ptr_null(skv__db_column_text(st, 2));
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_str_eq(skv__db_column_text(st, 0), "z");
    ck_assert(skv__db_column_is_null(st, 1));
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    skv__db_done(st);
    skv__db_close(db);
}
END_TEST

/* A rolled-back transaction leaves nothing; a committed one stays. */
START_TEST(test_db_transactions)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    ck_assert(skv__db_in_transaction(db));
    put(db, "gone", 1, NULL);
    skv__db_rollback(db);
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(get_n(db, "gone"), -1);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    put(db, "kept", 2, NULL);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(get_n(db, "kept"), 2);
    skv__db_close(db);
}
END_TEST

/* Errors are told apart: a duplicate key is SKV_EEXIST, bad SQL and a bad
 * bind index fail with a message instead of running half-bound. */
START_TEST(test_db_errors)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    skv__db_stmt *st = NULL;
    ck_assert_int_lt(skv__db_prepare(db, "SELEC nonsense", &st, &e), 0);
    ck_assert_ptr_null(st);
    ck_assert_ptr_nonnull(strstr(e.message, "manager database"));
    SKV_CK_OK(skv__db_prepare(db, "INSERT INTO t (k, n) VALUES (?, ?)", &st,
                              &e), &e);
    skv__db_bind_text(st, 1, "k");
    skv__db_bind_int64(st, 2, 1);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    skv__db_reset(st);
    skv__db_bind_text(st, 1, "k");
    skv__db_bind_int64(st, 2, 2);
    ck_assert_int_eq(skv__db_step(st, &e), SKV_EEXIST);
    skv__db_reset(st);
    skv__db_bind_text(st, 9, "x");
    ck_assert_int_lt(skv__db_step(st, &e), 0);
    skv__db_done(st);
    ck_assert_int_eq(get_n(db, "k"), 1);
    skv__db_close(db);
}
END_TEST

/* A statement used while its cached copy is busy (nested loops) is a
 * private one; both give the right rows and nothing leaks (ASan). */
START_TEST(test_db_nested_statements)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    for (int i = 0; i < 3; i++)
        put(db, (const char[]){(char)('a' + i), 0}, i, NULL);
    skv_error e = SKV_ERROR_INIT;
    skv__db_stmt *outer = NULL;
    SKV_CK_OK(skv__db_prepare(db, "SELECT k FROM t ORDER BY k", &outer, &e),
              &e);
    int rows = 0;
    while (skv__db_step(outer, &e) == SKV__DB_ROW) {
        const char *k = skv__db_column_text(outer, 0);
        ck_assert_int_eq(get_n(db, k), k[0] - 'a');
        rows++;
    }
    skv__db_done(outer);
    ck_assert_int_eq(rows, 3);
    skv__db_close(db);
}
END_TEST

/* SQL built in one buffer, reused with other text: each text runs as
 * itself (a statement cache keyed by the text's address alone would run
 * the first one again). */
START_TEST(test_db_reused_sql_buffer)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    put(db, "a", 1, NULL);
    put(db, "b", 2, NULL);
    skv_error e = SKV_ERROR_INIT;
    char sql[64];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            snprintf(sql, sizeof sql, "SELECT n FROM t WHERE k = '%c'",
                     'a' + i);
            skv__db_stmt *st = NULL;
            SKV_CK_OK(skv__db_prepare(db, sql, &st, &e), &e);
            ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
            ck_assert_int_eq(skv__db_column_int64(st, 0), i + 1);
            skv__db_done(st);
        }
    }
    skv__db_close(db);
}
END_TEST

/* Values as both engines give them: a `?` inside a string is text, not a
 * parameter; `? IS NULL` (no type from the text alone) works with NULL and
 * with a value; bools read 1/0; aggregates (numeric on PostgreSQL) read as
 * numbers; an empty blob is empty, not NULL. */
static int count_rows(skv__db_stmt *st)
{
    skv_error e = SKV_ERROR_INIT;
    int rows = 0, rc;
    while ((rc = skv__db_step(st, &e)) == SKV__DB_ROW)
        rows++;
    ck_assert_msg(rc == SKV__DB_DONE, "step: %s", e.message);
    skv__db_reset(st);
    return rows;
}

/* The multi-row INSERT text, and the bound on its buffer: the text and
 * its NUL fit exactly, one byte less is refused. */
START_TEST(test_db_values_sql)
{
    static const char want[] = "INSERT INTO t(a,b,c) VALUES (?,?,?),(?,?,?)"
                               " ON CONFLICT DO NOTHING";
    char buf[sizeof want + 8];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_values_sql(buf, sizeof buf, "INSERT INTO t(a,b,c) "
                                 "VALUES", 3, 2, " ON CONFLICT DO NOTHING",
                                 &e), &e);
    ck_assert_str_eq(buf, want);
    SKV_CK_OK(skv__db_values_sql(buf, sizeof want, "INSERT INTO t(a,b,c) "
                                 "VALUES", 3, 2, " ON CONFLICT DO NOTHING",
                                 &e), &e);
    ck_assert_str_eq(buf, want);
    ck_assert_int_eq(skv__db_values_sql(buf, sizeof want - 1, "INSERT INTO "
                                        "t(a,b,c) VALUES", 3, 2, " ON "
                                        "CONFLICT DO NOTHING", &e),
                     SKV_EINVAL);
    SKV_CK_OK(skv__db_values_sql(buf, sizeof buf, "V", 1, 3, "", &e), &e);
    ck_assert_str_eq(buf, "V (?),(?),(?)");
    ck_assert_int_eq(skv__db_values_sql(buf, sizeof buf, "V", 0, 1, "", &e),
                     SKV_EINVAL);
    /* 64 rows of 5: kernel_alloc's largest chunk, in its 2,048 bytes */
    static const char head[] = "INSERT INTO kernel_alloc(kernel_id,device_id,"
                               "slot,amount,whole) VALUES";
    char big[2048];
    SKV_CK_OK(skv__db_values_sql(big, sizeof big, head, 5, 64, "", &e), &e);
    ck_assert_uint_eq(strlen(big), strlen(head) + 1 + 64 * 11 + 63);
    ck_assert_str_eq(big + strlen(big) - 12, ",(?,?,?,?,?)");
}
END_TEST

START_TEST(test_db_values)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    put(db, "a", 2, NULL);
    put(db, "b", 5, NULL);
    skv_error e = SKV_ERROR_INIT;
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "SELECT k FROM t WHERE '?' = '?' AND "
                              "(? IS NULL OR k = ?) ORDER BY k", &st, &e), &e);
    skv__db_bind_null(st, 1);
    skv__db_bind_null(st, 2);
    ck_assert_int_eq(count_rows(st), 2);
    skv__db_bind_text(st, 1, "b");
    skv__db_bind_text(st, 2, "b");
    ck_assert_int_eq(count_rows(st), 1);
    skv__db_done(st);
    SKV_CK_OK(skv__db_prepare(db, "SELECT SUM(n), AVG(n), COUNT(*), 1 = 1, "
                              "1 = 0 FROM t WHERE k <> ?", &st, &e), &e);
    skv__db_bind_text(st, 1, "z");
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_int_eq(skv__db_column_int64(st, 0), 7);
    ck_assert(skv__db_column_double(st, 1) == 3.5);
    ck_assert_int_eq(skv__db_column_int64(st, 2), 2);
    ck_assert_int_eq(skv__db_column_int64(st, 3), 1);
    ck_assert_int_eq(skv__db_column_int64(st, 4), 0);
    ck_assert_str_eq(skv__db_column_text(st, 3), "1");
    skv__db_done(st);
    SKV_CK_OK(skv__db_prepare(db, "UPDATE t SET b = ? WHERE k = 'a'", &st,
                              &e), &e);
    skv__db_bind_blob(st, 1, "", 0);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    skv__db_done(st);
    SKV_CK_OK(skv__db_prepare(db, "SELECT b FROM t WHERE k = 'a'", &st, &e),
              &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    size_t len = 9;
    skv__db_column_blob(st, 0, &len);
    ck_assert_int_eq(len, 0);
    ck_assert(!skv__db_column_is_null(st, 0));
    skv__db_done(st);
    skv__db_close(db);
}
END_TEST

/* Same double both ways, including one that needs all 17 digits. */
START_TEST(test_db_doubles)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_exec(db, "CREATE TABLE f (v DOUBLE PRECISION)", &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "INSERT INTO f (v) VALUES (?)", &st, &e),
              &e);
    skv__db_bind_double(st, 1, 0.1 + 0.2);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    skv__db_done(st);
    SKV_CK_OK(skv__db_prepare(db, "SELECT v FROM f", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert(skv__db_column_double(st, 0) == 0.1 + 0.2);
    skv__db_done(st);
    skv__db_close(db);
}
END_TEST

/* ---- PostgreSQL only -------------------------------------------------- */

static skv__db *pg_second(void)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(g_pg.conninfo, &db, &e), &e);
    return db;
}

static int64_t one_int(skv__db *db, const char *sql, skv_error *e, int *rc)
{
    skv__db_stmt *st = NULL;
    int64_t v = -1;
    if ((*rc = skv__db_prepare(db, sql, &st, e)))
        return v;
    *rc = skv__db_step(st, e);
    if (*rc == SKV__DB_ROW) {
        v = skv__db_column_int64(st, 0);
        *rc = 0;
    }
    skv__db_done(st);
    return v;
}

/* A row locked by another session: NOWAIT is contention (SKV_EBUSY), not
 * an I/O error, so the store can tell "retry" from "broken". */
START_TEST(test_db_pg_contention)
{
    skv__db *a = open_engine(1);
    if (!a)
        return;
    put(a, "k", 1, NULL);
    skv__db *b = pg_second();
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(a, &e), &e);
    put(a, "k", 2, NULL);
    int rc = 0;
    SKV_CK_OK(skv__db_begin(b, &e), &e);
    one_int(b, "SELECT n FROM t WHERE k = 'k' FOR UPDATE NOWAIT", &e, &rc);
    ck_assert_int_eq(rc, SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "55P03"));
    skv__db_rollback(b);
    SKV_CK_OK(skv__db_commit(a, &e), &e);
    ck_assert_int_eq(get_n(b, "k"), 2);
    skv__db_close(b);
    skv__db_close(a);
}
END_TEST

/* PostgreSQL aborts a transaction at its first failed statement and then
 * answers COMMIT with ROLLBACK; that must read as a failed commit and
 * leave nothing written. */
START_TEST(test_db_pg_aborted_commit)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    put(db, "dup", 1, NULL);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    put(db, "new", 1, NULL);
    int rc = 0;
    one_int(db, "INSERT INTO t (k, n) VALUES ('dup', 2) RETURNING n", &e,
            &rc);
    ck_assert_int_eq(rc, SKV_EEXIST);
    ck_assert_int_eq(skv__db_commit(db, &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "rolled back"));
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(get_n(db, "new"), -1);
    ck_assert_int_eq(get_n(db, "dup"), 1);
    skv__db_close(db);
}
END_TEST

/* The server ends this session (as a failover or restart would): the next
 * statement is SKV_EIO saying the connection was lost, and closing is
 * clean. */
START_TEST(test_db_pg_lost_connection)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    int rc = 0;
    int64_t pid = one_int(db, "SELECT pg_backend_pid()", &e, &rc);
    SKV_CK_OK(rc, &e);
    skv__db *killer = pg_second();
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(killer, "SELECT pg_terminate_backend(?)", &st,
                              &e), &e);
    skv__db_bind_int64(st, 1, pid);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_int_eq(skv__db_column_int64(st, 0), 1);
    skv__db_done(st);
    ck_assert_int_eq(get_n(killer, "x"), -1);
    ck_assert_int_lt(skv__db_prepare(db, "SELECT n FROM t WHERE k = ?", &st,
                                     &e), 0);
    one_int(db, "SELECT 1", &e, &rc);
    ck_assert_int_eq(rc, SKV_EIO);
    ck_assert_msg(strstr(e.message, "connection to PostgreSQL lost"), "%s",
                  e.message);
    skv__db_close(killer);
    skv__db_close(db);
}
END_TEST

/* Bad connection strings are SKV_EINVAL; an unreachable server is SKV_EIO
 * naming where it tried, never the password. Needs no server. */
START_TEST(test_db_pg_bad_conninfo)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv__db_open_postgres("", &db, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__db_open_postgres("postgresql://h/x?nosuchkey=1", &db,
                                           &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "connection string"));
    ck_assert_int_eq(skv__db_open_postgres("nonsense words", &db, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__db_open_postgres("host=/nonexistent-skv user=u "
                                           "password=s3cr3t dbname=d",
                                           &db, &e), SKV_EIO);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(strstr(e.message, "cannot connect"));
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent-skv"));
    ck_assert_ptr_null(strstr(e.message, "s3cr3t"));
}
END_TEST

/* ---- deferred errors (db.h skv__db_defer_errors, db_pg_pipe.c) -------- */

/* A plain INSERT (a duplicate fails); its step's rc. */
static int ins(skv__db *db, const char *k, int64_t n, skv_error *e)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO t (k, n) VALUES (?, ?)", &st,
                             e);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, k);
    skv__db_bind_int64(st, 2, n);
    rc = skv__db_step(st, e);
    skv__db_done(st);
    return rc;
}

static int64_t rows(skv__db *db)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = 0;
    int64_t n = one_int(db, "SELECT count(*) FROM t", &e, &rc);
    SKV_CK_OK(rc, &e);
    return n;
}

/* One unit (savepoint) of a deferred transaction fails on a duplicate key:
 * the error comes no later than the unit's release, undoing the unit
 * undoes exactly it, and the units around it commit. On every engine. */
START_TEST(test_db_defer_unit_error)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    put(db, "dup", 1, NULL);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "SAVEPOINT u", &e), &e);
    SKV_CK_OK(ins(db, "before", 1, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "RELEASE SAVEPOINT u", &e), &e);
    SKV_CK_OK(skv__db_exec(db, "SAVEPOINT u", &e), &e);
    int rc = ins(db, "in-unit", 1, &e);
    if (rc == 0)
        rc = ins(db, "dup", 2, &e);         /* SQLite: at once */
    if (rc == 0)
        rc = skv__db_exec(db, "RELEASE SAVEPOINT u", &e); /* PG: here */
    ck_assert_int_eq(rc, SKV_EEXIST);
    ck_assert_msg(strstr(e.message, "dup") || strstr(e.message, "unique") ||
                  strstr(e.message, "UNIQUE"), "%s", e.message);
    SKV_CK_OK(skv__db_exec(db, "ROLLBACK TO SAVEPOINT u", &e), &e);
    SKV_CK_OK(skv__db_exec(db, "RELEASE SAVEPOINT u", &e), &e);
    SKV_CK_OK(skv__db_exec(db, "SAVEPOINT u", &e), &e);
    SKV_CK_OK(ins(db, "after", 1, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "RELEASE SAVEPOINT u", &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(get_n(db, "before"), 1);
    ck_assert_int_eq(get_n(db, "in-unit"), -1);
    ck_assert_int_eq(get_n(db, "after"), 1);
    ck_assert_int_eq(get_n(db, "dup"), 1);
    ck_assert_int_eq(rows(db), 3);
    skv__db_close(db);
}
END_TEST

/* A duplicate among many queued writes fails the whole transaction at
 * COMMIT: nothing of it is left, it is over, and the connection takes
 * the next one (deferred or not). */
START_TEST(test_db_defer_commit_error)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    put(db, "dup", 1, NULL);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    char k[16];
    int rc = 0;
    for (int i = 0; i < 40 && !rc; i++) {
        snprintf(k, sizeof k, "k%d", i);
        rc = ins(db, i == 20 ? "dup" : k, i, &e);
    }
    if (rc == 0)
        rc = skv__db_commit(db, &e);
    else
        skv__db_rollback(db);               /* SQLite: at once */
    ck_assert_int_eq(rc, SKV_EEXIST);
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(rows(db), 1);
    ck_assert_int_eq(get_n(db, "k0"), -1);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(ins(db, "next", 1, &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(ins(db, "plain", 1, &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(rows(db), 3);
    skv__db_close(db);
}
END_TEST

/* A write's count, asked for, is its real count even while queued. */
START_TEST(test_db_defer_changes)
{
    skv__db *db = open_engine(_i);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    put(db, "a", 1, NULL);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "UPDATE t SET n = n + 1 WHERE k = ?", &st,
                              &e), &e);
    for (int i = 0; i < 3; i++) {
        skv__db_reset(st);
        skv__db_bind_text(st, 1, i == 1 ? "none" : "a");
        ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
        ck_assert_int_eq(skv__db_changes(st), i == 1 ? 0 : 1);
    }
    skv__db_done(st);
    ck_assert_int_eq(get_n(db, "a"), 3);    /* reads see queued writes */
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(get_n(db, "a"), 3);
    skv__db_close(db);
}
END_TEST

/* Proof that writes wait in the pipeline: another session holds the row
 * lock; a synchronous UPDATE would wait for it and fail on lock_timeout
 * (SKV_EBUSY), a queued one returns at once and runs after the lock is
 * gone, at COMMIT. */
START_TEST(test_db_pg_defer_pipelines)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    put(db, "k", 1, NULL);
    SKV_CK_OK(skv__db_exec(db, "SET lock_timeout = '3s'", &e), &e);
    skv__db *b = pg_second();
    int rc = 0;
    SKV_CK_OK(skv__db_begin(b, &e), &e);
    one_int(b, "SELECT n FROM t WHERE k = 'k' FOR UPDATE", &e, &rc);
    SKV_CK_OK(rc, &e);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "SAVEPOINT u", &e), &e);
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(db, "UPDATE t SET n = 5 WHERE k = ?", &st,
                              &e), &e);
    skv__db_bind_text(st, 1, "k");
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_DONE);
    skv__db_done(st);
    SKV_CK_OK(skv__db_commit(b, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "RELEASE SAVEPOINT u", &e), &e);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    ck_assert_int_eq(get_n(b, "k"), 5);
    skv__db_close(b);
    skv__db_close(db);
}
END_TEST

/* A write that fails before a savepoint is not undone by rolling back to
 * that savepoint (which never ran): the transaction fails at COMMIT. */
START_TEST(test_db_pg_defer_error_before_savepoint)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    put(db, "dup", 1, NULL);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(ins(db, "dup", 2, &e), &e);   /* queued */
    SKV_CK_OK(skv__db_exec(db, "SAVEPOINT u", &e), &e);
    SKV_CK_OK(ins(db, "x", 1, &e), &e);
    ck_assert_int_eq(skv__db_exec(db, "RELEASE SAVEPOINT u", &e), SKV_EEXIST);
    ck_assert_int_eq(skv__db_exec(db, "ROLLBACK TO SAVEPOINT u", &e),
                     SKV_EEXIST);
    int rc = 0;
    one_int(db, "SELECT 1", &e, &rc);
    ck_assert_int_eq(rc, SKV_EEXIST);
    ck_assert_int_eq(skv__db_commit(db, &e), SKV_EEXIST);
    ck_assert(!skv__db_in_transaction(db));
    ck_assert_int_eq(rows(db), 1);
    ck_assert_int_eq(get_n(db, "x"), -1);
    skv__db_close(db);
}
END_TEST

/* The server ends the session while writes wait in the pipeline (as a
 * failover or a killed server would): COMMIT fails with SKV_EIO saying
 * the connection was lost, promptly, and nothing was written. */
START_TEST(test_db_pg_defer_lost_connection)
{
    skv__db *db = open_engine(1);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    int rc = 0;
    int64_t pid = one_int(db, "SELECT pg_backend_pid()", &e, &rc);
    SKV_CK_OK(rc, &e);
    skv__db_defer_errors(db);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(ins(db, "a", 1, &e), &e);
    SKV_CK_OK(ins(db, "b", 1, &e), &e);
    skv__db *killer = pg_second();
    skv__db_stmt *st = NULL;
    SKV_CK_OK(skv__db_prepare(killer, "SELECT pg_terminate_backend(?)", &st,
                              &e), &e);
    skv__db_bind_int64(st, 1, pid);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_int_eq(skv__db_column_int64(st, 0), 1);
    skv__db_done(st);
    /* Wait until the backend is gone (not a sleep: polled). */
    for (int i = 0; i < 600; i++) {
        int64_t n = one_int(killer, "SELECT count(*) FROM pg_stat_activity "
                            "WHERE application_name = 'sokovan-manager'",
                            &e, &rc);
        SKV_CK_OK(rc, &e);
        if (n == 1)
            break;
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    rc = ins(db, "c", 1, &e);
    if (rc == 0)
        rc = skv__db_commit(db, &e);
    else
        skv__db_rollback(db);
    ck_assert_int_eq(rc, SKV_EIO);
    ck_assert_msg(strstr(e.message, "connection to PostgreSQL lost"), "%s",
                  e.message);
    ck_assert(!skv__db_in_transaction(db));
    one_int(db, "SELECT 1", &e, &rc);
    ck_assert_int_eq(rc, SKV_EIO);
    ck_assert_int_eq(rows(killer), 0);
    skv__db_close(killer);
    skv__db_close(db);
}
END_TEST

Suite *skv_test_suite_db(void);
Suite *skv_test_suite_db(void)
{
    Suite *s = suite_create("db");
    TCase *tc = tcase_create("db");
    tcase_add_loop_test(tc, test_db_roundtrip, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_transactions, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_errors, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_nested_statements, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_reused_sql_buffer, 0, N_ENGINES);
    tcase_add_test(tc, test_db_values_sql);
    tcase_add_loop_test(tc, test_db_values, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_doubles, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_defer_unit_error, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_defer_commit_error, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_defer_changes, 0, N_ENGINES);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    TCase *pg = tcase_create("db_pg");
    tcase_add_test(pg, test_db_pg_contention);
    tcase_add_test(pg, test_db_pg_aborted_commit);
    tcase_add_test(pg, test_db_pg_lost_connection);
    tcase_add_test(pg, test_db_pg_bad_conninfo);
    tcase_add_test(pg, test_db_pg_defer_pipelines);
    tcase_add_test(pg, test_db_pg_defer_error_before_savepoint);
    tcase_add_test(pg, test_db_pg_defer_lost_connection);
    tcase_set_timeout(pg, 60);
    suite_add_tcase(s, pg);
    return s;
}
