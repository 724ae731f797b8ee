/* Suite sched_policy, tcase "preempt_equiv": victim plans checked on the
 * agents they change (preempt.c, plan_agents_local / fits_local) against
 * the reference way (skv__preempt_reference: each agent's candidates found
 * by a scan of all candidates, each step a whole-group placement trial).
 * Two schedulers get the same seeded operations: a random cluster filled
 * with preemptible and fixed sessions of priorities 0-3 (fractions, whole
 * GPUs, single-node and multi-node gangs, some younger than the minimum
 * runtime), then rounds of priority 5-9 waiters of the same shapes; each
 * pass must choose the same victims for the same waiters (and place the
 * same sessions on the same agents and devices). Victims are requeued or
 * finished, placed sessions start, and the next round goes on.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_PREEMPT_EQUIV_H
#define SKV_TEST_SCHED_PREEMPT_EQUIV_H

#include <stdbool.h>

#include "sched_util.h"

extern bool skv__preempt_reference;

enum { PE_AGENTS = 24, PE_FILL = 160, PE_ROUNDS = 40 };

static uint32_t pe_rnd(uint64_t *x, uint32_t n)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x % n);
}

static const char *const pe_shapes[] = {
    "cuda.shares=0.3", "cuda.shares=0.6,cpu=1", "cuda.device=1",
    "cuda.device=2,cpu=2", "cuda.device=3", "cuda.device=4,mem=8g",
    "cuda.device=8", "cpu=6"};

static skv_sched *pe_build(const char *sel, const char *cfg,
                           skv_sched_preempt_order order)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "priority";
    go.selector = sel;
    go.selector_config = cfg;
    go.preemption = true;
    go.preempt_min_runtime_ms = 50;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    SKV_CK_OK(skv_sched_group_set_preempt_order(s, "default", order, &e), &e);
    static const int gpus[] = {8, 4, 8, 2, 8, 6};
    for (int a = 0; a < PE_AGENTS; a++) {
        char id[16];
        snprintf(id, sizeof(id), "a%02d", a);
        add_agent(s, id, "cpu=32,mem=128g", gpus[a % 6]);
    }
    return s;
}

/* One random session to both schedulers. */
static void pe_submit(skv_sched **s, int n, int32_t prio, bool preemptible,
                      int64_t now, uint64_t *rng)
{
    char id[16];
    snprintf(id, sizeof(id), "s%d", n);
    const char *shape = pe_shapes[pe_rnd(rng, sizeof(pe_shapes) / sizeof(*pe_shapes))];
    sub_opts o = {.prio = prio, .preemptible = preemptible};
    uint32_t g = pe_rnd(rng, 8);
    if (g == 0) {
        o.nk = 2;
    } else if (g == 1) {
        o.nk = 2;
        o.mode = SKV_SCHED_MULTI_NODE;
        o.one_per_agent = true;
    }
    for (int k = 0; k < 2; k++)
        submit(s[k], id, shape, &o, now);
}

/* Placements and preemptions of one pass as text. */
static void pe_digest(const skv_sched_result *r, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_preemptions && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s>%s/%d;",
                                r->preemptions[i].victim_id,
                                r->preemptions[i].for_session_id,
                                (int)r->preemptions[i].cause);
    for (size_t i = 0; i < r->n_placements && len < n; i++) {
        const skv_sched_placement *p = &r->placements[i];
        for (size_t k = 0; k < p->n_kernels && len < n; k++) {
            const skv_sched_kernel_placement *kp = &p->kernels[k];
            len += (size_t)snprintf(buf + len, n - len, "%s@%s", p->session_id,
                                    kp->agent_id);
            for (size_t d = 0; d < kp->n_devices && len < n; d++)
                len += (size_t)snprintf(buf + len, n - len, ":%u.%lld",
                                        kp->devices[d].device,
                                        (long long)kp->devices[d].amount);
            if (len < n)
                len += (size_t)snprintf(buf + len, n - len, ";");
        }
    }
}

/* Pass both (reference first), compare, start what was placed, requeue or
 * finish the victims. Returns the victims chosen. */
static size_t pe_pass(skv_sched **s, int64_t now, uint64_t *rng)
{
    static char d[2][16384];
    skv_sched_result *r[2];
    for (int k = 0; k < 2; k++) {
        skv__preempt_reference = k == 0;
        r[k] = pass(s[k], now);
        pe_digest(r[k], d[k], sizeof(d[k]));
    }
    skv__preempt_reference = false;
    ck_assert_msg(strcmp(d[0], d[1]) == 0, "t=%lld: reference '%s', local '%s'",
                  (long long)now, d[0], d[1]);
    size_t victims = r[0]->n_preemptions;
    bool requeue = pe_rnd(rng, 2);
    for (int k = 0; k < 2; k++) {
        skv_error e = SKV_ERROR_INIT;
        for (size_t i = 0; i < r[k]->n_placements; i++)
            SKV_CK_OK(skv_sched_mark_started(s[k], r[k]->placements[i].session_id,
                                             now, &e), &e);
        for (size_t i = 0; i < r[k]->n_preemptions; i++) {
            const char *v = r[k]->preemptions[i].victim_id;
            SKV_CK_OK(requeue ? skv_sched_requeue(s[k], v, now, &e)
                              : skv_sched_mark_finished(s[k], v, false, now, &e),
                      &e);
        }
        skv_sched_result_free(r[k]);
    }
    return victims;
}

START_TEST(test_preempt_same_victims)
{
    /* frag with random ties plans the reference way in both (its draws) */
    static const char *const sels[] = {"concentrated", "frag", "frag"};
    static const char *const cfgs[] = {NULL, NULL, "ties=random"};
    skv_sched_preempt_order order = _i % 2 ? SKV_SCHED_PREEMPT_ORDER_NEWEST
                                           : SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY;
    skv_sched *s[2] = {pe_build(sels[_i / 2], cfgs[_i / 2], order),
                       pe_build(sels[_i / 2], cfgs[_i / 2], order)};
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)_i << 32);
    int n = 0;
    int64_t now = 0;
    for (int i = 0; i < PE_FILL; i++, now += 2) {
        pe_submit(s, n++, (int32_t)pe_rnd(&rng, 4), pe_rnd(&rng, 4) != 0, now, &rng);
        if (i % 8 == 7)
            pe_pass(s, now, &rng);
    }
    size_t victims = 0;
    for (int i = 0; i < PE_ROUNDS; i++, now += 20) {
        for (int j = 0, m = 1 + (int)pe_rnd(&rng, 3); j < m; j++)
            pe_submit(s, n++, 5 + (int32_t)pe_rnd(&rng, 5), pe_rnd(&rng, 2), now,
                      &rng);
        victims += pe_pass(s, now, &rng);
    }
    ck_assert_uint_gt(victims, 20); /* preemption was exercised */
    for (int k = 0; k < 2; k++)
        skv_sched_free(s[k]);
}
END_TEST

static void add_preempt_equiv_tcase(Suite *su)
{
    TCase *tc = tcase_create("preempt_equiv");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_preempt_same_victims, 0, 6);
    suite_add_tcase(su, tc);
}

#endif
