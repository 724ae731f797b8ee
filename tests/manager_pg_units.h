/* Included by test_manager.c: optimistic units on PostgreSQL (mgr_batch.c).
 * A submission the server refuses (a trigger stands in for a value
 * PostgreSQL rejects) fails its whole optimistic batch: no reply is a
 * success, no session is left in the scheduler or the database. The same
 * three again run in careful mode: only the bad one is refused.
 * SPDX-License-Identifier: Apache-2.0 */
#include "pg_harness.h"

static skv_pg g_mpg;

static void submit_token(skv_manager *m, const cred *c, const char *token,
                         int64_t now)
{
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    basic_submit(&s, &k, "cpu=1");
    s.client_token = (char *)token;
    no_flush = true;
    feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, c, now, NULL);
    no_flush = false;
    skv_slots_free(k.slots);
}

static int64_t pg_sessions(skv_manager *m)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(m->store, "SELECT count(*) FROM sessions", &st,
                              &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return n;
}

static void submit_three(skv_manager *m, const cred *c, const char *tag,
                         int64_t now)
{
    char t[32];
    snprintf(t, sizeof t, "%s-a", tag);
    submit_token(m, c, t, now);
    submit_token(m, c, "poison", now);
    snprintf(t, sizeof t, "%s-c", tag);
    submit_token(m, c, t, now);
}

START_TEST(test_pg_optimistic_batch_then_careful)
{
    const char *skip = skv_pg_start(&g_mpg);
    if (skip) {
        fprintf(stderr, "manager on postgres: SKIP: %s\n", skip);
        return;
    }
    setup_dir();
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    o.store = g_mpg.uri;
    o.bootstrap_agents = "a1";
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, T0, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "test-admin", &e), &e);
    SKV_CK_OK(skv__db_exec(m->store, "CREATE FUNCTION poison() RETURNS "
              "trigger AS $$ BEGIN IF NEW.client_token = 'poison' THEN "
              "RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$ "
              "LANGUAGE plpgsql; CREATE TRIGGER poison BEFORE INSERT ON "
              "sessions FOR EACH ROW EXECUTE FUNCTION poison()", &e), &e);
    cred ad;
    read_key(&ad, "admin.key");
    out_clear();
    submit_three(m, &ad, "one", T0 + 1);
    ck_assert_int_lt(skv_manager_flush(m, T0 + 2, &e), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_ERROR), 3);
    ck_assert_uint_eq(pending_sessions(m), 0);
    ck_assert_int_eq(pg_sessions(m), 0);
    ck_assert_uint_gt(m->batch.careful, 0);
    out_clear();
    submit_three(m, &ad, "two", T0 + 3);
    SKV_CK_OK(skv_manager_flush(m, T0 + 4, &e), &e);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 2);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_ERROR), 1);
    ck_assert_uint_eq(pending_sessions(m), 2);
    ck_assert_int_eq(pg_sessions(m), 2);
    skv_manager_free(m);
    out_clear();
    rm_tree();
    skv_pg_stop(&g_mpg);
}
END_TEST
