/* Quotas per resource group (the quota tree): hard limits and borrow
 * ceilings per group, use per group, reclaim of borrowed guaranteed
 * capacity among siblings (domain -> project -> user), determinism and bad
 * input.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sched_util.h"

static void quota(skv_sched *s, skv_sched_scope sc, const char *name,
                  const char *group, const char *guar, const char *limit,
                  const char *borrow)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_quota q = SKV_SCHED_QUOTA_INIT;
    skv_slots *g = guar ? sl(guar) : NULL, *l = limit ? sl(limit) : NULL,
              *b = borrow ? sl(borrow) : NULL;
    q.guaranteed = g;
    q.limit = l;
    q.borrow_limit = b;
    SKV_CK_OK(skv_sched_quota_set(s, sc, name, group, &q, &e), &e);
    skv_slots_free(g);
    skv_slots_free(l);
    skv_slots_free(b);
}

static skv_qty use_of(const skv_sched *s, skv_sched_scope sc,
                      const char *name, const char *group, const char *slot)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *u = NULL;
    SKV_CK_OK(skv_sched_quota_usage(&u, s, sc, name, group, &e), &e);
    skv_qty q = skv_slots_get(u, slot);
    skv_slots_free(u);
    return q;
}

static void start_all(skv_sched *s, const skv_sched_result *r, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    for (size_t i = 0; i < r->n_placements; i++)
        SKV_CK_OK(skv_sched_mark_started(s, r->placements[i].session_id, now,
                                         &e), &e);
}

static skv_sched *preempting(const char *g2)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.preemption = true;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    if (g2)
        SKV_CK_OK(skv_sched_group_add(s, g2, &go, &e), &e);
    return s;
}

/* A limit in one group holds there only; use is kept per group. */
START_TEST(test_quota_per_group)
{
    skv_sched *s = preempting("g2");
    add_agent(s, "a0", "cpu=64", 8);
    add_agent_g(s, "b0", "g2", "cpu=64", 8, "A100");
    quota(s, SKV_SCHED_SCOPE_PROJECT, "P", "default", NULL, "cuda.device=2",
          NULL);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "d%d", i);
        submit(s, id, "cuda.device=1", &(sub_opts){.project = "P"}, i);
        snprintf(id, sizeof id, "g%d", i);
        submit(s, id, "cuda.device=1", &(sub_opts){.project = "P",
                                                   .group = "g2"}, i);
    }
    skv_sched_result *r = pass(s, 10);
    ck_assert_uint_eq(r->n_placements, 6);
    skv_sched_result_free(r);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "P", "default",
                            "cuda.device"), 2000);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "P", "g2",
                            "cuda.device"), 4000);
    skv_sched_reason rs = reason_of(s, "d2");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_QUOTA);
    ck_assert_int_eq(rs.scope, SKV_SCHED_SCOPE_PROJECT);
    ck_assert_str_eq(rs.detail, "P");
    ck_assert_str_eq(rs.slot, "cuda.device");
    /* unknown owner or group: nothing used, not an error */
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_USER, "nobody", "default",
                            "cuda.device"), 0);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "P", "nogroup",
                            "cuda.device"), 0);
    /* the quota removed: the rest starts */
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_quota_set(s, SKV_SCHED_SCOPE_PROJECT, "P", "default",
                                  NULL, &e), &e);
    r = pass(s, 20);
    ck_assert_uint_eq(r->n_placements, 2);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_finished(s, "d0", false, 30, &e), &e);
    CHECK(s);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "P", "default",
                            "cuda.device"), 3000);
    skv_sched_free(s);
}
END_TEST

/* guaranteed + borrow_limit is a ceiling even with capacity idle. */
START_TEST(test_quota_borrow_ceiling)
{
    skv_sched *s = preempting(NULL);
    add_agent(s, "a0", "cpu=64", 8);
    quota(s, SKV_SCHED_SCOPE_USER, "u1", "default", "cuda.device=2", NULL,
          "cuda.device=1");
    for (int i = 0; i < 5; i++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", i);
        submit(s, id, "cpu=1,cuda.device=1", &(sub_opts){.user = "u1"}, i);
    }
    skv_sched_result *r = pass(s, 10);
    ck_assert_uint_eq(r->n_placements, 3);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "s3").code, SKV_SCHED_REASON_QUOTA);
    ck_assert_int_eq(reason_of(s, "s3").shortfall, 1000);
    skv_sched_free(s);
}
END_TEST

/* Project A (guaranteed 4 GPUs) is idle; B borrows all 4 with preemptible
 * sessions. A submits 2 x 2 GPUs: in one pass B's sessions holding GPUs
 * are chosen (cause RECLAIM, newest first: least work lost), none of A's
 * own; once they are requeued both of A's start in the next pass. */
static void borrow_then_reclaim(skv_sched *s, char victims[4][16])
{
    skv_error e = SKV_ERROR_INIT;
    add_agent(s, "a0", "cpu=16", 4);
    quota(s, SKV_SCHED_SCOPE_PROJECT, "A", "default", "cuda.device=4", NULL,
          NULL);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "b%d", i);
        submit(s, id, "cpu=1,cuda.device=1",
               &(sub_opts){.project = "B", .preemptible = true}, i);
    }
    skv_sched_result *r = pass(s, 10 + 0);
    ck_assert_uint_eq(r->n_placements, 4);
    start_all(s, r, 10);
    skv_sched_result_free(r);
    submit(s, "a1", "cpu=1,cuda.device=2", &(sub_opts){.project = "A"}, 20);
    submit(s, "a2", "cpu=1,cuda.device=2", &(sub_opts){.project = "A"}, 21);
    r = pass(s, 30);
    ck_assert_uint_eq(r->n_placements, 0);
    ck_assert_uint_eq(r->n_preemptions, 4);
    for (size_t i = 0; i < r->n_preemptions; i++) {
        ck_assert_int_eq(r->preemptions[i].cause, SKV_SCHED_PREEMPT_RECLAIM);
        ck_assert_int_eq(r->preemptions[i].victim_id[0], 'b');
        snprintf(victims[i], 16, "%s", r->preemptions[i].victim_id);
    }
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "a1").code, SKV_SCHED_REASON_PREEMPTING);
    ck_assert_int_eq(reason_of(s, "a2").code, SKV_SCHED_REASON_PREEMPTING);
    /* the victims still hold their GPUs: no second round */
    r = pass(s, 31);
    ck_assert_uint_eq(r->n_preemptions, 0);
    ck_assert_uint_eq(r->n_placements, 0);
    skv_sched_result_free(r);
    for (int i = 0; i < 4; i++)
        SKV_CK_OK(skv_sched_requeue(s, victims[i], 40, &e), &e);
    CHECK(s);
    r = pass(s, 41);
    ck_assert_uint_eq(r->n_placements, 2);
    ck_assert_ptr_nonnull(agent_of(r, "a1", 0));
    ck_assert_ptr_nonnull(agent_of(r, "a2", 0));
    ck_assert_uint_eq(r->n_preemptions, 0);
    start_all(s, r, 41);
    skv_sched_result_free(r);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "A", "default",
                            "cuda.device"), 4000);
    ck_assert_int_eq(use_of(s, SKV_SCHED_SCOPE_PROJECT, "B", "default",
                            "cuda.device"), 0);
    ck_assert_int_eq(state_of(s, "b0"), SKV_SCHED_PENDING);
    /* A at its guarantee: B's requeued sessions wait, nothing reclaimed */
    r = pass(s, 50);
    ck_assert_uint_eq(r->n_preemptions, 0);
    skv_sched_result_free(r);
    /* A finishes: B runs again */
    SKV_CK_OK(skv_sched_mark_finished(s, "a1", false, 60, &e), &e);
    SKV_CK_OK(skv_sched_mark_finished(s, "a2", false, 60, &e), &e);
    r = pass(s, 61);
    ck_assert_uint_eq(r->n_placements, 4);
    skv_sched_result_free(r);
    CHECK(s);
}

START_TEST(test_quota_reclaim_borrowed)
{
    char v1[4][16], v2[4][16];
    skv_sched *s = preempting(NULL);
    borrow_then_reclaim(s, v1);
    skv_sched_free(s);
    /* the same decisions every time */
    s = preempting(NULL);
    borrow_then_reclaim(s, v2);
    skv_sched_free(s);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq(v1[i], v2[i]);
}
END_TEST

/* Only what is needed: A asks for 1 of its 4 GPUs, one borrower goes. */
START_TEST(test_quota_reclaim_fewest)
{
    skv_sched *s = preempting(NULL);
    add_agent(s, "a0", "cpu=16", 4);
    quota(s, SKV_SCHED_SCOPE_PROJECT, "A", "default", "cuda.device=4", NULL,
          NULL);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "b%d", i);
        submit(s, id, "cpu=1,cuda.device=1",
               &(sub_opts){.project = "B", .preemptible = true}, i);
    }
    skv_sched_result *r = pass(s, 10);
    start_all(s, r, 10);
    skv_sched_result_free(r);
    submit(s, "a1", "cpu=1,cuda.device=1", &(sub_opts){.project = "A"}, 20);
    r = pass(s, 30);
    ck_assert_uint_eq(r->n_preemptions, 1);
    ck_assert_str_eq(r->preemptions[0].for_session_id, "a1");
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

/* No reclaim: the group's preemption off; borrowers not preemptible; the
 * waiter beyond its guarantee; owners that are not siblings at the level
 * holding the guarantee (projects of different domains without domain
 * guarantees). */
static int reclaims(bool preemption, bool preemptible, const char *guar,
                    const char *a_domain)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.preemption = preemption;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=16", 4);
    quota(s, SKV_SCHED_SCOPE_PROJECT, "A", "default", guar, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "b%d", i);
        submit(s, id, "cpu=1,cuda.device=1",
               &(sub_opts){.project = "B", .preemptible = preemptible}, i);
    }
    skv_sched_result *r = pass(s, 10);
    start_all(s, r, 10);
    skv_sched_result_free(r);
    submit(s, "a1", "cpu=1,cuda.device=2",
           &(sub_opts){.project = "A", .domain = a_domain}, 20);
    r = pass(s, 30);
    int n = (int)r->n_preemptions;
    skv_sched_result_free(r);
    skv_sched_free(s);
    return n;
}

START_TEST(test_quota_no_reclaim)
{
    ck_assert_int_eq(reclaims(true, true, "cuda.device=4", "d"), 2);
    ck_assert_int_eq(reclaims(false, true, "cuda.device=4", "d"), 0);
    ck_assert_int_eq(reclaims(true, false, "cuda.device=4", "d"), 0);
    ck_assert_int_eq(reclaims(true, true, "cuda.device=1", "d"), 0);
    ck_assert_int_eq(reclaims(true, true, "cpu=4", "d"), 0);
    ck_assert_int_eq(reclaims(true, true, "cuda.device=4", "other"), 0);
}
END_TEST

/* Users of one project are siblings too; the domain guarantee decides
 * between domains. */
START_TEST(test_quota_reclaim_levels)
{
    skv_sched *s = preempting(NULL);
    add_agent(s, "a0", "cpu=16", 4);
    quota(s, SKV_SCHED_SCOPE_USER, "alice", "default", "cuda.device=2", NULL,
          NULL);
    quota(s, SKV_SCHED_SCOPE_DOMAIN, "d1", "default", "cuda.device=2", NULL,
          NULL);
    submit(s, "bob1", "cuda.device=1", &(sub_opts){.user = "bob",
           .preemptible = true}, 1);
    submit(s, "bob2", "cuda.device=1", &(sub_opts){.user = "bob",
           .preemptible = true}, 2);
    submit(s, "x1", "cuda.device=1", &(sub_opts){.domain = "d2",
           .preemptible = true}, 3);
    submit(s, "x2", "cuda.device=1", &(sub_opts){.domain = "d2",
           .preemptible = true}, 4);
    skv_sched_result *r = pass(s, 10);
    ck_assert_uint_eq(r->n_placements, 4);
    start_all(s, r, 10);
    skv_sched_result_free(r);
    /* alice (domain d, project p, like bob) reclaims from bob only */
    submit(s, "al", "cuda.device=2", &(sub_opts){.user = "alice"}, 20);
    r = pass(s, 30);
    ck_assert_uint_eq(r->n_preemptions, 2);
    for (size_t i = 0; i < 2; i++)
        ck_assert_int_eq(strncmp(r->preemptions[i].victim_id, "bob", 3), 0);
    skv_sched_result_free(r);
    /* domain d1 reclaims from domain d2 (x1, x2) */
    submit(s, "dd", "cuda.device=2", &(sub_opts){.domain = "d1"}, 40);
    r = pass(s, 50);
    ck_assert_uint_eq(r->n_preemptions, 2);
    for (size_t i = 0; i < 2; i++)
        ck_assert_int_eq(r->preemptions[i].victim_id[0], 'x');
    skv_sched_result_free(r);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_quota_bad_input)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = preempting(NULL);
    skv_sched_quota q = SKV_SCHED_QUOTA_INIT;
    ck_assert_int_eq(skv_sched_quota_set(NULL, SKV_SCHED_SCOPE_USER, "u",
                                         "default", &q, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_quota_set(s, SKV_SCHED_SCOPE_USER, NULL,
                                         "default", &q, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_quota_set(s, (skv_sched_scope)7, "u",
                                         "default", &q, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_quota_set(s, SKV_SCHED_SCOPE_USER, "u",
                                         "nogroup", &q, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "nogroup"));
    q.version = 99;
    ck_assert_int_eq(skv_sched_quota_set(s, SKV_SCHED_SCOPE_USER, "u",
                                         "default", &q, &e), SKV_EVERSION);
    q.version = SKV_SCHED_QUOTA_VERSION;
    /* more slot names than the scheduler holds: refused, nothing kept */
    char text[1024] = "";
    for (int i = 0; i < SKV_SCHED_SLOTS_MAX + 1; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%sx%d=1",
                 i ? "," : "", i);
    skv_slots *big = sl(text);
    q.limit = big;
    ck_assert_int_eq(skv_sched_quota_set(s, SKV_SCHED_SCOPE_USER, "u",
                                         "default", &q, &e), SKV_ERANGE);
    ck_assert_ptr_nonnull(strstr(e.message, "user 'u' in group 'default'"));
    skv_slots_free(big);
    /* the slot table was rolled back: a normal quota still fits */
    quota(s, SKV_SCHED_SCOPE_USER, "u", "default", "cuda.device=1", NULL,
          NULL);
    skv_slots *u = NULL;
    ck_assert_int_eq(skv_sched_quota_usage(&u, s, (skv_sched_scope)9, "u",
                                           "default", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_quota_usage(NULL, s, SKV_SCHED_SCOPE_USER, "u",
                                           "default", &e), SKV_EINVAL);
    CHECK(s);
    skv_sched_free(s);
}
END_TEST

Suite *skv_test_suite_sched_quota(void);
Suite *skv_test_suite_sched_quota(void)
{
    Suite *su = suite_create("sched_quota");
    TCase *tc = tcase_create("quota");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_quota_per_group);
    tcase_add_test(tc, test_quota_borrow_ceiling);
    tcase_add_test(tc, test_quota_reclaim_borrowed);
    tcase_add_test(tc, test_quota_reclaim_fewest);
    tcase_add_test(tc, test_quota_no_reclaim);
    tcase_add_test(tc, test_quota_reclaim_levels);
    tcase_add_test(tc, test_quota_bad_input);
    suite_add_tcase(su, tc);
    return su;
}
