/* Suite manager, tcase "batch_conns": the connections whose events a tick's
 * batch holds (mgr_units.c) are each listed once, found through the
 * connection index and a per-connection stamp of the batch instead of a
 * scan of the list. Seeded rounds over hundreds of connections (some
 * closed and new ones opened between rounds, so the array and its index
 * move entries) note events of random connections, many twice; the list
 * must hold exactly the distinct connections of the round, a connection
 * noted in an earlier (committed) batch must be listed again, and when
 * the last batch's commit fails exactly those connections are closed.
 * A stamp put on the wrong entry, or one that outlives its batch, leaves
 * a connection out or lists it twice.
 * Included by test_manager.c after its helpers.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_MANAGER_UNITS_CONNS_H
#define SKV_TEST_MANAGER_UNITS_CONNS_H

enum { BC_CONNS = 300, BC_ROUNDS = 6, BC_NOTES = 400 };

static uint64_t bc_rnd(uint64_t *x, uint64_t n)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x % n;
}

/* One agent event joining the open batch as a unit, as mgr_dispatch.c
 * runs it. */
static void bc_event(skv_manager *m, uint64_t conn, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_units_join(m, conn, now);
    SKV_CK_OK(skv__mgr_unit_begin(m, &e), &e);
    SKV_CK_OK(skv__mgr_unit_commit(m, &e), &e);
    skv__mgr_units_leave(m);
}

static bool bc_listed(const skv_manager *m, uint64_t conn)
{
    size_t n = 0;
    for (size_t i = 0; i < m->batch.n_conns; i++)
        n += m->batch.conns[i] == conn;
    ck_assert_uint_le(n, 1);                    /* never twice */
    return n == 1;
}

/* Close a few open connections and open as many new ones. */
static void bc_churn(skv_manager *m, uint64_t *ids, uint64_t *rng,
                     int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    for (int k = 0; k < BC_CONNS / 10; k++) {
        size_t i = bc_rnd(rng, BC_CONNS);
        skv_manager_conn_close(m, ids[i], now);
        do
            ids[i] = 0x10000 + bc_rnd(rng, 1ull << 40);
        while (skv__mgr_conn_find(m, ids[i]));
        SKV_CK_OK(skv_manager_conn_open(m, ids[i], "agent", &e), &e);
    }
}

START_TEST(test_batch_conns)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    skv_error e = SKV_ERROR_INIT;
    static uint64_t ids[BC_CONNS];
    static bool want[BC_CONNS];
    uint64_t rng = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
    for (size_t i = 0; i < BC_CONNS; i++) {
        ids[i] = 0x10000 + i * 7919;
        SKV_CK_OK(skv_manager_conn_open(m, ids[i], "agent", &e), &e);
    }
    int64_t now = T0;
    for (int round = 0; round < BC_ROUNDS; round++, now += 10) {
        bc_churn(m, ids, &rng, now);
        memset(want, 0, sizeof want);
        size_t distinct = 0;
        for (int k = 0; k < BC_NOTES; k++) {
            size_t i = bc_rnd(&rng, BC_CONNS / 2) * (round % 2 ? 2 : 1);
            distinct += !want[i];
            want[i] = true;
            bc_event(m, ids[i], now);
        }
        bc_event(m, 0, now);                    /* the pass's: no agent */
        ck_assert_uint_eq(m->batch.n_conns, distinct);
        for (size_t i = 0; i < BC_CONNS; i++)
            ck_assert_msg(bc_listed(m, ids[i]) == want[i], "round %d: "
                          "connection %llu %s", round,
                          (unsigned long long)ids[i],
                          want[i] ? "left out" : "listed");
        if (round < BC_ROUNDS - 1) {
            SKV_CK_OK(skv_manager_flush(m, now, &e), &e);
            continue;
        }
        /* The last batch's commit fails (a deferred foreign key). */
        SKV_CK_OK(skv__db_exec(m->store, "PRAGMA defer_foreign_keys=ON", &e),
                  &e);
        SKV_CK_OK(skv__db_exec(m->store, "INSERT INTO session_history("
                               "session_id,status,ts_ms) VALUES('nope','X',0)",
                               &e), &e);
        ck_assert_int_ne(skv_manager_flush(m, now, &e), 0);
    }
    for (size_t i = 0; i < BC_CONNS; i++)
        ck_assert_msg(skv__mgr_conn_find(m, ids[i])->dead == want[i],
                      "connection %llu %s", (unsigned long long)ids[i],
                      want[i] ? "kept after the failed batch" : "closed");
    ck_assert(!skv__mgr_conn_find(m, AGENT)->dead);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

static void add_batch_conns_tcase(Suite *su)
{
    TCase *tc = tcase_create("batch_conns");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_batch_conns, 0, 2);
    suite_add_tcase(su, tc);
}

#endif
