/* Suite sim, tcase "trace": strict FIFO, --reservations, and the
 * incremental pass against the full walk on job-trace replays (the
 * visible Philly subset on 10 DGX-2-shaped nodes, and a generated trace).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SIM_TRACE_MODES_H
#define SKV_TEST_SIM_TRACE_MODES_H

#include <unistd.h>

#include "skv_test.h"
#include "sokovan/sim.h"

/* 1 node of 16 GPUs. a: t=0, 8 GPUs, 100 s. b: t=1, 16 GPUs, 100 s (waits
 * for a). c: t=2, 4 GPUs, 10 s: fits beside a and ends before b could
 * start. d: t=3, 4 GPUs, 1000 s: fits beside a and c but would delay b. */
static const char trace_small[] =
    "submit,duration,gpus,vc\n0,100,8,x\n1,100,16,y\n2,10,4,x\n3,1000,4,y\n";

static skv_sim_jobs_result *trace_run(const skv_sim_jobs *j, bool strict,
                                      uint32_t resv, bool full)
{
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    o.n_nodes = 1;
    o.shape = (skv_sim_node_shape){16000, (skv_qty)64 << 30, 16};
    o.strict_fifo = strict;
    o.max_reservations = resv;
    o.full_walk = full;
    skv_sim_jobs_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sim_jobs_run(&r, j, &o, &e), &e);
    return r;
}

START_TEST(test_trace_strict_fifo)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sim_jobs *j = NULL;
    SKV_CK_OK(skv_sim_jobs_parse(&j, trace_small, &e), &e);
    /* strict: a 0-100, b 100-200, c 200-210, d 200-1200: waits 0, 99,
     * 198, 197 */
    skv_sim_jobs_result *r = trace_run(j, true, 1, false);
    ck_assert_uint_eq(r->n_completed, 4);
    ck_assert_double_eq_tol(r->queue_mean_s, (99.0 + 198 + 197) / 4, 1e-9);
    ck_assert_double_eq_tol(r->queue_p99_s, 198.0, 1e-9);
    ck_assert_double_eq_tol(r->makespan_s, 1200.0, 1e-9);
    skv_sim_jobs_result_free(r);
    /* FIFO + one reservation: c backfills at 2 (ends 12 < 100); d may
     * not (it would end after b's reserved start): a, c, then b 100-200,
     * d 200: waits 0, 99, 0, 197 */
    r = trace_run(j, false, 1, false);
    ck_assert_double_eq_tol(r->queue_mean_s, (99.0 + 197) / 4, 1e-9);
    ck_assert_double_eq_tol(r->makespan_s, 1200.0, 1e-9);
    skv_sim_jobs_result_free(r);
    /* no reservation (greedy): d starts at 3 and b waits for it: b
     * 1003-1103; waits 0, 1002, 0, 0 */
    r = trace_run(j, false, 0, false);
    ck_assert_double_eq_tol(r->queue_mean_s, 1002.0 / 4, 1e-9);
    ck_assert_double_eq_tol(r->queue_p99_s, 1002.0, 1e-9);
    ck_assert_double_eq_tol(r->makespan_s, 1103.0, 1e-9);
    skv_sim_jobs_result_free(r);
    /* options of version 1 still work (no strict mode, no full walk) */
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    o.version = 1;
    o.n_nodes = 1;
    o.shape = (skv_sim_node_shape){16000, (skv_qty)64 << 30, 16};
    SKV_CK_OK(skv_sim_jobs_run(&r, j, &o, &e), &e);
    ck_assert_double_eq_tol(r->queue_mean_s, (99.0 + 197) / 4, 1e-9);
    skv_sim_jobs_result_free(r);
    o.version = 3;
    r = (skv_sim_jobs_result *)0x1;
    ck_assert_int_eq(skv_sim_jobs_run(&r, j, &o, &e), SKV_EVERSION);
    ck_assert_ptr_eq(r, (skv_sim_jobs_result *)0x1);
    skv_sim_jobs_free(j);
}
END_TEST

static void trace_same(const skv_sim_jobs_result *a, const skv_sim_jobs_result *b)
{
    ck_assert_uint_eq(a->n_decisions, b->n_decisions);
    ck_assert_uint_eq(a->n_passes, b->n_passes);
    ck_assert_msg(a->decisions_digest == b->decisions_digest,
                  "decisions differ: digest %016llx (full walk) vs %016llx",
                  (unsigned long long)a->decisions_digest,
                  (unsigned long long)b->decisions_digest);
    ck_assert_double_eq(a->queue_mean_s, b->queue_mean_s);
    ck_assert_double_eq(a->queue_p99_s, b->queue_p99_s);
    ck_assert_double_eq(a->utilization, b->utilization);
}

/* Replays with the incremental pass and with the full walk place every
 * job at the same time on the same agents and devices. */
static void trace_compare(const skv_sim_jobs *j, skv_sim_jobs_options *o,
                          const char *seq, uint32_t resv)
{
    skv_sim_jobs_result *r[2] = {NULL, NULL};
    skv_error e = SKV_ERROR_INIT;
    o->sequencer = seq;
    o->max_reservations = resv;
    for (int k = 0; k < 2; k++) {
        o->full_walk = k == 0;
        SKV_CK_OK(skv_sim_jobs_run(&r[k], j, o, &e), &e);
    }
    ck_assert_uint_gt(r[0]->n_decisions, 0);
    trace_same(r[0], r[1]);
    skv_sim_jobs_result_free(r[0]);
    skv_sim_jobs_result_free(r[1]);
}

START_TEST(test_trace_incremental_philly)
{
    char jobs[4096], xml[4096];
    skv_test_data_path(jobs, sizeof(jobs), "traces/philly/philly_vc_subset.csv");
    skv_test_data_path(xml, sizeof(xml), "topologies/nvidia-dgx2.xml");
    if (access(jobs, R_OK) != 0 || access(xml, R_OK) != 0) {
        printf("SKIP test_trace_incremental_philly: %s or %s not readable\n",
               jobs, xml);
        return;
    }
    skv_error e = SKV_ERROR_INIT;
    skv_sim_jobs *j = NULL;
    SKV_CK_OK(skv_sim_jobs_load(&j, jobs, &e), &e);
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    SKV_CK_OK(skv_sim_node_shape_from_xml(&o.shape, xml, &e), &e);
    o.n_nodes = 10;
    o.max_jobs = 4000; /* the queue grows to hundreds of jobs */
    trace_compare(j, &o, "fifo", 1);
    trace_compare(j, &o, "fifo", 0);
    trace_compare(j, &o, "fifo", 3);
    trace_compare(j, &o, "lifo", 1);
    trace_compare(j, &o, "drf", 1);
    trace_compare(j, &o, "fairshare", 1);
    skv_sim_jobs_free(j);
}
END_TEST

/* A generated trace: gangs over several nodes, jobs of every size,
 * durations from 1 s to a day, four owners, bursts at one instant. */
START_TEST(test_trace_incremental_generated)
{
    size_t cap = 1 << 20, len = 0;
    char *csv = malloc(cap);
    ck_assert_ptr_nonnull(csv);
    len += (size_t)snprintf(csv, cap, "submit,duration,gpus,vc\n");
    uint64_t x = 0x2545F4914F6CDD1Dull + (uint64_t)_i;
    int64_t t = 0;
    for (int i = 0; i < 1200; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        static const int sizes[] = {1, 1, 1, 2, 2, 4, 8, 8, 12, 16, 24, 32, 40};
        int g = sizes[x % 13];
        int64_t dur = 1 + (int64_t)((x >> 8) % (x % 3 ? 3600 : 86400));
        t += (x >> 20) % 4 == 0 ? 0 : (int64_t)((x >> 24) % 900);
        len += (size_t)snprintf(csv + len, cap - len, "%lld,%lld,%d,vc%d\n",
                                (long long)t, (long long)dur, g, (int)((x >> 40) % 4));
    }
    skv_error e = SKV_ERROR_INIT;
    skv_sim_jobs *j = NULL;
    SKV_CK_OK(skv_sim_jobs_parse(&j, csv, &e), &e);
    free(csv);
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    o.n_nodes = 4;
    o.shape = (skv_sim_node_shape){64000, (skv_qty)512 << 30, 16};
    o.cpu_per_gpu = 2000;
    trace_compare(j, &o, "fifo", 1);
    trace_compare(j, &o, "fifo", 2);
    trace_compare(j, &o, "priority", 0);
    trace_compare(j, &o, "drf", 2);
    o.policy = "dispersed";
    trace_compare(j, &o, "fifo", 1);
    skv_sim_jobs_free(j);
}
END_TEST

/* The program's new flags refuse what they cannot mean. */
START_TEST(test_trace_cli_args)
{
    static const char *const bad[] = {
        "--strict-fifo --sequencer drf", "--strict-fifo --reservations 2",
        "--reservations -1", "--reservations 1.5", "--reservations 1e12",
        "--reservations x"};
    char cmd[8192], xml[4096], out[256];
    skv_test_data_path(xml, sizeof(xml), "topologies/nvidia-dgx2.xml");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-sim trace --jobs /dev/null "
                 "--cluster '1 nodes like %s' %s >/dev/null 2>&1; echo rc=$?",
                 skv_test_build_dir(), xml, bad[i]);
        skv_test_sh_output(cmd, out, sizeof(out));
        ck_assert_msg(strcmp(out, "rc=2\n") == 0, "%s: %s", bad[i], out);
    }
}
END_TEST

static void add_trace_tcase(Suite *su)
{
    TCase *tc = tcase_create("trace");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_trace_strict_fifo);
    tcase_add_test(tc, test_trace_cli_args);
    tcase_add_test(tc, test_trace_incremental_philly);
    tcase_add_loop_test(tc, test_trace_incremental_generated, 0, 2);
    suite_add_tcase(su, tc);
}

#endif
