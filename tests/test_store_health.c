/* The store's device health (src/manager/store/health.c): an agent's set
 * of unhealthy devices replaces the stored one whole, each agent apart;
 * bad input is refused and changes nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>

#include "../src/manager/store/migrate.h"
#include "../src/manager/store/ops.h"
#include "pg_harness.h"
#include "skv_test.h"

static skv__db *ops_db(void)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE,
                                     NULL), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_ops_schema(db, &e), &e);
    return db;
}

/* The stored set of agent as "id:reason,id:reason". */
static void stored(skv__db *db, const char *agent, char *out, size_t cap)
{
    skv_proto_device_fault *v = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_health(db, agent, &v, &n, &e), &e);
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s:%s",
                 i ? "," : "", v[i].device_id, v[i].reason);
    skv__mgr_store_health_free(v, n);
}

static void replaced_whole(skv__db *db)
{
    skv_error e = SKV_ERROR_INIT;
    int v = 0;
    SKV_CK_OK(skv__mgr_store_schema_version(db, "ops", &v, &e), &e);
    ck_assert_int_eq(v, 2);
    char buf[256];
    stored(db, "a1", buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    skv_proto_device_fault two[] = {{"cuda1", "xid 79"}, {"cuda0", NULL}};
    skv_proto_device_fault one[] = {{"cuda3", "ecc"}};
    SKV_CK_OK(skv__mgr_store_health_set(db, "a1", two, 2, &e), &e);
    SKV_CK_OK(skv__mgr_store_health_set(db, "a2", one, 1, &e), &e);
    stored(db, "a1", buf, sizeof buf);
    ck_assert_str_eq(buf, "cuda0:,cuda1:xid 79");
    /* the next report replaces the set: cuda0 recovered */
    SKV_CK_OK(skv__mgr_store_health_set(db, "a1", two, 1, &e), &e);
    stored(db, "a1", buf, sizeof buf);
    ck_assert_str_eq(buf, "cuda1:xid 79");
    /* all healthy: nothing stored for a1; a2 untouched */
    SKV_CK_OK(skv__mgr_store_health_set(db, "a1", NULL, 0, &e), &e);
    stored(db, "a1", buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    stored(db, "a2", buf, sizeof buf);
    ck_assert_str_eq(buf, "cuda3:ecc");
}

START_TEST(test_health_replaced_whole)
{
    skv__db *db = ops_db();
    replaced_whole(db);
    skv__db_close(db);
}
END_TEST

static void bad_input(skv__db *db)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_device_fault one[] = {{"cuda3", "ecc"}};
    SKV_CK_OK(skv__mgr_store_health_set(db, "a2", one, 1, &e), &e);
    skv_proto_device_fault bad[] = {{"cuda1", "x"}, {"", "y"}};
    ck_assert_int_eq(skv__mgr_store_health_set(db, "a2", bad, 2, &e),
                     SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "without an id"), "%s", e.message);
    bad[1].device_id = NULL;
    ck_assert_int_eq(skv__mgr_store_health_set(db, "a2", bad, 2, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_health_set(db, NULL, one, 1, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_health_set(db, "a2", NULL, 1, &e),
                     SKV_EINVAL);
    char buf[64];
    stored(db, "a2", buf, sizeof buf);
    ck_assert_str_eq(buf, "cuda3:ecc");
    /* the same device twice in one set is refused by the key: nothing
     * of the set is kept by the caller's rollback */
    skv_proto_device_fault dup[] = {{"cuda1", "x"}, {"cuda1", "y"}};
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    ck_assert_int_lt(skv__mgr_store_health_set(db, "a2", dup, 2, &e), 0);
    skv__db_rollback(db);
    stored(db, "a2", buf, sizeof buf);
    ck_assert_str_eq(buf, "cuda3:ecc");
}

START_TEST(test_health_bad_input)
{
    skv__db *db = ops_db();
    bad_input(db);
    skv__db_close(db);
}
END_TEST

/* The same on PostgreSQL (the manager's --store postgresql://). */
START_TEST(test_health_postgres)
{
    skv_pg pg;
    const char *skip = skv_pg_start(&pg);
    if (skip) {
        fprintf(stderr, "store_health: SKIP postgres: %s\n", skip);
        return;
    }
    ck_assert_msg(skv_pg_running(&pg), "postgres: %s", pg.why);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(pg.conninfo, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_ops_schema(db, &e), &e);
    replaced_whole(db);
    SKV_CK_OK(skv__mgr_store_health_set(db, "a2", NULL, 0, &e), &e);
    bad_input(db);
    skv__db_close(db);
    skv_pg_stop(&pg);
}
END_TEST

Suite *skv_test_suite_store_health(void);
Suite *skv_test_suite_store_health(void)
{
    Suite *s = suite_create("store_health");
    TCase *tc = tcase_create("store_health");
    tcase_add_test(tc, test_health_replaced_whole);
    tcase_add_test(tc, test_health_bad_input);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_health_postgres);
    suite_add_tcase(s, tc);
    return s;
}
