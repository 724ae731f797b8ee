/* Scheduler policies: quotas, DRF, fair-share, hierarchical queues
 * (borrowing and reclaim), preemption, head-of-line blocking, gang
 * atomicity under failure injection.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "sched_util.h"
#include "sched_preempt_equiv.h"

static void set_policy(skv_sched *s, skv_sched_scope sc, const char *name,
                       const char *limit, uint32_t maxc, uint32_t maxp,
                       const char *guar, const char *borrow)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_policy p = SKV_SCHED_POLICY_INIT;
    skv_slots *l = limit ? sl(limit) : NULL, *g = guar ? sl(guar) : NULL,
              *b = borrow ? sl(borrow) : NULL;
    p.limit = l;
    p.max_concurrent = maxc;
    p.max_pending = maxp;
    p.guaranteed = g;
    p.borrow_limit = b;
    SKV_CK_OK(skv_sched_policy_set(s, sc, name, &p, &e), &e);
    skv_slots_free(l);
    skv_slots_free(g);
    skv_slots_free(b);
}

START_TEST(test_quota_never_exceeded)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a0", "cpu=64,mem=64g", 8);
    set_policy(s, SKV_SCHED_SCOPE_USER, "alice", "cpu=5,cuda.device=3", 0, 0, NULL, NULL);
    set_policy(s, SKV_SCHED_SCOPE_PROJECT, "pb", NULL, 2, 3, NULL, NULL);
    for (int i = 0; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof(id), "al%d", i);
        submit(s, id, "cpu=2,cuda.device=1", &(sub_opts){.user = "alice"}, i);
    }
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof(id), "pb%d", i);
        submit(s, id, "cpu=1", &(sub_opts){.user = "bob", .project = "pb"}, i);
    }
    /* max_pending reached: refused at submit, nothing kept */
    ck_assert_int_eq(submit_x(s, "pb3", "cpu=1", &(sub_opts){.user = "bob", .project = "pb"},
                              5, &e), SKV_ENOSPC);
    ck_assert_ptr_nonnull(strstr(e.message, "max_pending"));
    ck_assert_int_eq(skv_sched_session_state(&(skv_sched_state){0}, s, "pb3", &e), SKV_ENOENT);
    for (int round = 0; round < 5; round++) {
        skv_sched_result *r = pass(s, 100 + round);
        skv_sched_result_free(r);
        skv_slots *u = NULL;
        SKV_CK_OK(skv_sched_owner_usage(&u, NULL, NULL, s, SKV_SCHED_SCOPE_USER,
                                        "alice", &e), &e);
        ck_assert_int_le(skv_slots_get(u, "cpu"), 5000);
        ck_assert_int_le(skv_slots_get(u, "cuda.device"), 3000);
        skv_slots_free(u);
        uint32_t act;
        SKV_CK_OK(skv_sched_owner_usage(NULL, &act, NULL, s, SKV_SCHED_SCOPE_PROJECT,
                                        "pb", &e), &e);
        ck_assert_uint_le(act, 2);
    }
    /* alice: 2 sessions (cpu 4; a third would make 6 > 5) */
    skv_slots *u = NULL;
    SKV_CK_OK(skv_sched_owner_usage(&u, NULL, NULL, s, SKV_SCHED_SCOPE_USER, "alice", &e), &e);
    ck_assert_int_eq(skv_slots_get(u, "cpu"), 4000);
    skv_slots_free(u);
    skv_sched_reason rs = reason_of(s, "al2");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_QUOTA);
    ck_assert_int_eq(rs.scope, SKV_SCHED_SCOPE_USER);
    ck_assert_str_eq(rs.detail, "alice");
    ck_assert_str_eq(rs.slot, "cpu");
    ck_assert_int_eq(rs.shortfall, 1000);
    char *txt;
    SKV_CK_OK(skv_sched_reason_format(&txt, &rs, &e), &e);
    ck_assert_ptr_nonnull(strstr(txt, "user 'alice' limit on cpu exceeded by 1"));
    skv_free(txt);
    rs = reason_of(s, "pb2");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_CONCURRENCY);
    ck_assert_int_eq(rs.scope, SKV_SCHED_SCOPE_PROJECT);
    /* lifting the limit lets more through */
    SKV_CK_OK(skv_sched_policy_set(s, SKV_SCHED_SCOPE_USER, "alice", NULL, &e), &e);
    skv_sched_result *r = pass(s, 200);
    ck_assert_uint_ge(r->n_placements, 5);
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_drf_equal_shares)
{
    /* the DRF paper's example: 9 CPUs, 18 GB; A tasks <1 CPU, 4 GB>,
     * B tasks <3 CPU, 1 GB> -> A 3 tasks, B 2 tasks, both at 2/3 */
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched("drf", NULL);
    add_agent(s, "a0", "cpu=9,mem=18g", 0);
    for (int i = 0; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof(id), "A%02d", i);
        submit(s, id, "cpu=1,mem=4g", &(sub_opts){.user = "A"}, i);
    }
    for (int i = 0; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof(id), "B%02d", i);
        submit(s, id, "cpu=3,mem=1g", &(sub_opts){.user = "B"}, i);
    }
    skv_sched_result *r = pass(s, 50);
    int na = 0, nb = 0;
    for (size_t i = 0; i < r->n_placements; i++)
        *(r->placements[i].session_id[0] == 'A' ? &na : &nb) += 1;
    skv_sched_result_free(r);
    ck_assert_int_eq(na, 3);
    ck_assert_int_eq(nb, 2);
    skv_slots *ua, *ub;
    SKV_CK_OK(skv_sched_owner_usage(&ua, NULL, NULL, s, SKV_SCHED_SCOPE_USER, "A", &e), &e);
    SKV_CK_OK(skv_sched_owner_usage(&ub, NULL, NULL, s, SKV_SCHED_SCOPE_USER, "B", &e), &e);
    ck_assert_int_eq(skv_slots_get(ua, "mem"), 12LL << 30); /* 12/18 */
    ck_assert_int_eq(skv_slots_get(ub, "cpu"), 6000);       /* 6/9 */
    skv_slots_free(ua);
    skv_slots_free(ub);
    /* FIFO instead lets A take what it can first: shares diverge */
    skv_sched *f = mk_sched("fifo", NULL);
    add_agent(f, "a0", "cpu=9,mem=18g", 0);
    for (int i = 0; i < 10; i++) {
        char id[16];
        snprintf(id, sizeof(id), "A%02d", i);
        submit(f, id, "cpu=1,mem=4g", &(sub_opts){.user = "A"}, i);
        snprintf(id, sizeof(id), "B%02d", i);
        submit(f, id, "cpu=3,mem=1g", &(sub_opts){.user = "B"}, i + 100);
    }
    r = pass(f, 500);
    na = 0;
    for (size_t i = 0; i < r->n_placements; i++)
        na += r->placements[i].session_id[0] == 'A';
    ck_assert_int_eq(na, 4);
    skv_sched_result_free(r);
    skv_sched_free(f);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_fairshare_history)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_options so = SKV_SCHED_OPTIONS_INIT;
    so.fairshare_half_life_ms = 1000;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, &so, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "fairshare";
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=4", 0);
    /* heavy used the whole cluster for 2 s */
    submit(s, "h0", "cpu=4", &(sub_opts){.user = "heavy"}, 0);
    skv_sched_result *r = pass(s, 0);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_finished(s, "h0", false, 2000, &e), &e);
    /* both submit; heavy first */
    submit(s, "h1", "cpu=4", &(sub_opts){.user = "heavy"}, 2001);
    submit(s, "l1", "cpu=4", &(sub_opts){.user = "light"}, 2002);
    r = pass(s, 2003);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_str_eq(r->placements[0].session_id, "l1");
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_finished(s, "l1", false, 2004, &e), &e);
    /* after many half-lives the history has decayed: heavy runs again */
    submit(s, "l2", "cpu=4", &(sub_opts){.user = "light"}, 2005);
    r = pass(s, 2006);
    ck_assert_str_eq(r->placements[0].session_id, "l2");
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_finished(s, "l2", false, 2007, &e), &e);
    submit(s, "l3", "cpu=4", &(sub_opts){.user = "light"}, 2008);
    r = pass(s, 40000);
    ck_assert_str_eq(r->placements[0].session_id, "h1");
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_borrow_and_reclaim)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.preemption = true;
    go.preempt_min_runtime_ms = 10;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=64", 8);
    set_policy(s, SKV_SCHED_SCOPE_PROJECT, "P1", NULL, 0, 0, "cuda.device=4", "cuda.device=2");
    set_policy(s, SKV_SCHED_SCOPE_PROJECT, "P2", NULL, 0, 0, "cuda.device=4", NULL);
    /* P1 alone: borrows up to guarantee + limit = 6 of 8 GPUs */
    for (int i = 0; i < 8; i++) {
        char id[16];
        snprintf(id, sizeof(id), "p1-%d", i);
        submit(s, id, "cuda.device=1", &(sub_opts){.project = "P1", .preemptible = true}, i);
    }
    skv_sched_result *r = pass(s, 10);
    ck_assert_uint_eq(r->n_placements, 6);
    for (size_t i = 0; i < r->n_placements; i++)
        SKV_CK_OK(skv_sched_mark_started(s, r->placements[i].session_id, 10, &e), &e);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "p1-6").code, SKV_SCHED_REASON_QUOTA);
    SKV_CK_OK(skv_sched_cancel(s, "p1-6", 11, &e), &e);
    SKV_CK_OK(skv_sched_cancel(s, "p1-7", 11, &e), &e);
    /* P2 wants its guarantee: 2 idle GPUs, then 2 reclaimed from P1 */
    submit(s, "p2-a", "cuda.device=2", &(sub_opts){.project = "P2"}, 20);
    submit(s, "p2-b", "cuda.device=2", &(sub_opts){.project = "P2"}, 21);
    r = pass(s, 30);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_str_eq(r->placements[0].session_id, "p2-a");
    ck_assert_uint_eq(r->n_preemptions, 2);
    for (size_t i = 0; i < r->n_preemptions; i++) {
        ck_assert_int_eq(r->preemptions[i].cause, SKV_SCHED_PREEMPT_RECLAIM);
        ck_assert_str_eq(r->preemptions[i].for_session_id, "p2-b");
        ck_assert_int_eq(strncmp(r->preemptions[i].victim_id, "p1-", 3), 0);
    }
    char v0[16], v1[16];
    snprintf(v0, sizeof(v0), "%s", r->preemptions[0].victim_id);
    snprintf(v1, sizeof(v1), "%s", r->preemptions[1].victim_id);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "p2-b").code, SKV_SCHED_REASON_PREEMPTING);
    /* no double preemption while the victims are still there */
    r = pass(s, 31);
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_requeue(s, v0, 40, &e), &e);
    SKV_CK_OK(skv_sched_requeue(s, v1, 40, &e), &e);
    CHECK(s);
    r = pass(s, 41);
    ck_assert_ptr_nonnull(agent_of(r, "p2-b", 0));
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    /* P2 at its guarantee: no more reclaim for it */
    submit(s, "p2-c", "cuda.device=1", &(sub_opts){.project = "P2"}, 50);
    r = pass(s, 60);
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_preempt_whole_sessions)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "priority";
    go.preemption = true;
    go.preempt_min_runtime_ms = 100;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=64", 4);
    add_agent(s, "a1", "cpu=64", 4);
    /* a0: gang kernel (2) + s1 (2); a1: gang kernel (2) + s2 (1) + s3 (1) */
    submit(s, "gang", "cuda.device=2", &(sub_opts){.nk = 2, .mode = SKV_SCHED_MULTI_NODE,
                                                   .one_per_agent = true,
                                                   .preemptible = true}, 0);
    skv_sched_agent_set_schedulable(s, "a1", false, &e);
    submit(s, "s1", "cuda.device=2", &(sub_opts){.preemptible = true}, 1);
    submit(s, "young", "cpu=1", &(sub_opts){.preemptible = true}, 2);
    skv_sched_result *r = NULL;
    skv_sched_agent_set_schedulable(s, "a1", true, &e);
    r = pass(s, 0);
    ck_assert_uint_eq(r->n_placements, 3);
    skv_sched_result_free(r);
    submit(s, "s2", "cuda.device=1", &(sub_opts){.preemptible = true}, 3);
    submit(s, "s3", "cuda.device=1", &(sub_opts){.preemptible = true}, 4);
    submit(s, "fixed", "cpu=1", NULL, 5);
    r = pass(s, 1);
    ck_assert_uint_eq(r->n_placements, 3);
    ck_assert_str_eq(agent_of(r, "s2", 0), "a1");
    skv_sched_result_free(r);
    const char *all[] = {"gang", "s1", "s2", "s3", "fixed"};
    for (int i = 0; i < 5; i++)
        SKV_CK_OK(skv_sched_mark_started(s, all[i], 0, &e), &e);
    SKV_CK_OK(skv_sched_mark_started(s, "young", 150, &e), &e);
    /* high priority needs 4 GPUs on one agent */
    submit(s, "vip", "cuda.device=4", &(sub_opts){.prio = 10}, 200);
    r = pass(s, 200);
    ck_assert_uint_eq(r->n_placements, 0);
    /* fewest victims: the gang (whole, both kernels) + s1 */
    ck_assert_uint_eq(r->n_preemptions, 2);
    int saw_gang = 0, saw_s1 = 0;
    for (size_t i = 0; i < r->n_preemptions; i++) {
        saw_gang += strcmp(r->preemptions[i].victim_id, "gang") == 0;
        saw_s1 += strcmp(r->preemptions[i].victim_id, "s1") == 0;
        ck_assert_int_eq(r->preemptions[i].cause, SKV_SCHED_PREEMPT_PRIORITY);
    }
    ck_assert_int_eq(saw_gang + saw_s1, 2);
    skv_sched_result_free(r);
    /* the pass did not kill anything: usage unchanged */
    ck_assert_int_eq(used_of(s, "a0", "cuda.device"), 4000);
    SKV_CK_OK(skv_sched_requeue(s, "gang", 210, &e), &e);
    SKV_CK_OK(skv_sched_mark_finished(s, "s1", true, 210, &e), &e);
    r = pass(s, 220);
    ck_assert_str_eq(agent_of(r, "vip", 0), "a0");
    skv_sched_result_free(r);
    /* equal priority: nothing to preempt */
    submit(s, "peer", "cuda.device=4", NULL, 300);
    r = pass(s, 300);
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

/* The pass's failure memo under preemption: a waiter that found no victim
 * stands only for later ones of its shape with no higher priority. Here a
 * priority-1 waiter finds none (the running sessions have priority 2), its
 * twin is served by the memo, and the priority-5 twins after it (fifo
 * order) must still look and evict one victim each. */
START_TEST(test_preempt_memo)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.preemption = true;
    go.max_reservations = 0;            /* the memo serves from the start */
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=64", 2);
    submit(s, "r0", "cuda.device=1", &(sub_opts){.prio = 2, .preemptible = true}, 0);
    submit(s, "r1", "cuda.device=1", &(sub_opts){.prio = 2, .preemptible = true}, 0);
    skv_sched_result *r = pass(s, 0);
    ck_assert_uint_eq(r->n_placements, 2);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_started(s, "r0", 0, &e), &e);
    SKV_CK_OK(skv_sched_mark_started(s, "r1", 0, &e), &e);
    const char *ids[] = {"w1", "w2", "w3", "w4", "w5"};
    const int32_t prio[] = {1, 1, 5, 5, 4};
    for (int i = 0; i < 5; i++)
        submit(s, ids[i], "cuda.device=1", &(sub_opts){.prio = prio[i]}, 10 + i);
    r = pass(s, 100);
    ck_assert_uint_eq(r->n_placements, 0);
    ck_assert_uint_eq(r->n_preemptions, 2);
    for (size_t i = 0; i < r->n_preemptions; i++)
        ck_assert_str_eq(r->preemptions[i].for_session_id, i ? "w4" : "w3");
    skv_sched_result_free(r);
    skv_sched_reason why;
    SKV_CK_OK(skv_sched_session_reason(&why, s, "w2", &e), &e);
    ck_assert_int_eq(why.code, SKV_SCHED_REASON_RESOURCES);
    SKV_CK_OK(skv_sched_session_reason(&why, s, "w3", &e), &e);
    ck_assert_int_eq(why.code, SKV_SCHED_REASON_PREEMPTING);
    SKV_CK_OK(skv_sched_check(s, &e), &e);
    skv_sched_free(s);
}
END_TEST

/* The victim a 1-GPU preemptor picks on a full 2-GPU agent: "old0"
 * (priority 0, running since t=0) or "new1" (priority 1, since t=900). */
static const char *preempt_victim(skv_sched_preempt_order order)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "priority";
    go.preemption = true;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    SKV_CK_OK(skv_sched_group_set_preempt_order(s, "default", order, &e), &e);
    add_agent(s, "a0", "cpu=64", 2);
    submit(s, "old0", "cuda.device=1", &(sub_opts){.preemptible = true}, 0);
    submit(s, "new1", "cuda.device=1", &(sub_opts){.prio = 1,
                                                   .preemptible = true}, 0);
    skv_sched_result_free(pass(s, 0));
    SKV_CK_OK(skv_sched_mark_started(s, "old0", 0, &e), &e);
    SKV_CK_OK(skv_sched_mark_started(s, "new1", 900, &e), &e);
    submit(s, "vip", "cuda.device=1", &(sub_opts){.prio = 5}, 1000);
    skv_sched_result *r = pass(s, 1000);
    ck_assert_uint_eq(r->n_preemptions, 1);
    static char victim[16];
    snprintf(victim, sizeof victim, "%s", r->preemptions[0].victim_id);
    skv_sched_result_free(r);
    skv_sched_free(s);
    return victim;
}

START_TEST(test_preempt_order)
{
    ck_assert_str_eq(preempt_victim(SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY),
                     "old0");
    ck_assert_str_eq(preempt_victim(SKV_SCHED_PREEMPT_ORDER_NEWEST), "new1");
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    ck_assert_int_eq(skv_sched_group_set_preempt_order(
                         s, "nope", SKV_SCHED_PREEMPT_ORDER_NEWEST, &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv_sched_group_set_preempt_order(
                         s, "default", (skv_sched_preempt_order)7, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "neither"));
    skv_sched_free(s);
}
END_TEST

/* HoL: 16 agents x 8 GPUs, a stream of 1-GPU jobs (100 ms) and one 64-GPU
 * gang. Returns the gang's start time (-1: never) and the longest wait of a
 * small job. */
static void hol_run(uint32_t reservations, int64_t *big_start, int64_t *max_wait,
                    int *small_started_while_big_waits)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = "dispersed";
    go.max_reservations = reservations;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    for (int i = 0; i < 16; i++) {
        char id[16];
        snprintf(id, sizeof(id), "n%02d", i);
        add_agent(s, id, "cpu=64", 8);
    }
    enum { MAXJ = 4096 };
    static int64_t end_at[MAXJ], sub_at[MAXJ];
    int nj = 0;
    *big_start = -1;
    *max_wait = 0;
    *small_started_while_big_waits = 0;
    for (int64_t t = 0; t <= 3000; t += 10) {
        for (int j = 0; j < nj; j++)
            if (end_at[j] > 0 && end_at[j] <= t) {
                char id[16];
                snprintf(id, sizeof(id), "j%d", j);
                SKV_CK_OK(skv_sched_mark_finished(s, id, false, t, &e), &e);
                SKV_CK_OK(skv_sched_session_remove(s, id, &e), &e);
                end_at[j] = 0;
            }
        for (int k = 0; k < 5 && nj < MAXJ; k++, nj++) {
            char id[16];
            snprintf(id, sizeof(id), "j%d", nj);
            submit(s, id, "cuda.device=1", &(sub_opts){.est = 100}, t);
            sub_at[nj] = t;
            end_at[nj] = -1;
        }
        if (t == 200)
            submit(s, "big", "cuda.device=8",
                   &(sub_opts){.nk = 8, .mode = SKV_SCHED_MULTI_NODE,
                               .one_per_agent = true, .est = 1000}, t);
        skv_sched_result *r = pass(s, t);
        for (size_t i = 0; i < r->n_placements; i++) {
            const char *id = r->placements[i].session_id;
            SKV_CK_OK(skv_sched_mark_started(s, id, t, &e), &e);
            if (strcmp(id, "big") == 0) {
                *big_start = t;
                continue;
            }
            int j = atoi(id + 1);
            end_at[j] = t + 100;
            if (t - sub_at[j] > *max_wait)
                *max_wait = t - sub_at[j];
            if (t > 200 && *big_start < 0)
                (*small_started_while_big_waits)++;
        }
        skv_sched_result_free(r);
    }
    skv_sched_free(s);
}

/* Preemption turned on in place (as the manager does on `admin group
 * update --preemption on`): the same queue preempts only after it. */
START_TEST(test_preempt_set_in_place)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "priority";
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=64", 2);
    submit(s, "low", "cuda.device=2", &(sub_opts){.preemptible = true}, 0);
    skv_sched_result *r = pass(s, 0);
    ck_assert_uint_eq(r->n_placements, 1);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_started(s, "low", 0, &e), &e);
    submit(s, "vip", "cuda.device=2", &(sub_opts){.prio = 10}, 10);
    r = pass(s, 1000);
    ck_assert_uint_eq(r->n_preemptions, 0);     /* preemption is off */
    skv_sched_result_free(r);
    ck_assert_int_eq(skv_sched_group_set_preemption(s, "default", true, -1,
                                                    &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_group_set_preemption(s, "nogroup", true, 0,
                                                    &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_group_set_preemption(s, NULL, true, 0, &e),
                     SKV_EINVAL);
    SKV_CK_OK(skv_sched_group_set_preemption(s, "default", true, 5000, &e),
              &e);
    r = pass(s, 2000);                          /* "low" ran 2 s < 5 s */
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    r = pass(s, 6000);
    ck_assert_uint_eq(r->n_preemptions, 1);
    ck_assert_str_eq(r->preemptions[0].victim_id, "low");
    ck_assert_str_eq(r->preemptions[0].for_session_id, "vip");
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_head_of_line)
{
    int64_t big, wait;
    int during;
    /* without reservations the big gang starves behind the 1-GPU stream */
    hol_run(0, &big, &wait, &during);
    ck_assert_int_eq(big, -1);
    /* with one: it starts once its reserved agents drain (jobs last 100 ms),
     * and the stream keeps flowing on the other agents meanwhile */
    hol_run(1, &big, &wait, &during);
    ck_assert_int_ge(big, 200);
    ck_assert_int_le(big, 200 + 150);
    ck_assert_int_gt(during, 0);
    ck_assert_int_le(wait, 200);
}
END_TEST

START_TEST(test_backfill_with_estimates)
{
    /* the head waits for a0 (busy until t=1000); a short job that ends
     * before that may use a0's free GPUs, a long one may not */
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a0", "cpu=64", 8);
    submit(s, "run", "cuda.device=4", &(sub_opts){.est = 1000}, 0);
    skv_sched_result *r = pass(s, 0);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_started(s, "run", 0, &e), &e);
    submit(s, "head", "cuda.device=8", NULL, 1);
    submit(s, "long", "cuda.device=2", &(sub_opts){.est = 5000}, 2);
    submit(s, "short", "cuda.device=2", &(sub_opts){.est = 500}, 3);
    r = pass(s, 10);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_str_eq(r->placements[0].session_id, "short");
    skv_sched_result_free(r);
    skv_sched_reason rs = reason_of(s, "head");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_HAS_RESERVATION);
    ck_assert_int_eq(rs.reserved_at_ms, 1000);
    rs = reason_of(s, "long");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_RESERVED);
    ck_assert_str_eq(rs.detail, "head");
    skv_sched_free(s);
}
END_TEST

static unsigned veto_seed;
static bool veto(const char *sid, uint32_t k, const char *agent, void *p)
{
    (void)sid; (void)k; (void)agent; (void)p;
    veto_seed = veto_seed * 1103515245u + 12345u;
    return ((veto_seed >> 16) % 100) >= 30; /* refuse 30% */
}

START_TEST(test_gang_atomic_failure_injection)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, "dispersed");
    for (int i = 0; i < 6; i++) {
        char id[8];
        snprintf(id, sizeof(id), "a%d", i);
        add_agent(s, id, "cpu=16", 4);
    }
    veto_seed = 42;
    srand(7);
    for (int round = 0; round < 60; round++) {
        for (int j = 0; j < 4; j++) {
            char id[16];
            snprintf(id, sizeof(id), "g%d-%d", round, j);
            int nk = 1 + rand() % 4;
            submit(s, id, rand() % 2 ? "cuda.device=2,cpu=1" : "cuda.device=1,cpu=2",
                   &(sub_opts){.nk = nk, .mode = SKV_SCHED_MULTI_NODE,
                               .one_per_agent = rand() % 2}, round);
        }
        skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
        po.filter = veto;
        skv_sched_result *r;
        SKV_CK_OK(skv_sched_pass(&r, s, round, &po, &e), &e);
        CHECK(s);
        for (size_t i = 0; i < r->n_placements; i++) {
            const skv_sched_placement *p = &r->placements[i];
            /* every kernel placed, each exactly once */
            for (size_t k = 0; k < p->n_kernels; k++)
                ck_assert_uint_eq(p->kernels[k].kernel, k);
        }
        /* finish a few, everything pending holds nothing (check proves it) */
        for (size_t i = 0; i < r->n_placements; i += 2)
            SKV_CK_OK(skv_sched_mark_finished(s, r->placements[i].session_id, false,
                                              round, &e), &e);
        skv_sched_result_free(r);
        CHECK(s);
    }
    skv_sched_free(s);
}
END_TEST

/* allocator failing the n-th allocation from arming on */
static long fail_at = -1, alloc_count;
static void *f_malloc(size_t n, void *p)
{
    (void)p;
    if (fail_at >= 0 && alloc_count++ >= fail_at)
        return NULL;
    return malloc(n);
}
static void *f_realloc(void *q, size_t n, void *p)
{
    (void)p;
    if (fail_at >= 0 && alloc_count++ >= fail_at)
        return NULL;
    return realloc(q, n);
}
static void f_free(void *q, void *p) { (void)p; free(q); }

START_TEST(test_pass_enomem_rolls_back)
{
    skv_error e = SKV_ERROR_INIT;
    skv_allocator al = {SKV_ALLOCATOR_VERSION, f_malloc, f_realloc, f_free, NULL};
    SKV_CK_OK(skv_set_allocator(&al, &e), &e);
    skv_sched *s = mk_sched("drf", NULL);
    add_agent(s, "a0", "cpu=16", 4);
    add_agent(s, "a1", "cpu=16", 4);
    for (int i = 0; i < 12; i++) {
        char id[16], user[8];
        snprintf(id, sizeof(id), "s%d", i);
        snprintf(user, sizeof(user), "u%d", i % 3);
        submit(s, id, "cuda.device=1,cpu=1",
               &(sub_opts){.user = user, .nk = 1 + i % 2, .mode = SKV_SCHED_MULTI_NODE}, i);
    }
    int failures = 0;
    for (long n = 0;; n++) {
        fail_at = n;
        alloc_count = 0;
        skv_sched_result *r = NULL;
        int rc = skv_sched_pass(&r, s, 100, NULL, &e);
        fail_at = -1;
        CHECK(s);
        if (rc == 0) {
            ck_assert_uint_gt(r->n_placements, 0);
            skv_sched_result_free(r);
            break;
        }
        ck_assert_int_eq(rc, SKV_ENOMEM);
        ck_assert_ptr_null(r);
        failures++;
        /* nothing was committed */
        ck_assert_int_eq(used_of(s, "a0", "cpu"), 0);
        ck_assert_int_eq(used_of(s, "a1", "cpu"), 0);
        ck_assert_int_eq(state_of(s, "s0"), SKV_SCHED_PENDING);
    }
    ck_assert_int_gt(failures, 3);
    skv_sched_free(s);
    SKV_CK_OK(skv_set_allocator(NULL, &e), &e);
}
END_TEST

START_TEST(test_pass_limit)
{
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a0", "cpu=16", 0);
    for (int i = 0; i < 5; i++) {
        char id[8];
        snprintf(id, sizeof(id), "s%d", i);
        submit(s, id, "cpu=1", NULL, i);
    }
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.max_placements = 2;
    skv_sched_result *r;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_pass(&r, s, 10, &po, &e), &e);
    ck_assert_uint_eq(r->n_placements, 2);
    ck_assert_uint_eq(r->n_considered, 5);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "s4").code, SKV_SCHED_REASON_PASS_LIMIT);
    skv_sched_free(s);
}
END_TEST

Suite *skv_test_suite_sched_policy(void);
Suite *skv_test_suite_sched_policy(void)
{
    Suite *su = suite_create("sched_policy");
    TCase *tc = tcase_create("policy");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_quota_never_exceeded);
    tcase_add_test(tc, test_drf_equal_shares);
    tcase_add_test(tc, test_fairshare_history);
    tcase_add_test(tc, test_borrow_and_reclaim);
    tcase_add_test(tc, test_preempt_whole_sessions);
    tcase_add_test(tc, test_preempt_memo);
    tcase_add_test(tc, test_preempt_set_in_place);
    tcase_add_test(tc, test_preempt_order);
    tcase_add_test(tc, test_head_of_line);
    tcase_add_test(tc, test_backfill_with_estimates);
    tcase_add_test(tc, test_gang_atomic_failure_injection);
    tcase_add_test(tc, test_pass_enomem_rolls_back);
    tcase_add_test(tc, test_pass_limit);
    suite_add_tcase(su, tc);
    add_preempt_equiv_tcase(su);
    return su;
}
