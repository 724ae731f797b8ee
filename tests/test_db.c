/* The store's SQL door (src/manager/store/db.h) on each engine: the same
 * cases run on every engine a test can open, so a statement the store
 * writes once behaves the same on SQLite and PostgreSQL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>

#include "../src/manager/store/db.h"
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

/* Engines this run can open, in the order the loop cases use (_i). */
static const db_open_fn engines[] = {open_sqlite};
#define N_ENGINES (int)(sizeof engines / sizeof engines[0])

static skv__db *open_engine(int i)
{
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(engines[i](&db, &e), &e);
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

Suite *skv_test_suite_db(void);
Suite *skv_test_suite_db(void)
{
    Suite *s = suite_create("db");
    TCase *tc = tcase_create("db");
    tcase_add_loop_test(tc, test_db_roundtrip, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_transactions, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_errors, 0, N_ENGINES);
    tcase_add_loop_test(tc, test_db_nested_statements, 0, N_ENGINES);
    suite_add_tcase(s, tc);
    return s;
}
