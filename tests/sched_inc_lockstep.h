/* Suite sched, tcase "incremental": the incremental pass (src/sched/
 * pass_inc.c) against the full walk. Two schedulers built the same way get
 * the same seeded operations (submits of every shape and constraint,
 * passes, finishes, cancels, requeues, agents toggled, a policy set); one
 * passes with full_walk. Every pass must place the same sessions on the
 * same agents and devices, and every pending session must report the same
 * kind of reason.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_INC_LOCKSTEP_H
#define SKV_TEST_SCHED_INC_LOCKSTEP_H

#include "sched_util.h"

enum { LS_MAXS = 4000 };

typedef struct ls_world {
    skv_sched *s[2];           /* [0] full walk, [1] incremental */
    char ids[LS_MAXS][16];
    skv_sched_state st[LS_MAXS];
    int n;
    uint64_t rng;
    long placed, skipped_checks, passes;
} ls_world;

static uint32_t ls_rnd(ls_world *w, uint32_t n)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return (uint32_t)(w->rng % n);
}

static const char *const ls_groups[] = {"fifo1", "fifo0", "lifo2", "prio1",
                                        "drf1", "fair0"};
#define LS_NG 6

static void ls_build(ls_world *w, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    w->rng = seed;
    static const char *seqs[] = {"fifo", "fifo", "lifo", "priority", "drf",
                                 "fairshare"};
    static const uint32_t resv[] = {1, 0, 2, 1, 1, 0};
    for (int k = 0; k < 2; k++) {
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_sched_new(&w->s[k], NULL, &e), &e);
        for (int g = 0; g < LS_NG; g++) {
            skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
            go.sequencer = seqs[g];
            go.max_reservations = resv[g];
            SKV_CK_OK(skv_sched_group_add(w->s[k], ls_groups[g], &go, &e), &e);
            for (int a = 0; a < 4; a++) {
                char id[32];
                snprintf(id, sizeof(id), "%s-a%d", ls_groups[g], a);
                add_agent_g(w->s[k], id, ls_groups[g], "cpu=32,mem=256g", 8,
                            a == 3 ? "H100" : "A100");
            }
        }
    }
}

static void ls_submit(ls_world *w, int64_t now)
{
    static const char *shapes[] = {
        "cuda.device=1,cpu=1", "cuda.device=2,cpu=2", "cuda.device=4",
        "cuda.device=8,cpu=8", "cuda.shares=0.5", "cpu=4,mem=8g",
        "cuda.device=3,mem=16g", "cuda.device=1"};
    if (w->n >= LS_MAXS)
        return;
    char *id = w->ids[w->n];
    snprintf(id, 16, "s%d", w->n);
    uint32_t kind = ls_rnd(w, 20);
    skv_slots *r = sl(kind == 0 ? "cuda.device=8" : shapes[ls_rnd(w, 8)]);
    skv_sched_kernel_spec ks[3];
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    const char *model = "H100", *desig = NULL, *dep = NULL;
    sp.id = id;
    sp.user = ls_rnd(w, 2) ? "u0" : "u1";
    sp.project = "p";
    sp.domain = "d";
    sp.resource_group = ls_groups[ls_rnd(w, LS_NG)];
    sp.priority = (int32_t)ls_rnd(w, 3);
    sp.n_kernels = kind <= 1 ? 2 + ls_rnd(w, 2) : 1; /* gangs */
    sp.cluster_mode = kind == 0 ? SKV_SCHED_MULTI_NODE : SKV_SCHED_SINGLE_NODE;
    sp.one_kernel_per_agent = kind == 0;
    for (size_t i = 0; i < sp.n_kernels; i++)
        ks[i] = (skv_sched_kernel_spec){i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN, r};
    sp.kernels = ks;
    sp.estimated_duration_ms = ls_rnd(w, 4) ? 10 + ls_rnd(w, 3000) : 0;
    if (kind == 2) {
        sp.gpu_models = &model;
        sp.n_gpu_models = 1;
    } else if (kind == 3) {
        static char d[32];
        snprintf(d, sizeof(d), "%s-a%u", sp.resource_group, ls_rnd(w, 4));
        desig = d;
        sp.designated_agents = &desig;
        sp.n_designated = 1;
    } else if (kind == 4 && w->n > 0) {
        dep = w->ids[ls_rnd(w, (uint32_t)w->n)];
        sp.depends_on = &dep;
        sp.n_depends = 1;
    } else if (kind == 5) {
        sp.not_before_ms = now + ls_rnd(w, 2000);
    }
    for (int k = 0; k < 2; k++) {
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_sched_submit(w->s[k], &sp, now, &e), &e);
    }
    skv_slots_free(r);
    w->st[w->n++] = SKV_SCHED_PENDING;
}

static bool ls_resource_code(skv_sched_reason_code c)
{
    return c == SKV_SCHED_REASON_RESOURCES || c == SKV_SCHED_REASON_RESERVED;
}

/* The full walk computes a reason at its visit (or copies it from a
 * same-shaped session); a skipped session's is computed when asked, so a
 * "reserved" may since read "resources" and the shortfalls may differ. */
static void ls_reasons(ls_world *w)
{
    for (int i = 0; i < w->n; i++) {
        if (w->st[i] != SKV_SCHED_PENDING)
            continue;
        skv_sched_reason r0 = reason_of(w->s[0], w->ids[i]);
        skv_sched_reason r1 = reason_of(w->s[1], w->ids[i]);
        ck_assert_msg(r0.code == r1.code ||
                      (ls_resource_code(r0.code) && ls_resource_code(r1.code)),
                      "%s: reason %s (full walk) vs %s (incremental)", w->ids[i],
                      skv_sched_reason_name(r0.code), skv_sched_reason_name(r1.code));
        ck_assert_int_eq(r0.evaluated_ms, r1.evaluated_ms);
        if (ls_resource_code(r0.code) || r0.code == SKV_SCHED_REASON_NO_AGENT)
            ck_assert_uint_eq(r0.agents_candidate, r1.agents_candidate);
        if (r0.code != r1.code)
            w->skipped_checks++;
    }
}

static int ls_find(const char *id)
{
    return atoi(id + 1);
}

static void ls_pass(ls_world *w, int64_t now, size_t max_placements)
{
    skv_sched_result *r[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
        po.full_walk = k == 0;
        po.max_placements = max_placements;
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_sched_pass(&r[k], w->s[k], now, &po, &e), &e);
        CHECK(w->s[k]);
    }
    ck_assert_uint_eq(r[0]->n_placements, r[1]->n_placements);
    for (size_t i = 0; i < r[0]->n_placements; i++) {
        const skv_sched_placement *a = &r[0]->placements[i], *b = &r[1]->placements[i];
        ck_assert_str_eq(a->session_id, b->session_id);
        ck_assert_uint_eq(a->n_kernels, b->n_kernels);
        for (size_t k = 0; k < a->n_kernels; k++) {
            ck_assert_str_eq(a->kernels[k].agent_id, b->kernels[k].agent_id);
            ck_assert_uint_eq(a->kernels[k].n_devices, b->kernels[k].n_devices);
            for (size_t d = 0; d < a->kernels[k].n_devices; d++) {
                ck_assert_uint_eq(a->kernels[k].devices[d].device,
                                  b->kernels[k].devices[d].device);
                ck_assert_int_eq(a->kernels[k].devices[d].amount,
                                 b->kernels[k].devices[d].amount);
            }
        }
        int si = ls_find(a->session_id);
        for (int k = 0; k < 2; k++) {
            skv_error e = SKV_ERROR_INIT;
            SKV_CK_OK(skv_sched_mark_started(w->s[k], a->session_id, now, &e), &e);
        }
        w->st[si] = SKV_SCHED_RUNNING;
        w->placed++;
    }
    skv_sched_result_free(r[0]);
    skv_sched_result_free(r[1]);
    if (++w->passes % 3 == 0) /* every reason, every third pass */
        ls_reasons(w);
}

/* A random session in state st, or -1. */
static int ls_pick(ls_world *w, skv_sched_state st)
{
    if (w->n == 0)
        return -1;
    int start = (int)ls_rnd(w, (uint32_t)w->n);
    for (int i = 0; i < w->n; i++) {
        int j = (start + i) % w->n;
        if (w->st[j] == st)
            return j;
    }
    return -1;
}

static void ls_op(ls_world *w, int64_t now)
{
    uint32_t op = ls_rnd(w, 100);
    skv_error e = SKV_ERROR_INIT;
    int j;
    if (op < 45) {
        ls_submit(w, now);
    } else if (op < 75) {
        ls_pass(w, now, ls_rnd(w, 10) == 0 ? 2 : 0);
    } else if (op < 90 && (j = ls_pick(w, SKV_SCHED_RUNNING)) >= 0) {
        for (int k = 0; k < 2; k++) {
            SKV_CK_OK(skv_sched_mark_finished(w->s[k], w->ids[j], false, now, &e), &e);
            SKV_CK_OK(skv_sched_session_remove(w->s[k], w->ids[j], &e), &e);
        }
        w->st[j] = SKV_SCHED_FINISHED;
    } else if (op < 93 && (j = ls_pick(w, SKV_SCHED_PENDING)) >= 0) {
        for (int k = 0; k < 2; k++)
            SKV_CK_OK(skv_sched_cancel(w->s[k], w->ids[j], now, &e), &e);
        w->st[j] = SKV_SCHED_CANCELLED;
    } else if (op < 96 && (j = ls_pick(w, SKV_SCHED_RUNNING)) >= 0) {
        for (int k = 0; k < 2; k++)
            SKV_CK_OK(skv_sched_requeue(w->s[k], w->ids[j], now, &e), &e);
        w->st[j] = SKV_SCHED_PENDING;
    } else if (op < 98) {
        char id[32];
        snprintf(id, sizeof(id), "%s-a%u", ls_groups[ls_rnd(w, LS_NG)], ls_rnd(w, 4));
        bool on = ls_rnd(w, 2);
        for (int k = 0; k < 2; k++)
            SKV_CK_OK(skv_sched_agent_set_schedulable(w->s[k], id, on, &e), &e);
    }
}

static void ls_policy(ls_world *w)
{
    skv_slots *lim = sl("cuda.device=12");
    skv_sched_policy p = SKV_SCHED_POLICY_INIT;
    p.limit = lim;
    for (int k = 0; k < 2; k++) {
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_sched_policy_set(w->s[k], SKV_SCHED_SCOPE_USER, "u1", &p, &e), &e);
    }
    skv_slots_free(lim);
}

START_TEST(test_inc_lockstep)
{
    static ls_world w;
    ls_build(&w, 0x9E3779B97F4A7C15ull + (uint64_t)_i * 7919);
    int64_t now = 0;
    for (int step = 0; step < 4000; step++) {
        if (step == 2000)
            ls_policy(&w);
        ls_op(&w, now);
        now += ls_rnd(&w, 40);
    }
    ls_pass(&w, now, 0);
    ls_reasons(&w);
    ck_assert_int_gt(w.placed, 400);
    skv_sched_free(w.s[0]);
    skv_sched_free(w.s[1]);
}
END_TEST

/* A skipped session's reason, asked for, says what is short right now. */
START_TEST(test_inc_deferred_reason)
{
    skv_sched *s = mk_sched("fifo", "concentrated");
    add_agent(s, "a0", "cpu=8,mem=8g", 4);
    sub_opts o = {0};
    o.est = 1000;
    submit(s, "big", "cuda.device=4", &o, 0);      /* runs */
    skv_sched_result_free(pass(s, 0));
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_mark_started(s, "big", 0, &e), &e);
    submit(s, "head", "cuda.device=4", &o, 1);     /* reserves a0 */
    submit(s, "w1", "cuda.device=2", &o, 2);       /* skipped: nothing free */
    submit(s, "w2", "cuda.device=2", &o, 3);
    skv_sched_result_free(pass(s, 10));
    skv_sched_reason r = reason_of(s, "head");
    ck_assert_int_eq(r.code, SKV_SCHED_REASON_HAS_RESERVATION);
    r = reason_of(s, "w2");
    ck_assert_int_eq(r.code, SKV_SCHED_REASON_RESOURCES);
    ck_assert_int_eq(r.evaluated_ms, 10);
    ck_assert_uint_eq(r.agents_candidate, 1);
    ck_assert_uint_eq(r.n_slots, 1);
    ck_assert_str_eq(r.slots[0].slot, "cuda.device");
    ck_assert_int_eq(r.slots[0].min_shortfall, 2 * SKV_QTY_SCALE);
    char *txt = NULL;
    SKV_CK_OK(skv_sched_reason_format(&txt, &r, &e), &e);
    ck_assert_ptr_nonnull(strstr(txt, "cuda.device short on 1 of 1"));
    skv_free(txt);
    /* a later pass that could place it does */
    SKV_CK_OK(skv_sched_mark_finished(s, "big", false, 1000, &e), &e);
    skv_sched_result *res = pass(s, 1000);
    ck_assert_uint_eq(res->n_placements, 1);
    ck_assert_str_eq(res->placements[0].session_id, "head");
    skv_sched_result_free(res);
    skv_sched_free(s);
}
END_TEST

static void add_incremental_tcase(Suite *su)
{
    TCase *tc = tcase_create("incremental");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_inc_lockstep, 0, 3);
    tcase_add_test(tc, test_inc_deferred_reason);
    tcase_add_test(tc, test_inc_scan_resumes);
    suite_add_tcase(su, tc);
}

#endif
