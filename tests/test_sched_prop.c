/* Randomized property test of the scheduler: 100,000 seeded operations
 * (submit, pass, start, finish, cancel, requeue, remove, agents coming,
 * going, changing and getting lost, policies changing) with the accounting
 * check after every one. SKV_TEST_QUICK=1 runs 20,000.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "sched_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

enum { MAXS = 400, MAXA = 16 };
static char sids[MAXS][16];
static int nsids;
static char aids[MAXA][16];
static int naids, next_agent, next_sess;
static long n_placed, n_preempted, n_gangs;

static void op_submit(skv_sched *s, int64_t now)
{
    if (nsids >= MAXS)
        return;
    static const char *shapes[] = {"cpu=1", "cpu=2,mem=2g", "cuda.device=1,cpu=1",
                                   "cuda.device=2", "cuda.shares=0.3",
                                   "cuda.shares=0.7,cpu=1", "cuda.device=4,mem=8g",
                                   "cpu=3,cuda.shares=1.5"};
    static const char *users[] = {"u0", "u1", "u2", "u3"};
    char id[16];
    snprintf(id, sizeof(id), "s%d", next_sess++);
    sub_opts o = {0};
    o.user = users[rnd(4)];
    o.project = rnd(2) ? "p0" : "p1";
    o.group = rnd(5) ? "default" : "other";
    o.prio = (int32_t)rnd(4);
    o.nk = 1 + (rnd(4) == 0 ? (int)rnd(3) : 0);
    o.mode = rnd(2) ? SKV_SCHED_MULTI_NODE : SKV_SCHED_SINGLE_NODE;
    o.one_per_agent = o.mode == SKV_SCHED_MULTI_NODE && rnd(2);
    o.preemptible = rnd(2);
    o.est = rnd(2) ? 50 + rnd(500) : 0;
    skv_error e = SKV_ERROR_INIT;
    int rc = submit_x(s, id, shapes[rnd(8)], &o, now, &e);
    ck_assert_msg(rc == 0 || rc == SKV_ENOSPC, "submit: %s", e.message);
    if (rc == 0)
        memcpy(sids[nsids++], id, sizeof(id));
}

static void op_pass(skv_sched *s, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_result *r = NULL;
    SKV_CK_OK(skv_sched_pass(&r, s, now, NULL, &e), &e);
    for (size_t i = 0; i < r->n_placements; i++) {
        const skv_sched_placement *p = &r->placements[i];
        ck_assert_uint_ge(p->n_kernels, 1);
        n_placed++;
        n_gangs += p->n_kernels > 1;
        if (rnd(2))
            SKV_CK_OK(skv_sched_mark_started(s, p->session_id, now, &e), &e);
    }
    for (size_t i = 0; i < r->n_preemptions; i++) {
        skv_sched_state st = state_of(s, r->preemptions[i].victim_id);
        ck_assert(st == SKV_SCHED_RUNNING);
        n_preempted++;
        if (rnd(3))
            SKV_CK_OK(skv_sched_requeue(s, r->preemptions[i].victim_id, now, &e), &e);
    }
    skv_sched_result_free(r);
}

static void op_session(skv_sched *s, int kind, int64_t now)
{
    if (!nsids)
        return;
    int i = (int)rnd((uint32_t)nsids);
    const char *id = sids[i];
    skv_sched_state st = state_of(s, id);
    skv_error e = SKV_ERROR_INIT;
    bool holds = st == SKV_SCHED_SCHEDULED || st == SKV_SCHED_RUNNING;
    switch (kind) {
    case 0:
        if (st == SKV_SCHED_SCHEDULED)
            SKV_CK_OK(skv_sched_mark_started(s, id, now, &e), &e);
        break;
    case 1:
        if (holds)
            SKV_CK_OK(skv_sched_mark_finished(s, id, rnd(4) == 0, now, &e), &e);
        break;
    case 2:
        if (st <= SKV_SCHED_RUNNING)
            SKV_CK_OK(skv_sched_cancel(s, id, now, &e), &e);
        break;
    case 3:
        if (holds)
            SKV_CK_OK(skv_sched_requeue(s, id, now, &e), &e);
        break;
    default:
        if (st > SKV_SCHED_RUNNING) {
            SKV_CK_OK(skv_sched_session_remove(s, id, &e), &e);
            memcpy(sids[i], sids[--nsids], sizeof(sids[i]));
        }
        break;
    }
}

static void op_agent(skv_sched *s, int kind, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    if (kind == 0 || naids == 0) {
        if (naids >= MAXA)
            return;
        snprintf(aids[naids], sizeof(aids[0]), "a%d", next_agent++);
        add_agent_g(s, aids[naids], rnd(4) ? "default" : "other",
                    rnd(2) ? "cpu=8,mem=16g" : "cpu=16,mem=32g", (int)rnd(5),
                    rnd(2) ? "A100" : "V100");
        naids++;
        return;
    }
    int i = (int)rnd((uint32_t)naids);
    int rc;
    switch (kind) {
    case 1:
        rc = skv_sched_agent_remove(s, aids[i], &e);
        ck_assert(rc == 0 || rc == SKV_EBUSY);
        if (rc == 0)
            memcpy(aids[i], aids[--naids], sizeof(aids[i]));
        break;
    case 2:
        SKV_CK_OK(skv_sched_agent_lost(s, NULL, aids[i], now, &e), &e);
        memcpy(aids[i], aids[--naids], sizeof(aids[i]));
        break;
    case 3:
        SKV_CK_OK(skv_sched_agent_set_schedulable(s, aids[i], rnd(3) != 0, &e), &e);
        break;
    default: {
        /* update pooled capacity, keeping the devices (and group) */
        skv_slots *cap = NULL;
        SKV_CK_OK(skv_sched_agent_usage(NULL, &cap, s, aids[i], &e), &e);
        skv_sched_device_spec dev[64];
        int ngpu = (int)(skv_slots_get(cap, "cuda.device") / 1000);
        for (int d = 0; d < ngpu; d++)
            dev[d] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 0};
        skv_slots *pooled = sl(rnd(2) ? "cpu=4,mem=8g" : "cpu=32,mem=64g");
        skv_sched_result *pl = NULL;
        (void)pl;
        skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
        a.id = aids[i];
        a.resource_group = "default";
        a.capacity = pooled;
        a.n_devices = (size_t)ngpu;
        a.devices = dev;
        rc = skv_sched_agent_update(s, &a, &e);
        if (rc == SKV_EBUSY || rc == SKV_ENOENT) {
            a.resource_group = "other";
            rc = skv_sched_agent_update(s, &a, &e);
        }
        ck_assert_msg(rc == 0 || rc == SKV_EBUSY, "update: %s", e.message);
        skv_slots_free(pooled);
        skv_slots_free(cap);
        break;
    }
    }
}

static void op_policy(skv_sched *s)
{
    static const char *limits[] = {NULL, "cpu=6", "cuda.device=3,cpu=20", "mem=8g"};
    skv_error e = SKV_ERROR_INIT;
    skv_sched_policy p = SKV_SCHED_POLICY_INIT;
    skv_slots *l = NULL, *g = NULL;
    const char *lt = limits[rnd(4)];
    if (lt)
        l = sl(lt);
    p.limit = l;
    p.max_concurrent = rnd(3) ? 0 : 1 + rnd(5);
    p.max_pending = rnd(3) ? 0 : 5 + rnd(20);
    if (rnd(3) == 0)
        g = sl("cuda.device=4,cpu=8");
    p.guaranteed = g;
    char name[8];
    int sc = (int)rnd(3);
    snprintf(name, sizeof(name), "%s%u", sc == 2 ? "u" : sc == 1 ? "p" : "d", rnd(4));
    SKV_CK_OK(skv_sched_policy_set(s, (skv_sched_scope)sc, name, rnd(6) ? &p : NULL, &e), &e);
    skv_slots_free(l);
    skv_slots_free(g);
}

START_TEST(test_random_ops)
{
    const char *quick = getenv("SKV_TEST_QUICK");
    long nops = quick && *quick && strcmp(quick, "0") ? 20000 : 100000;
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    static const char *seqs[] = {"drf", "priority"};
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = seqs[0];
    go.preemption = true;
    go.aging_ms = 1000;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    go.sequencer = seqs[1];
    go.selector = "roundrobin";
    go.max_reservations = 2;
    SKV_CK_OK(skv_sched_group_add(s, "other", &go, &e), &e);
    int64_t now = 0;
    for (long op = 0; op < nops; op++) {
        now += rnd(20);
        uint32_t r = rnd(100);
        if (r < 30)
            op_submit(s, now);
        else if (r < 40)
            op_pass(s, now);
        else if (r < 75)
            op_session(s, (int)rnd(5), now);
        else if (r < 97)
            op_agent(s, (int)rnd(5), now);
        else
            op_policy(s);
        skv_error ce = SKV_ERROR_INIT;
        int crc = skv_sched_check(s, &ce);
        ck_assert_msg(crc == 0, "op %ld: %s", op, ce.message);
    }
    skv_sched_free(s);
    /* the run exercised what it claims to */
    ck_assert_msg(n_placed > nops / 100 && n_gangs > nops / 2000 && n_preempted > 0,
                  "placed %ld gangs %ld preempted %ld", n_placed, n_gangs, n_preempted);
    if (getenv("SKV_TEST_VERBOSE"))
        fprintf(stderr, "sched_prop: %ld ops, %ld placed (%ld gangs), %ld preempted\n",
                nops, n_placed, n_gangs, n_preempted);
}
END_TEST

Suite *skv_test_suite_sched_prop(void);
Suite *skv_test_suite_sched_prop(void)
{
    Suite *su = suite_create("sched_prop");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_random_ops);
    suite_add_tcase(su, tc);
    return su;
}
