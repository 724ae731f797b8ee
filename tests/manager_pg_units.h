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

/* The status UPDATEs of one session's life (1 kernel), its create reply,
 * "running" status and exit arriving together as the bench's agents send
 * them: on PostgreSQL (optimistic units, store/row_buf.c) the kernel's
 * and the session's RUNNING go out with their final status, 2 UPDATEs
 * each (placement, end) where there were 3; on SQLite 3 each as before.
 * Either way the rows and the history end the same. */
static void one_life(skv_manager *m, const cred *ag, const cred *ad,
                     char *sid, int64_t now)
{
    char kid[96];
    register_agent(m, ag, "cpu=4", "mem=8g", NULL, 0, now);
    snprintf(sid, 64, "%s", submit(m, ADMIN, ad, "cpu=1", "batch", NULL,
                                   now + 1));
    tick(m, now + 2);
    uint64_t id = take_create(kid);
    skv_proto_kernel_status ks = {"a1", sid, kid, "running", NULL, kid};
    no_flush = true;
    answer_create(m, id, kid, now + 3);
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_KERNEL_STATUS, &ks, ag,
                          now + 3, NULL), 0);
    send_exit(m, ag, sid, kid, 3, now + 3);
    no_flush = false;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_flush(m, now + 4, &e), &e);
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, NULL, NULL));
}

static void expect_life(skv_manager *m, const cred *ad, const char *sid,
                        int64_t now)
{
    static const char *const states[] = {"PENDING", "SCHEDULED", "PREPARING",
                                         "RUNNING", "TERMINATED"};
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, ad, sid, &rep, now), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 3);
    ck_assert_uint_eq(rep.session.n_history, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(rep.session.history[i].status, states[i]);
    ck_assert_str_eq(rep.session.kernels[0].status, "TERMINATED");
    ck_assert_int_eq(rep.session.kernels[0].exit_code, 3);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
}

/* "started|finished|live|container|kernel live" of sid's rows. */
static void life_row(skv_manager *m, const char *sid, char *out, size_t cap)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(m->store, "SELECT s.started_ms, s.finished_ms,"
              " s.live, k.container_id, k.live FROM sessions s JOIN kernels "
              "k ON k.session_id=s.id WHERE s.id=?", &st, &e), &e);
    skv__db_bind_text(st, 1, sid);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    snprintf(out, cap, "%lld|%lld|%s|%s|%s",
             (long long)skv__db_column_int64(st, 0),
             (long long)skv__db_column_int64(st, 1),
             skv__db_column_is_null(st, 2) ? "-" : "1",
             skv__db_column_is_null(st, 3) ? "-" : "c",
             skv__db_column_is_null(st, 4) ? "-" : "1");
    skv__db_done(st);
}

START_TEST(test_lifecycle_updates)
{
    if (_i == 1) {
        const char *skip = skv_pg_start(&g_mpg);
        if (skip) {
            fprintf(stderr, "manager on postgres: SKIP: %s\n", skip);
            return;
        }
        mgr_store = g_mpg.uri;
    }
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    char sid[64], row[128];
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    uint64_t up = skv__db_stats_of(m->store)->updates;
    one_life(m, &ag, &ad, sid, T0);
    up = skv__db_stats_of(m->store)->updates - up;
    expect_life(m, &ad, sid, T0 + 5);
    life_row(m, sid, row, sizeof row);
    char want[64];
    snprintf(want, sizeof want, "%lld|%lld|-|c|-", (long long)T0 + 3,
             (long long)T0 + 3);
    ck_assert_str_eq(row, want);
    skv_manager_free(m);
    out_clear();
    rm_tree();
    mgr_store = NULL;
    if (_i == 1)
        skv_pg_stop(&g_mpg);
    /* registration's agent rows aside: placement, RUNNING, end */
    ck_assert_uint_eq(up, _i == 1 ? 2 + 2 : 3 + 3);
}
END_TEST
