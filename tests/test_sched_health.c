/* Devices out of service (skv_sched_agent_set_device_health): a free
 * device takes no placement at once, a busy one as soon as its holder
 * leaves (before the next pass), a shared one takes no further share,
 * capacity leaves it out, the state survives an agent update, healthy
 * again gives it back; skv_sched_check holds throughout. Bad input.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sched_util.h"

static skv_qty gpus_cap(skv_sched *s, const char *agent)
{
    skv_slots *cap = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_agent_usage(NULL, &cap, s, agent, &e), &e);
    skv_qty q = skv_slots_get(cap, "cuda.device");
    skv_slots_free(cap);
    return q;
}

static void health(skv_sched *s, const char *dev, bool ok)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_agent_set_device_health(s, "a1", dev, ok, &e), &e);
    CHECK(s);
}

static uint32_t placed(skv_sched *s, int64_t now)
{
    skv_sched_result *r = pass(s, now);
    uint32_t n = (uint32_t)r->n_placements;
    skv_sched_result_free(r);
    return n;
}

START_TEST(test_free_device_down_and_back)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a1", "cpu=8,mem=8g", 2);
    ck_assert_int_eq(skv_sched_agent_set_device_health(s, "a1", "7", false,
                                                       &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_agent_set_device_health(s, "zz", "0", false,
                                                       &e), SKV_ENOENT);
    ck_assert_int_eq(skv_sched_agent_set_device_health(s, "a1", NULL, false,
                                                       &e), SKV_EINVAL);
    health(s, "1", false);
    ck_assert_int_eq(gpus_cap(s, "a1"), 1000);
    submit(s, "two", "cpu=1,cuda.device=2", NULL, 1);
    ck_assert_uint_eq(placed(s, 2), 0);               /* one GPU is down */
    submit(s, "half", "cpu=1,cuda.shares=0.5", NULL, 3);
    skv_sched_result *r = pass(s, 4);
    ck_assert_uint_eq(r->n_placements, 1);             /* on GPU 0 only */
    ck_assert_str_eq(r->placements[0].session_id, "half");
    ck_assert_uint_eq(r->placements[0].kernels[0].devices[0].device, 0);
    skv_sched_result_free(r);
    SKV_CK_OK(skv_sched_cancel(s, "half", 5, &e), &e);
    health(s, "1", true);
    ck_assert_int_eq(gpus_cap(s, "a1"), 2000);
    ck_assert_uint_eq(placed(s, 6), 1);                /* "two" fits again */
    skv_sched_free(s);
}
END_TEST

/* Down while held whole: the holder keeps it; released, it is held by the
 * scheduler before any pass; an update keeps it down. */
START_TEST(test_busy_device_down)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a1", "cpu=8,mem=8g", 2);
    submit(s, "both", "cpu=1,cuda.device=2", NULL, 1);
    ck_assert_uint_eq(placed(s, 2), 1);
    health(s, "0", false);
    ck_assert_int_eq(gpus_cap(s, "a1"), 1000);
    SKV_CK_OK(skv_sched_cancel(s, "both", 3, &e), &e);
    CHECK(s);
    submit(s, "again", "cpu=1,cuda.device=2", NULL, 4);
    submit(s, "one", "cpu=1,cuda.device=1", NULL, 5);
    skv_sched_result *r = pass(s, 6);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_str_eq(r->placements[0].session_id, "one");
    ck_assert_uint_eq(r->placements[0].kernels[0].devices[0].device, 1);
    skv_sched_result_free(r);
    /* the agent registers again (same devices): still down */
    skv_sched_device_spec dev[2] = {{NULL, "cuda.device", "cuda.shares", 0},
                                    {NULL, "cuda.device", "cuda.shares", 0}};
    skv_slots *c = sl("cpu=8,mem=8g");
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = "a1";
    a.resource_group = "default";
    a.capacity = c;
    a.n_devices = 2;
    a.devices = dev;
    SKV_CK_OK(skv_sched_agent_update(s, &a, &e), &e);
    skv_slots_free(c);
    CHECK(s);
    ck_assert_int_eq(gpus_cap(s, "a1"), 1000);
    SKV_CK_OK(skv_sched_cancel(s, "one", 7, &e), &e);
    ck_assert_uint_eq(placed(s, 8), 0);                /* "again": no */
    health(s, "0", true);
    ck_assert_uint_eq(placed(s, 9), 1);
    skv_sched_free(s);
}
END_TEST

/* Down while shared: no further share lands on it, even as its users
 * leave one by one; free, it is held; back, shares fit again. */
START_TEST(test_shared_device_down)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = mk_sched(NULL, NULL);
    add_agent(s, "a1", "cpu=8,mem=8g", 1);
    submit(s, "q1", "cpu=1,cuda.shares=0.25", NULL, 1);
    submit(s, "q2", "cpu=1,cuda.shares=0.25", NULL, 2);
    ck_assert_uint_eq(placed(s, 3), 2);
    health(s, "0", false);
    submit(s, "q3", "cpu=1,cuda.shares=0.25", NULL, 4);
    ck_assert_uint_eq(placed(s, 5), 0);
    SKV_CK_OK(skv_sched_cancel(s, "q1", 6, &e), &e);
    CHECK(s);
    ck_assert_uint_eq(placed(s, 7), 0);
    SKV_CK_OK(skv_sched_cancel(s, "q2", 8, &e), &e);
    CHECK(s);
    ck_assert_uint_eq(placed(s, 9), 0);
    ck_assert_int_eq(gpus_cap(s, "a1"), 0);
    health(s, "0", true);
    ck_assert_uint_eq(placed(s, 10), 1);
    skv_sched_free(s);
}
END_TEST

Suite *skv_test_suite_sched_health(void);
Suite *skv_test_suite_sched_health(void)
{
    Suite *s = suite_create("sched_health");
    TCase *tc = tcase_create("health");
    tcase_add_test(tc, test_free_device_down_and_back);
    tcase_add_test(tc, test_busy_device_down);
    tcase_add_test(tc, test_shared_device_down);
    suite_add_tcase(s, tc);
    return s;
}
