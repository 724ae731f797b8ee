/* Scheduler core: model, lifecycle, accounting, selectors, sequencers,
 * device-level placement, reasons, plugins, bad input.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "sched_util.h"
#include "sched_inc_scan.h"
#include "sched_room_equiv.h"
#include "sched_rr_equiv.h"
#include "sched_inc_lockstep.h"
#include "sched_auto.h"
#include "sokovan/alloc.h"

START_TEST(test_bad_input)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    skv_sched_options o = SKV_SCHED_OPTIONS_INIT;
    o.version = 99;
    ck_assert_int_eq(skv_sched_new(&s, &o, &e), SKV_EVERSION);
    ck_assert_ptr_null(s);
    s = mk_sched(NULL, NULL);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    ck_assert_int_eq(skv_sched_group_add(s, "default", &go, &e), SKV_EEXIST);
    go.selector = "nope";
    ck_assert_int_eq(skv_sched_group_add(s, "g2", &go, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "nope"));
    go.selector = NULL;
    go.sequencer = "fairshare";
    go.sequencer_config = "bogus";
    ck_assert_int_eq(skv_sched_group_add(s, "g2", &go, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_group_add(s, "", NULL, &e), SKV_EINVAL);

    /* agents */
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = "a1";
    a.resource_group = "missing";
    ck_assert_int_eq(skv_sched_agent_add(s, &a, &e), SKV_ENOENT);
    skv_slots *cap = sl("cpu=4,cuda.device=1");
    skv_sched_device_spec dev = {NULL, "cuda.device", "cuda.shares", 0};
    a.resource_group = "default";
    a.capacity = cap;
    a.n_devices = 1;
    a.devices = &dev;
    ck_assert_int_eq(skv_sched_agent_add(s, &a, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "cuda.device"));
    skv_slots_free(cap);
    a.n_devices = 65;
    a.capacity = NULL;
    ck_assert_int_eq(skv_sched_agent_add(s, &a, &e), SKV_EINVAL);
    a.version = 7;
    ck_assert_int_eq(skv_sched_agent_add(s, &a, &e), SKV_EVERSION);
    add_agent(s, "a1", "cpu=4,mem=8g", 2);
    ck_assert_int_eq(skv_sched_agent_remove(s, "zz", &e), SKV_ENOENT);

    /* sessions */
    ck_assert_int_eq(submit_x(s, "x", "cpu=1", &(sub_opts){.group = "nope"}, 0, &e),
                     SKV_ENOENT);
    ck_assert_int_eq(submit_x(s, "x", "", NULL, 0, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "empty"));
    ck_assert_int_eq(submit_x(s, "x", "cpu=0", NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(submit_x(s, "x", "cpu=1", &(sub_opts){.nk = 2, .one_per_agent = true},
                              0, &e), SKV_EINVAL);
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    skv_slots *r = sl("cpu=1");
    skv_sched_kernel_spec ks[2] = {{SKV_SCHED_ROLE_SUB, r}, {SKV_SCHED_ROLE_SUB, r}};
    sp.id = "x";
    sp.resource_group = "default";
    sp.n_kernels = 2;
    sp.kernels = ks;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "main"));
    ks[0].role = SKV_SCHED_ROLE_MAIN;
    const char *self[] = {"x"};
    sp.depends_on = self;
    sp.n_depends = 1;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EINVAL);
    sp.n_depends = 0;
    sp.estimated_duration_ms = -1;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EINVAL);
    skv_slots_free(r);
    submit(s, "ok", "cpu=1", NULL, 0);
    ck_assert_int_eq(submit_x(s, "ok", "cpu=1", NULL, 0, &e), SKV_EEXIST);
    ck_assert_int_eq(skv_sched_mark_started(s, "ok", 0, &e), SKV_ESTATE);
    ck_assert_int_eq(skv_sched_mark_finished(s, "ok", false, 0, &e), SKV_ESTATE);
    ck_assert_int_eq(skv_sched_session_remove(s, "ok", &e), SKV_ESTATE);
    ck_assert_int_eq(skv_sched_cancel(s, "nope", 0, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_cancel(NULL, "nope", 0, &e), SKV_EINVAL);
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.resource_group = "zz";
    skv_sched_result *res = NULL;
    ck_assert_int_eq(skv_sched_pass(&res, s, 0, &po, &e), SKV_ENOENT);
    ck_assert_ptr_null(res);
    po.version = 0;
    ck_assert_int_eq(skv_sched_pass(&res, s, 0, &po, &e), SKV_EVERSION);
    /* group with agents cannot go */
    ck_assert_int_eq(skv_sched_group_remove(s, "default", &e), SKV_EBUSY);
    CHECK(s);
    skv_sched_free(s);
    skv_sched_free(NULL);
    skv_sched_result_free(NULL);
}
END_TEST

START_TEST(test_lifecycle_accounting)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a1", "cpu=8,mem=32g", 4);
    submit(s, "s1", "cpu=2,mem=8g,cuda.device=2", NULL, 10);
    submit(s, "s2", "cpu=2,mem=4g,cuda.shares=0.5", NULL, 11);
    ck_assert_int_eq(state_of(s, "s1"), SKV_SCHED_PENDING);
    ck_assert_int_eq(reason_of(s, "s1").code, SKV_SCHED_REASON_NONE);
    skv_sched_result *r = pass(s, 20);
    ck_assert_uint_eq(r->n_placements, 2);
    ck_assert_str_eq(r->placements[0].session_id, "s1");
    ck_assert_str_eq(r->placements[0].resource_group, "default");
    ck_assert_uint_eq(r->placements[0].kernels[0].n_devices, 2);
    ck_assert(r->placements[0].kernels[0].devices[0].whole);
    ck_assert_uint_eq(r->placements[1].kernels[0].n_devices, 1);
    ck_assert_int_eq(r->placements[1].kernels[0].devices[0].amount, 500);
    /* a share never lands on a GPU handed out whole */
    ck_assert_uint_eq(r->placements[1].kernels[0].devices[0].device, 2);
    skv_sched_result_free(r);
    ck_assert_int_eq(used_of(s, "a1", "cpu"), 4000);
    ck_assert_int_eq(used_of(s, "a1", "cuda.device"), 2000);
    ck_assert_int_eq(used_of(s, "a1", "cuda.shares"), 500);
    ck_assert_int_eq(state_of(s, "s1"), SKV_SCHED_SCHEDULED);
    SKV_CK_OK(skv_sched_mark_started(s, "s1", 30, &e), &e);
    ck_assert_int_eq(state_of(s, "s1"), SKV_SCHED_RUNNING);
    skv_sched_result *pl = NULL;
    SKV_CK_OK(skv_sched_session_placement(&pl, s, "s1", &e), &e);
    ck_assert_str_eq(pl->placements[0].kernels[0].agent_id, "a1");
    skv_sched_result_free(pl);
    ck_assert_int_eq(skv_sched_agent_remove(s, "a1", &e), SKV_EBUSY);
    SKV_CK_OK(skv_sched_mark_finished(s, "s1", false, 40, &e), &e);
    CHECK(s);
    ck_assert_int_eq(used_of(s, "a1", "cuda.device"), 0);
    SKV_CK_OK(skv_sched_requeue(s, "s2", 41, &e), &e);
    ck_assert_int_eq(state_of(s, "s2"), SKV_SCHED_PENDING);
    CHECK(s);
    SKV_CK_OK(skv_sched_cancel(s, "s2", 42, &e), &e);
    ck_assert_int_eq(state_of(s, "s2"), SKV_SCHED_CANCELLED);
    ck_assert_int_eq(skv_sched_cancel(s, "s2", 42, &e), SKV_ESTATE);
    SKV_CK_OK(skv_sched_session_remove(s, "s2", &e), &e);
    ck_assert_int_eq(skv_sched_session_state(&(skv_sched_state){0}, s, "s2", &e),
                     SKV_ENOENT);
    ck_assert_int_eq(used_of(s, "a1", "cpu"), 0);
    uint32_t na = 9, np = 9;
    SKV_CK_OK(skv_sched_owner_usage(NULL, &na, &np, s, SKV_SCHED_SCOPE_USER, "u", &e), &e);
    ck_assert_uint_eq(na, 0);
    ck_assert_uint_eq(np, 0);
    SKV_CK_OK(skv_sched_agent_remove(s, "a1", &e), &e);
    SKV_CK_OK(skv_sched_session_remove(s, "s1", &e), &e);
    SKV_CK_OK(skv_sched_group_remove(s, "default", &e), &e);
    CHECK(s);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_agent_lost_update)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, "dispersed");
    add_agent(s, "a1", "cpu=8", 2);
    add_agent(s, "a2", "cpu=8", 2);
    submit(s, "gang", "cpu=1,cuda.device=1",
           &(sub_opts){.nk = 2, .mode = SKV_SCHED_MULTI_NODE, .one_per_agent = true}, 0);
    submit(s, "solo", "cpu=1", NULL, 0);
    skv_sched_result *r = pass(s, 1);
    ck_assert_uint_eq(r->n_placements, 2);
    char solo_agent[16];
    snprintf(solo_agent, sizeof(solo_agent), "%s", agent_of(r, "solo", 0));
    skv_sched_result_free(r);
    size_t lost = 0;
    SKV_CK_OK(skv_sched_agent_lost(s, &lost, "a1", 5, &e), &e);
    CHECK(s);
    ck_assert_uint_eq(lost, strcmp(solo_agent, "a1") == 0 ? 2 : 1);
    ck_assert_int_eq(state_of(s, "gang"), SKV_SCHED_LOST);
    /* the gang's kernel on a2 was freed too */
    ck_assert_int_eq(used_of(s, "a2", "cuda.device"), 0);
    /* update: shrinking below use is refused, growing is fine */
    submit(s, "big", "cpu=6", NULL, 6);
    r = pass(s, 7);
    skv_sched_result_free(r);
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    skv_slots *c = sl("cpu=2");
    skv_sched_device_spec dev[2] = {{NULL, "cuda.device", "cuda.shares", 0},
                                    {NULL, "cuda.device", "cuda.shares", 0}};
    a.id = "a2";
    a.resource_group = "default";
    a.capacity = c;
    a.n_devices = 2;
    a.devices = dev;
    ck_assert_int_eq(skv_sched_agent_update(s, &a, &e), SKV_EBUSY);
    skv_slots_free(c);
    c = sl("cpu=16");
    a.capacity = c;
    SKV_CK_OK(skv_sched_agent_update(s, &a, &e), &e);
    skv_slots_free(c);
    CHECK(s);
    ck_assert_int_eq(used_of(s, "a2", "cpu"), used_of(s, "a2", "cpu"));
    SKV_CK_OK(skv_sched_agent_set_schedulable(s, "a2", false, &e), &e);
    submit(s, "after", "cpu=1", NULL, 8);
    r = pass(s, 9);
    ck_assert_uint_eq(r->n_placements, 0);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "after").code, SKV_SCHED_REASON_NO_AGENT);
    skv_sched_free(s);
}
END_TEST

/* 4 agents of 8 GPUs, "pre" takes 6 GPUs of one; then three 2-GPU
 * sessions: where do they go? */
static void selector_run(const char *sel, char got[3][8], char pre_at[8])
{
    skv_sched *s = mk_sched(NULL, sel);
    add_agent(s, "a0", "cpu=64", 8);
    add_agent(s, "a1", "cpu=64", 8);
    add_agent(s, "a2", "cpu=64", 8);
    add_agent(s, "a3", "cpu=64", 8);
    submit(s, "pre", "cuda.device=6", &(sub_opts){0}, 0);
    skv_sched_result *r = pass(s, 0);
    ck_assert_uint_eq(r->n_placements, 1);
    snprintf(pre_at, 8, "%s", agent_of(r, "pre", 0));
    skv_sched_result_free(r);
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof(id), "j%d", i);
        submit(s, id, "cuda.device=2", NULL, 1 + i);
        r = pass(s, 10 + i);
        ck_assert_uint_eq(r->n_placements, 1);
        snprintf(got[i], 8, "%s", agent_of(r, id, 0));
        skv_sched_result_free(r);
    }
    skv_sched_free(s);
}

START_TEST(test_selectors)
{
    char got[3][8], pre[8];
    /* concentrated: fill the busy agent first, then pack onto one agent */
    selector_run("concentrated", got, pre);
    ck_assert_str_eq(got[0], pre);
    ck_assert_str_ne(got[1], pre);
    ck_assert_str_eq(got[1], got[2]);
    /* dispersed: three different empty agents */
    selector_run("dispersed", got, pre);
    ck_assert_str_ne(got[0], pre);
    ck_assert_str_ne(got[1], pre);
    ck_assert_str_ne(got[2], pre);
    ck_assert_str_ne(got[0], got[1]);
    ck_assert_str_ne(got[1], got[2]);
    ck_assert_str_ne(got[0], got[2]);
    /* round-robin: the next agent after the last one used, every time */
    selector_run("roundrobin", got, pre);
    ck_assert_str_eq(pre, "a0");
    ck_assert_str_eq(got[0], "a1");
    ck_assert_str_eq(got[1], "a2");
    ck_assert_str_eq(got[2], "a3");
}
END_TEST

/* A group's selector changes in place: agents and the running session
 * stay, the next placement follows the new selector; bad input changes
 * nothing. */
START_TEST(test_set_selector)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, "concentrated");
    add_agent(s, "a0", "cpu=64", 8);
    add_agent(s, "a1", "cpu=64", 8);
    submit(s, "p", "cuda.device=2", NULL, 0);
    skv_sched_result *r = pass(s, 0);
    char first[8];
    snprintf(first, sizeof(first), "%s", agent_of(r, "p", 0));
    skv_sched_result_free(r);
    ck_assert_int_eq(skv_sched_group_set_selector(s, "default", "nosuch",
                                                  NULL, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_group_set_selector(s, "nogroup", "dispersed",
                                                  NULL, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_group_set_selector(s, NULL, "dispersed", NULL,
                                                  &e), SKV_EINVAL);
    /* A config the selector refuses: its error, the old selector stays. */
    ck_assert_int_eq(skv_sched_group_set_selector(s, "default", "frag",
                                                  "bogus=1", &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "bogus"), "%s", e.message);
    /* still concentrated: packs next to p */
    submit(s, "q", "cuda.device=2", NULL, 1);
    r = pass(s, 1);
    ck_assert_str_eq(agent_of(r, "q", 0), first);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_group_set_selector(s, "default", "dispersed", NULL,
                                           &e), &e);
    CHECK(s);
    submit(s, "x", "cuda.device=2", NULL, 2);
    r = pass(s, 2);
    ck_assert_str_ne(agent_of(r, "x", 0), first);
    skv_sched_result_free(r);
    ck_assert_int_eq(state_of(s, "p"), SKV_SCHED_SCHEDULED);
    skv_sched_free(s);
}
END_TEST

static char order_log[64][16];
static int order_n;

static void seq_run(const char *seq, const int32_t prio[4], const char *expect)
{
    skv_sched *s = mk_sched(seq, NULL);
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    add_agent(s, "a0", "cpu=1", 0);
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof(id), "%c", 'a' + i);
        submit(s, id, "cpu=1", &(sub_opts){.prio = prio[i]}, i);
    }
    char got[8] = {0};
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 4; i++) {
        skv_sched_result *r;
        SKV_CK_OK(skv_sched_pass(&r, s, 100 + i, &po, &e), &e);
        CHECK(s);
        ck_assert_uint_eq(r->n_placements, 1);
        got[i] = r->placements[0].session_id[0];
        SKV_CK_OK(skv_sched_mark_finished(s, r->placements[0].session_id, false,
                                          100 + i, &e), &e);
        skv_sched_result_free(r);
    }
    ck_assert_msg(strcmp(got, expect) == 0, "%s: order %s, expected %s", seq, got,
                  expect);
    skv_sched_free(s);
}

START_TEST(test_sequencers)
{
    const int32_t prio[4] = {0, 5, 0, 9};
    seq_run("fifo", prio, "abcd");
    seq_run("lifo", prio, "dcba");
    seq_run("priority", prio, "dbac");
    (void)order_log;
    (void)order_n;
}
END_TEST

START_TEST(test_aging)
{
    /* a low-priority session overtakes newer high-priority ones once it has
     * waited long enough */
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = "priority";
    go.aging_ms = 100;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    add_agent(s, "a0", "cpu=1", 0);
    submit(s, "old", "cpu=1", &(sub_opts){.prio = 0}, 0);
    int t = 0, started_old = -1;
    for (int i = 0; i < 50 && started_old < 0; i++) {
        char id[16];
        snprintf(id, sizeof(id), "hi%d", i);
        t += 50;
        submit(s, id, "cpu=1", &(sub_opts){.prio = 10}, t);
        skv_sched_result *r = pass(s, t);
        for (size_t j = 0; j < r->n_placements; j++) {
            if (strcmp(r->placements[j].session_id, "old") == 0)
                started_old = t;
            SKV_CK_OK(skv_sched_mark_finished(s, r->placements[j].session_id,
                                              false, t, &e), &e);
        }
        skv_sched_result_free(r);
    }
    /* priority 0 + t/100 beats 10 + (a little) after ~1000-1100 ms */
    ck_assert_int_gt(started_old, 900);
    ck_assert_int_lt(started_old, 1300);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_fractional_device_level)
{
    skv_sched *s = mk_sched(NULL, "concentrated");
    add_agent(s, "a0", "cpu=64", 2);
    /* 0.6 + 0.6 cannot share one GPU: second goes to the other GPU; then
     * 0.4 fits the first GPU exactly (anti-fragmentation); then a whole GPU
     * request fails: no GPU is entirely free although 0.8 total is free */
    submit(s, "f1", "cuda.shares=0.6", NULL, 0);
    submit(s, "f2", "cuda.shares=0.6", NULL, 1);
    submit(s, "f3", "cuda.shares=0.4", NULL, 2);
    submit(s, "w", "cuda.device=1", NULL, 3);
    skv_sched_result *r = pass(s, 5);
    ck_assert_uint_eq(r->n_placements, 3);
    ck_assert_uint_eq(r->placements[0].kernels[0].devices[0].device, 0);
    ck_assert_uint_eq(r->placements[1].kernels[0].devices[0].device, 1);
    ck_assert_uint_eq(r->placements[2].kernels[0].devices[0].device, 0);
    skv_sched_result_free(r);
    /* the blocked head holds the reservation and still says what is short */
    skv_sched_reason rs = reason_of(s, "w");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_HAS_RESERVATION);
    ck_assert_int_eq(rs.reserved_at_ms, -1); /* no duration estimates */
    ck_assert_uint_eq(rs.n_slots, 1);
    ck_assert_str_eq(rs.slots[0].slot, "cuda.device");
    ck_assert_uint_eq(rs.slots[0].agents_short, 1);
    char *txt = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_reason_format(&txt, &rs, &e), &e);
    ck_assert_ptr_nonnull(strstr(txt, "cuda.device short on 1 of 1 candidate agents"));
    skv_free(txt);
    /* a 1.5-share request spans two devices only when no single one fits */
    skv_sched *s2 = mk_sched(NULL, NULL);
    add_agent(s2, "b0", "cpu=4", 2);
    submit(s2, "span", "cuda.shares=1.5", NULL, 0);
    r = pass(s2, 1);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_uint_eq(r->placements[0].kernels[0].n_devices, 2);
    skv_sched_result_free(r);
    skv_sched_free(s2);
    skv_sched_free(s);
}
END_TEST

/* The agent, running the node-level allocation map itself on the same
 * requests in the same order, reaches exactly the scheduler's devices. */
START_TEST(test_same_decision_as_agent_map)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    /* unequal devices: shares capacity 1.0, 0.5, 1.0, 0.25 */
    skv_qty caps[4] = {1000, 500, 1000, 250};
    skv_sched_device_spec dev[4];
    char ids[4][8];
    for (int i = 0; i < 4; i++) {
        snprintf(ids[i], sizeof(ids[i]), "gpu%d", i);
        dev[i] = (skv_sched_device_spec){ids[i], "cuda.device", "cuda.shares", caps[i]};
    }
    skv_slots *c = sl("cpu=64");
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = "node";
    a.resource_group = "default";
    a.capacity = c;
    a.n_devices = 4;
    a.devices = dev;
    SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    skv_slots_free(c);
    /* the agent's own map */
    skv_alloc_map *m;
    SKV_CK_OK(skv_alloc_map_new(&m, NULL, &e), &e);
    skv_alloc_slot_spec w = SKV_ALLOC_SLOT_SPEC_INIT, f = SKV_ALLOC_SLOT_SPEC_INIT;
    w.name = "cuda.device";
    w.exclusive_group = 1;
    f.name = "cuda.shares";
    f.mode = SKV_ALLOC_FRACTIONAL;
    f.quantum = 1;
    f.exclusive_group = 1;
    f.flags = SKV_ALLOC_SLOT_ANTIFRAG;
    size_t wi, fi;
    SKV_CK_OK(skv_alloc_map_add_slot(m, &wi, &w, &e), &e);
    SKV_CK_OK(skv_alloc_map_add_slot(m, &fi, &f, &e), &e);
    for (int i = 0; i < 4; i++) {
        size_t d;
        SKV_CK_OK(skv_alloc_map_add_device(m, &d, ids[i], -1, &e), &e);
        SKV_CK_OK(skv_alloc_map_set_capacity(m, d, "cuda.device", 1000, &e), &e);
        SKV_CK_OK(skv_alloc_map_set_capacity(m, d, "cuda.shares", caps[i], &e), &e);
    }
    static const char *reqs[] = {"cuda.shares=0.2", "cuda.shares=0.4", "cuda.device=1",
                                 "cuda.shares=0.25", "cuda.shares=0.3", "cuda.shares=0.1"};
    static const skv_qty milli[] = {200, 400, 1000, 250, 300, 100};
    for (int i = 0; i < 6; i++) {
        char id[8];
        snprintf(id, sizeof(id), "r%d", i);
        submit(s, id, reqs[i], NULL, i);
        skv_sched_result *r = pass(s, 10 + i);
        ck_assert_uint_eq(r->n_placements, 1);
        const skv_sched_kernel_placement *kp = &r->placements[0].kernels[0];
        bool whole = strstr(reqs[i], "device") != NULL;
        skv_alloc_result *ar;
        SKV_CK_OK(skv_alloc_map_alloc_slot(&ar, m, whole ? wi : fi, milli[i], NULL, &e),
                  &e);
        ck_assert_uint_eq(skv_alloc_result_count(ar), kp->n_devices);
        for (size_t j = 0; j < kp->n_devices; j++) {
            skv_alloc_entry en;
            SKV_CK_OK(skv_alloc_result_at(ar, j, &en), &e);
            ck_assert_uint_eq(en.device, kp->devices[j].device);
            ck_assert_int_eq(en.qty, kp->devices[j].amount);
        }
        skv_alloc_result_free(ar);
        skv_sched_result_free(r);
    }
    skv_alloc_map_free(m);
    skv_sched_free(s);
}
END_TEST

/* Label constraints: only agents carrying every required label (same
 * value) are candidates; none: NO_AGENT; a v1 spec (no such fields) is
 * still accepted; bad entries are refused. */
START_TEST(test_label_constraints)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    skv_slots *c = sl("cpu=8");
    skv_sched_label ib[] = {{"net", "ib"}, {"rack", "r1"}};
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = "plain";
    a.resource_group = "default";
    a.capacity = c;
    SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    a.id = "fast";
    a.n_labels = 2;
    a.labels = ib;
    SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    skv_slots_free(c);
    skv_slots *req = sl("cpu=1");
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &k;
    skv_sched_label want[] = {{"net", "ib"}};
    skv_sched_label wrong[] = {{"net", "ib"}, {"rack", "r2"}};
    for (int i = 0; i < 3; i++) {          /* every one lands on "fast" */
        char id[8];
        snprintf(id, sizeof(id), "ib%d", i);
        sp.id = id;
        sp.label_constraints = want;
        sp.n_label_constraints = 1;
        SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    }
    sp.id = "r2";
    sp.label_constraints = wrong;
    sp.n_label_constraints = 2;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.id = "v1";                            /* ignores the new fields */
    sp.version = 1;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.version = SKV_SCHED_SESSION_SPEC_VERSION;
    sp.id = "bad";
    sp.label_constraints = NULL;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EINVAL);
    skv_sched_label empty[] = {{"", "x"}};
    sp.label_constraints = empty;
    sp.n_label_constraints = 1;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EINVAL);
    sp.version = 3;
    ck_assert_int_eq(skv_sched_submit(s, &sp, 0, &e), SKV_EVERSION);
    skv_slots_free(req);
    skv_sched_result *r = pass(s, 1);
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof(id), "ib%d", i);
        ck_assert_str_eq(agent_of(r, id, 0), "fast");
    }
    ck_assert_ptr_nonnull(agent_of(r, "v1", 0));
    ck_assert_ptr_null(agent_of(r, "r2", 0));
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "r2").code, SKV_SCHED_REASON_NO_AGENT);
    CHECK(s);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_constraints_and_reasons)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent_g(s, "v100", "default", "cpu=8,mem=16g", 4, "V100");
    add_agent_g(s, "a100", "default", "cpu=8,mem=16g", 4, "A100");
    skv_sched_kernel_spec k;
    skv_slots *req = sl("cpu=1,cuda.device=1");
    k.role = SKV_SCHED_ROLE_MAIN;
    k.request = req;
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &k;
    const char *models[] = {"A100"};
    sp.id = "want-a100";
    sp.gpu_models = models;
    sp.n_gpu_models = 1;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.n_gpu_models = 0;
    const char *desig[] = {"v100"};
    sp.id = "on-v100";
    sp.designated_agents = desig;
    sp.n_designated = 1;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.n_designated = 0;
    sp.id = "arm";
    sp.architecture = "aarch64";
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.architecture = NULL;
    sp.id = "later";
    sp.not_before_ms = 1000;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.not_before_ms = 0;
    const char *deps[] = {"want-a100"};
    sp.id = "after";
    sp.depends_on = deps;
    sp.n_depends = 1;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    const char *ghost[] = {"ghost"};
    sp.id = "orphan";
    sp.depends_on = ghost;
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    sp.n_depends = 0;
    skv_slots_free(req);
    req = sl("cpu=1,mem=64g");
    k.request = req;
    sp.id = "huge";
    SKV_CK_OK(skv_sched_submit(s, &sp, 0, &e), &e);
    skv_slots_free(req);

    skv_sched_result *r = pass(s, 10);
    ck_assert_str_eq(agent_of(r, "want-a100", 0), "a100");
    ck_assert_str_eq(agent_of(r, "on-v100", 0), "v100");
    ck_assert_uint_eq(r->n_placements, 2);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "arm").code, SKV_SCHED_REASON_NO_AGENT);
    ck_assert_int_eq(reason_of(s, "later").code, SKV_SCHED_REASON_NOT_BEFORE);
    skv_sched_reason rs = reason_of(s, "after");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_DEPENDENCY);
    ck_assert_str_eq(rs.detail, "want-a100");
    ck_assert_int_eq(reason_of(s, "orphan").code, SKV_SCHED_REASON_DEPENDENCY_UNKNOWN);
    rs = reason_of(s, "huge");
    ck_assert_int_eq(rs.code, SKV_SCHED_REASON_RESOURCES);
    ck_assert_uint_eq(rs.agents_candidate, 2);
    ck_assert_str_eq(rs.slots[0].slot, "mem");
    ck_assert_uint_eq(rs.slots[0].agents_short, 2);
    ck_assert_int_eq(rs.slots[0].min_shortfall, 48LL << 30);
    ck_assert_str_eq(rs.resource_group, "default");
    ck_assert_int_eq(rs.evaluated_ms, 10);
    /* dependency done: "after" and "later" can go */
    SKV_CK_OK(skv_sched_mark_finished(s, "want-a100", false, 20, &e), &e);
    r = pass(s, 2000);
    ck_assert_ptr_nonnull(agent_of(r, "after", 0));
    ck_assert_ptr_nonnull(agent_of(r, "later", 0));
    skv_sched_result_free(r);
    /* failed dependency */
    SKV_CK_OK(skv_sched_mark_finished(s, "on-v100", true, 2001, &e), &e);
    const char *d2[] = {"on-v100"};
    skv_slots *rq = sl("cpu=1");
    k.request = rq;
    sp.id = "doomed";
    sp.depends_on = d2;
    sp.n_depends = 1;
    SKV_CK_OK(skv_sched_submit(s, &sp, 2002, &e), &e);
    skv_slots_free(rq);
    r = pass(s, 2003);
    skv_sched_result_free(r);
    ck_assert_int_eq(reason_of(s, "doomed").code, SKV_SCHED_REASON_DEPENDENCY_FAILED);
    ck_assert_int_eq(skv_sched_session_reason(&rs, s, "after", &e), SKV_ESTATE);
    skv_sched_free(s);
}
END_TEST

START_TEST(test_plugin_so)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/so/sched_plugin.so", skv_test_build_dir());
    SKV_CK_OK(skv_sched_load_plugin(s, path, &e), &e);
    ck_assert_int_eq(skv_sched_load_plugin(s, path, &e), SKV_EEXIST);
    snprintf(path, sizeof(path), "%s/tests/so/sched_plugin_badabi.so", skv_test_build_dir());
    ck_assert_int_eq(skv_sched_load_plugin(s, path, &e), SKV_EVERSION);
    ck_assert_ptr_nonnull(strstr(e.message, "ABI 999"));
    ck_assert_int_eq(skv_sched_load_plugin(s, "/nonexistent.so", &e), SKV_ENOENT);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = "test-last";
    go.sequencer = "test-reverse-id";
    SKV_CK_OK(skv_sched_group_add(s, "g", &go, &e), &e);
    add_agent_g(s, "x0", "g", "cpu=4", 0, "");
    add_agent_g(s, "x1", "g", "cpu=4", 0, "");
    add_agent_g(s, "x2", "g", "cpu=4", 0, "");
    submit(s, "aa", "cpu=1", &(sub_opts){.group = "g"}, 0);
    submit(s, "bb", "cpu=1", &(sub_opts){.group = "g"}, 1);
    skv_sched_result *r = pass(s, 2);
    ck_assert_uint_eq(r->n_placements, 2);
    ck_assert_str_eq(r->placements[0].session_id, "bb"); /* reverse id order */
    ck_assert_str_eq(agent_of(r, "aa", 0), "x2");        /* last agent wins */
    skv_sched_result_free(r);
    /* register by table: ABI mismatch and duplicates */
    skv_sched_selector bad = {2, "zzz", NULL, NULL, NULL, NULL, NULL};
    ck_assert_int_eq(skv_sched_register_selector(s, &bad, &e), SKV_EVERSION);
    bad.abi_version = SKV_SCHED_SELECTOR_ABI;
    ck_assert_int_eq(skv_sched_register_selector(s, &bad, &e), SKV_EINVAL);
    skv_sched_free(s);
}
END_TEST

/* ---- adoption (manager restart) ---- */

/* A fresh scheduler with the same agents as mk_sched/add_agent build. */
static skv_sched *adopt_world(void)
{
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a1", "cpu=8,mem=32g", 4);
    add_agent(s, "a2", "cpu=8,mem=32g", 4);
    return s;
}

/* Re-adopt every session of `from` (as a manager reading its database
 * would) into `to`, with the names the placement reports. */
static void readopt(skv_sched *to, const skv_sched *from, const char *id,
                    const char *req, const sub_opts *o, skv_sched_state st)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_result *pl = NULL;
    SKV_CK_OK(skv_sched_session_placement(&pl, from, id, &e), &e);
    const skv_sched_placement *p = &pl->placements[0];
    skv_sched_adopt_kernel ak[8];
    skv_sched_adopt_share sh[8][8];
    char dev[8][8][8];
    ck_assert_uint_le(p->n_kernels, 8);
    for (size_t k = 0; k < p->n_kernels; k++) {
        const skv_sched_kernel_placement *kp = &p->kernels[k];
        for (size_t i = 0; i < kp->n_devices; i++) {
            /* add_agent devices carry no id: they are named by index */
            snprintf(dev[k][i], sizeof(dev[k][i]), "%u", kp->devices[i].device);
            sh[k][i] = (skv_sched_adopt_share){dev[k][i],
                                               pl->slot_names[kp->devices[i].slot],
                                               kp->devices[i].whole,
                                               kp->devices[i].amount};
        }
        ak[kp->kernel] = (skv_sched_adopt_kernel){kp->agent_id, kp->n_devices, sh[k]};
    }
    int nk = o && o->nk ? o->nk : 1;
    skv_sched_kernel_spec ks[8];
    skv_slots *r = sl(req);
    for (int i = 0; i < nk; i++)
        ks[i] = (skv_sched_kernel_spec){i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.user = "u";
    sp.project = "p";
    sp.domain = "d";
    sp.resource_group = "default";
    sp.n_kernels = (size_t)nk;
    sp.kernels = ks;
    sp.cluster_mode = o ? o->mode : SKV_SCHED_SINGLE_NODE;
    sp.one_kernel_per_agent = o ? o->one_per_agent : false;
    SKV_CK_OK(skv_sched_adopt(to, &sp, ak, (size_t)nk, st, 5, 7, &e), &e);
    skv_slots_free(r);
    skv_sched_result_free(pl);
}

static void same_usage(const skv_sched *a, const skv_sched *b, const char *agent)
{
    const char *slots[] = {"cpu", "mem", "cuda.device", "cuda.shares"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(used_of(a, agent, slots[i]), used_of(b, agent, slots[i]));
}

START_TEST(test_adopt_same_placement)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s1 = adopt_world();
    sub_opts multi = {.nk = 3, .mode = SKV_SCHED_MULTI_NODE};
    submit(s1, "w", "cpu=2,mem=4g,cuda.device=2", NULL, 1);
    submit(s1, "f", "cpu=1,mem=1g,cuda.shares=0.5", NULL, 2);
    submit(s1, "m", "cpu=3,mem=1g,cuda.shares=0.3", &multi, 3);
    skv_sched_result *r = pass(s1, 10);
    ck_assert_uint_eq(r->n_placements, 3);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_mark_started(s1, "w", 11, &e), &e);

    skv_sched *s2 = adopt_world();
    readopt(s2, s1, "w", "cpu=2,mem=4g,cuda.device=2", NULL, SKV_SCHED_RUNNING);
    readopt(s2, s1, "f", "cpu=1,mem=1g,cuda.shares=0.5", NULL, SKV_SCHED_SCHEDULED);
    readopt(s2, s1, "m", "cpu=3,mem=1g,cuda.shares=0.3", &multi, SKV_SCHED_SCHEDULED);
    CHECK(s2);
    same_usage(s1, s2, "a1");
    same_usage(s1, s2, "a2");
    ck_assert_int_eq(state_of(s2, "w"), SKV_SCHED_RUNNING);
    ck_assert_int_eq(state_of(s2, "m"), SKV_SCHED_SCHEDULED);
    skv_slots *u1 = NULL, *u2 = NULL;
    uint32_t na = 0, np = 9;
    SKV_CK_OK(skv_sched_owner_usage(&u1, NULL, NULL, s1, SKV_SCHED_SCOPE_USER, "u", &e), &e);
    SKV_CK_OK(skv_sched_owner_usage(&u2, &na, &np, s2, SKV_SCHED_SCOPE_USER, "u", &e), &e);
    ck_assert_int_eq(skv_slots_get(u1, "cpu"), skv_slots_get(u2, "cpu"));
    ck_assert_int_eq(skv_slots_get(u2, "cpu"), 12000);
    ck_assert_uint_eq(na, 3);
    ck_assert_uint_eq(np, 0);
    skv_slots_free(u1);
    skv_slots_free(u2);
    /* a pass places new work around the adopted sessions exactly as the
     * original scheduler would */
    submit(s1, "n", "cpu=1,cuda.device=1", NULL, 20);
    submit(s2, "n", "cpu=1,cuda.device=1", NULL, 20);
    skv_sched_result *r1 = pass(s1, 21), *r2 = pass(s2, 21);
    ck_assert_uint_eq(r1->n_placements, 1);
    ck_assert_uint_eq(r2->n_placements, 1);
    ck_assert_str_eq(agent_of(r1, "n", 0), agent_of(r2, "n", 0));
    ck_assert_uint_eq(r1->placements[0].kernels[0].devices[0].device,
                      r2->placements[0].kernels[0].devices[0].device);
    skv_sched_result_free(r1);
    skv_sched_result_free(r2);
    /* lifecycle: finish frees, requeue returns it to pending, cancel */
    SKV_CK_OK(skv_sched_mark_finished(s2, "w", false, 30, &e), &e);
    SKV_CK_OK(skv_sched_mark_started(s2, "f", 31, &e), &e);
    SKV_CK_OK(skv_sched_requeue(s2, "m", 32, &e), &e);
    ck_assert_int_eq(state_of(s2, "m"), SKV_SCHED_PENDING);
    SKV_CK_OK(skv_sched_cancel(s2, "f", 33, &e), &e);
    SKV_CK_OK(skv_sched_mark_finished(s2, "n", false, 34, &e), &e);
    CHECK(s2);
    ck_assert_int_eq(used_of(s2, "a1", "cpu") + used_of(s2, "a2", "cpu"), 0);
    ck_assert_int_eq(used_of(s2, "a1", "cuda.shares") + used_of(s2, "a2", "cuda.shares"), 0);
    r = pass(s2, 40);
    ck_assert_uint_eq(r->n_placements, 1);
    skv_sched_result_free(r);
    skv_sched_free(s1);
    skv_sched_free(s2);
}
END_TEST

/* Adopt one single-kernel session with explicit shares. */
static int adopt1(skv_sched *s, const char *id, const char *agent,
                  const char *req, const skv_sched_adopt_share *sh, size_t nsh,
                  skv_error *e)
{
    skv_slots *r = sl(req);
    skv_sched_kernel_spec ks = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.user = "u";
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &ks;
    skv_sched_adopt_kernel k = {agent, nsh, sh};
    int rc = skv_sched_adopt(s, &sp, &k, 1, SKV_SCHED_RUNNING, 1, 2, e);
    skv_slots_free(r);
    return rc;
}

START_TEST(test_adopt_refusals)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = adopt_world();
    skv_sched_adopt_share g0 = {"0", "cuda.device", true, 1000};
    skv_sched_adopt_share g1 = {"1", "cuda.device", true, 1000};
    skv_sched_adopt_share h0 = {"0", "cuda.shares", false, 500};
    SKV_CK_OK(adopt1(s, "ok", "a1", "cpu=6,cuda.device=1", &g0, 1, &e), &e);
    CHECK(s);
    ck_assert_int_eq(used_of(s, "a1", "cpu"), 6000);
    ck_assert_int_eq(used_of(s, "a1", "cuda.device"), 1000);
    /* over capacity: pooled, and a device already taken; nothing changes */
    ck_assert_int_eq(adopt1(s, "x", "a1", "cpu=3,cuda.device=1", &g1, 1, &e), SKV_ENOSPC);
    ck_assert_ptr_nonnull(strstr(e.message, "'a1'"));
    ck_assert_ptr_nonnull(strstr(e.message, "'cpu'"));
    ck_assert_int_eq(adopt1(s, "x", "a1", "cpu=1,cuda.shares=0.5", &h0, 1, &e), SKV_ENOSPC);
    ck_assert_ptr_nonnull(strstr(e.message, "cuda.shares"));
    ck_assert_int_eq(adopt1(s, "x", "a1", "cpu=1,cuda.device=1", &g0, 1, &e), SKV_ENOSPC);
    ck_assert_ptr_nonnull(strstr(e.message, "cuda.device"));
    /* a multi-node gang whose second kernel does not fit: the first is not
     * kept either */
    skv_slots *r = sl("cpu=5");
    skv_sched_kernel_spec ks[2] = {{SKV_SCHED_ROLE_MAIN, r}, {SKV_SCHED_ROLE_SUB, r}};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = "gang";
    sp.resource_group = "default";
    sp.cluster_mode = SKV_SCHED_MULTI_NODE;
    sp.n_kernels = 2;
    sp.kernels = ks;
    skv_sched_adopt_kernel ak[2] = {{"a2", 0, NULL}, {"a1", 0, NULL}};
    ck_assert_int_eq(skv_sched_adopt(s, &sp, ak, 2, SKV_SCHED_RUNNING, 0, 0, &e),
                     SKV_ENOSPC);
    ck_assert_int_eq(used_of(s, "a2", "cpu"), 0);
    ck_assert_int_eq(used_of(s, "a1", "cpu"), 6000);
    ck_assert_int_eq(skv_sched_session_state(&(skv_sched_state){0}, s, "gang", &e),
                     SKV_ENOENT);
    /* mismatched counts, bad state, single-node over two agents */
    ck_assert_int_eq(skv_sched_adopt(s, &sp, ak, 1, SKV_SCHED_RUNNING, 0, 0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_sched_adopt(s, &sp, ak, 2, SKV_SCHED_PENDING, 0, 0, &e),
                     SKV_EINVAL);
    sp.cluster_mode = SKV_SCHED_SINGLE_NODE;
    ck_assert_int_eq(skv_sched_adopt(s, &sp, ak, 2, SKV_SCHED_RUNNING, 0, 0, &e),
                     SKV_EINVAL);
    skv_slots_free(r);
    /* unknown agent, device, slot; duplicate id; shares not matching the
     * request */
    ck_assert_int_eq(adopt1(s, "x", "zz", "cpu=1", NULL, 0, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "zz"));
    skv_sched_adopt_share bad = {"gpu9", "cuda.device", true, 1000};
    ck_assert_int_eq(adopt1(s, "x", "a2", "cuda.device=1", &bad, 1, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "gpu9"));
    bad = (skv_sched_adopt_share){"1", "rocm.device", true, 1000};
    ck_assert_int_eq(adopt1(s, "x", "a2", "cuda.device=1", &bad, 1, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "rocm.device"));
    ck_assert_int_eq(adopt1(s, "ok", "a2", "cpu=1", NULL, 0, &e), SKV_EEXIST);
    ck_assert_int_eq(adopt1(s, "x", "a2", "cuda.device=2", &g1, 1, &e), SKV_EINVAL);
    bad = (skv_sched_adopt_share){"1", "cuda.shares", true, 1000};
    ck_assert_int_eq(adopt1(s, "x", "a2", "cuda.shares=1", &bad, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(adopt1(s, "x", "a2", "", NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sched_adopt(NULL, &sp, ak, 2, SKV_SCHED_RUNNING, 0, 0, &e),
                     SKV_EINVAL);
    sp.version = 9;
    ck_assert_int_eq(skv_sched_adopt(s, &sp, ak, 2, SKV_SCHED_RUNNING, 0, 0, &e),
                     SKV_EVERSION);
    CHECK(s);
    ck_assert_int_eq(used_of(s, "a2", "cpu"), 0);
    ck_assert_int_eq(used_of(s, "a2", "cuda.device"), 0);
    /* adopted then finished: everything is free again */
    SKV_CK_OK(skv_sched_mark_finished(s, "ok", false, 9, &e), &e);
    CHECK(s);
    ck_assert_int_eq(used_of(s, "a1", "cpu"), 0);
    ck_assert_int_eq(used_of(s, "a1", "cuda.device"), 0);
    SKV_CK_OK(adopt1(s, "again", "a1", "cpu=8,cuda.shares=0.5", &h0, 1, &e), &e);
    CHECK(s);
    SKV_CK_OK(skv_sched_agent_lost(s, NULL, "a1", 10, &e), &e);
    ck_assert_int_eq(state_of(s, "again"), SKV_SCHED_LOST);
    CHECK(s);
    skv_sched_free(s);
}
END_TEST

Suite *skv_test_suite_sched(void);
Suite *skv_test_suite_sched(void)
{
    Suite *su = suite_create("sched");
    add_incremental_tcase(su);
    add_room_tcase(su);
    add_rr_tcase(su);
    sched_auto_tcase(su);
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_lifecycle_accounting);
    tcase_add_test(tc, test_agent_lost_update);
    tcase_add_test(tc, test_selectors);
    tcase_add_test(tc, test_set_selector);
    tcase_add_test(tc, test_label_constraints);
    tcase_add_test(tc, test_sequencers);
    tcase_add_test(tc, test_aging);
    tcase_add_test(tc, test_fractional_device_level);
    tcase_add_test(tc, test_same_decision_as_agent_map);
    tcase_add_test(tc, test_constraints_and_reasons);
    tcase_add_test(tc, test_plugin_so);
    tcase_add_test(tc, test_adopt_same_placement);
    tcase_add_test(tc, test_adopt_refusals);
    suite_add_tcase(su, tc);
    return su;
}
