/* Suite manager, tcase "index": the hash indexes over the manager's agents
 * (by name) and connections (by id) (src/manager/mgr_index.c) answer
 * exactly what a scan of the arrays answers, through seeded random
 * registrations, re-registrations on a new connection, heartbeats,
 * disconnects, agents lost to the heartbeat timeout, cordon / drain /
 * uncordon, and clients connecting and leaving in hundreds (so the
 * connection index grows and deletes out of long probe runs). The ticks'
 * heartbeat and drain deadlines (mgr_tick.c, mgr_ops.c) are checked against
 * a scan at each step.
 * Included by test_manager.c after its helpers.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_MANAGER_INDEX_H
#define SKV_TEST_MANAGER_INDEX_H

enum { IX_AGENTS = 40, IX_CLIENTS = 300, IX_STEPS = 1500 };

static uint64_t ix_rnd(uint64_t *x, uint64_t n)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x % n;
}

/* Every name and id, present or not, looked up both ways. */
static void ix_agree(skv_manager *m, const uint64_t *ids, size_t nids)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_ix_verify(m, &e), &e);
    for (int i = 0; i <= IX_AGENTS + 1; i++) {
        char id[16];
        snprintf(id, sizeof id, "a%d", i);
        skv__mgr_agent *scan = NULL;
        for (size_t j = 0; j < m->n_agents && !scan; j++)
            scan = strcmp(m->agents[j].id, id) ? NULL : &m->agents[j];
        ck_assert_ptr_eq(skv__mgr_agent_find(m, id), scan);
    }
    for (size_t i = 0; i < nids; i++) {
        skv__mgr_conn *scan = NULL;
        for (size_t j = 0; j < m->n_conns && !scan; j++)
            scan = m->conns[j].id == ids[i] ? &m->conns[j] : NULL;
        ck_assert_ptr_eq(skv__mgr_conn_find(m, ids[i]), scan);
    }
}

/* The same for drains (mgr_ops.c): ops_due_ms never after the grace
 * deadline of a draining agent not drained yet, none of them past it
 * after a tick, and no drained mark left on an agent no longer draining
 * (it would keep a later drain from running). */
static void ix_drain_agree(skv_manager *m, int64_t now, bool ticked)
{
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if (a->ops != SKV__OPS_DRAINING) {
            ck_assert_msg(!a->drain_done, "agent %s not draining, marked "
                          "drained", a->id);
            continue;
        }
        if (a->drain_done)
            continue;
        ck_assert_int_le(m->ops_due_ms, a->drain_deadline_ms);
        ck_assert_msg(!ticked || now < a->drain_deadline_ms, "agent %s not "
                      "drained at %lld, grace over at %lld", a->id,
                      (long long)now, (long long)a->drain_deadline_ms);
    }
}

/* The ticks' heartbeat deadline (mgr_tick.c) against a scan: never after
 * the earliest deadline of an agent not lost (else a silent agent would
 * be lost late), next_tick_ms never later than that deadline, and after
 * a tick no agent not lost is past its deadline. */
static void ix_hb_agree(skv_manager *m, int64_t now, bool ticked)
{
    int64_t due = INT64_MAX;
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        int64_t d = a->last_hb_ms + (int64_t)m->hb_timeout_ms + 1;
        if (a->state == SKV__AGENT_LOST)
            continue;
        ck_assert_msg(!ticked || now < d, "agent %s silent since %lld, not "
                      "lost at %lld", a->id, (long long)a->last_hb_ms,
                      (long long)now);
        if (d < due)
            due = d;
    }
    ck_assert_int_le(m->hb_due_ms, due);
    if (due != INT64_MAX)
        ck_assert_int_le(skv_manager_next_tick_ms(m, now),
                         due > now ? due - now : 0);
    ix_drain_agree(m, now, ticked);
}

static void ix_register(skv_manager *m, uint64_t conn, int agent, int64_t now)
{
    char rel[64], id[16];
    cred c;
    snprintf(id, sizeof id, "a%d", agent);
    snprintf(rel, sizeof rel, "agents/%s.key", id);
    read_key(&c, rel);
    skv_proto_device dev[2];
    size_t nd = make_devs(dev, "cpu=4", "mem=8g", 0);
    skv_proto_agent_register r = {0};
    r.agent_id = id;
    r.address = "127.0.0.1:6001";
    r.devices = dev;
    r.n_devices = nd;
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_AGENT_REGISTER, &r, &c, now,
                          NULL), 0);
    free_devs(dev, nd);
    ck_assert(take(conn, SKV_PROTO_AGENT_REGISTER_REPLY, NULL, NULL));
}

static void ix_admin(skv_manager *m, const cred *ad, int agent,
                     const char *action, int64_t now)
{
    char id[16];
    snprintf(id, sizeof id, "a%d", agent);
    skv_proto_admin_agent q = {id, (char *)action};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_AGENT, &q, ad, now, NULL), 0);
    out_clear();
}

START_TEST(test_index_agrees)
{
    setup_dir();
    static char boot[IX_AGENTS * 5];
    size_t len = 0;
    for (int i = 1; i <= IX_AGENTS; i++)
        len += (size_t)snprintf(boot + len, sizeof boot - len, "%sa%d",
                                i > 1 ? "," : "", i);
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    o.bootstrap_agents = boot;
    o.heartbeat_timeout_ms = 1000;
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, T0, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "test-admin", &e), &e);
    cred ad;
    read_key(&ad, "admin.key");
    /* every connection id ever used, open or not (agents' and clients') */
    static uint64_t ids[IX_STEPS + IX_AGENTS + 1];
    size_t nids = 0;
    uint64_t aconn[IX_AGENTS + 1] = {0};
    uint64_t rng = 0x853c49e6748fea9bull + (uint64_t)_i;
    int64_t now = T0;
    uint64_t lost = 0;
    ids[nids++] = ADMIN;
    for (int step = 0; step < IX_STEPS; step++, now += 10) {
        int a = 1 + (int)ix_rnd(&rng, IX_AGENTS);
        char id[16];
        snprintf(id, sizeof id, "a%d", a);
        bool ticked = false;
        switch (ix_rnd(&rng, 8)) {
        case 0: case 1: { /* (re-)register on a fresh connection */
            uint64_t c = 0x10000 + ix_rnd(&rng, 1ull << 40);
            if (skv__mgr_conn_find(m, c))
                break;
            SKV_CK_OK(skv_manager_conn_open(m, c, id, &e), &e);
            ids[nids++] = c;
            ix_register(m, c, a, now);
            aconn[a] = c;
            break;
        }
        case 2:           /* disconnect */
            if (aconn[a])
                skv_manager_conn_close(m, aconn[a], now);
            aconn[a] = 0;
            break;
        case 3: {         /* heartbeat (refused once lost: fine) */
            if (!aconn[a] || !skv__mgr_conn_find(m, aconn[a]))
                break;
            char rel[64];
            cred c;
            snprintf(rel, sizeof rel, "agents/%s.key", id);
            read_key(&c, rel);
            skv_proto_agent_heartbeat hb = {0};
            hb.agent_id = id;
            ck_assert_int_eq(feed(m, aconn[a], SKV_PROTO_AGENT_HEARTBEAT, &hb,
                                  &c, now, NULL), 0);
            break;
        }
        case 4:           /* cordon, drain, uncordon */
            ix_admin(m, &ad, a, ix_rnd(&rng, 3) == 0 ? "uncordon"
                                : ix_rnd(&rng, 2) ? "drain" : "cordon", now);
            break;
        case 5: {         /* a client comes or a random open one leaves */
            if (m->n_conns < IX_CLIENTS && ix_rnd(&rng, 2)) {
                uint64_t c = 0x10000 + ix_rnd(&rng, 1ull << 40);
                if (!skv__mgr_conn_find(m, c)) {
                    SKV_CK_OK(skv_manager_conn_open(m, c, "client", &e), &e);
                    ids[nids++] = c;
                }
            } else if (m->n_conns > 1) {
                uint64_t c = m->conns[ix_rnd(&rng, m->n_conns)].id;
                if (c != ADMIN)
                    skv_manager_conn_close(m, c, now);
            }
            break;
        }
        case 6: {         /* time passes: silent agents are lost */
            now += (int64_t)ix_rnd(&rng, 1500);
            tick(m, now);
            ticked = true;
            skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
            SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
            lost += st.agents_lost;
            break;
        }
        default:
            tick(m, now);
            ticked = true;
            break;
        }
        out_clear();
        ix_agree(m, ids, nids);
        ix_hb_agree(m, now, ticked);
    }
    ck_assert_uint_gt(m->n_agents, IX_AGENTS / 2);  /* most registered */
    ck_assert_uint_gt(lost, 0);                     /* and some were lost */
    skv_manager_free(m);
    rm_tree();
}
END_TEST

static void add_index_tcase(Suite *su)
{
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_index_agrees, 0, 2);
    suite_add_tcase(su, tc);
}

#endif
