/* bench/bindings: the C side of the Python-vs-C overhead benchmark
 * (bench/bindings/bench.py drives the same workload through the Python
 * binding and runs this program for the comparison).
 *
 *   bench_bindings [FITS_CALLS] [AGENTS] [PENDING]
 *       (default 2,000,000 / 10,000 / 100,000)
 *
 * 1. skv_slots_fits calls per second ("cpu=2,mem=8g" into
 *    "cpu=64,mem=512g").
 * 2. One scheduler pass over PENDING sessions on AGENTS agents of 8 GPUs,
 *    the workload of session_request() below (bench.py builds the same).
 * Prints one JSON line.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sokovan.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const skv_error *e)
{
    fprintf(stderr, "bench/bindings: %s: %s\n", what, e ? e->message : "");
    exit(1);
}

static skv_slots *parse(const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *v = NULL;
    if (skv_slots_parse(&v, text, NULL, &e))
        die(text, &e);
    return v;
}

static double fits_per_s(long n)
{
    skv_slots *req = parse("cpu=2,mem=8g"), *cap = parse("cpu=64,mem=512g");
    volatile long sink = 0;
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        sink += skv_slots_fits(req, cap);
    double dt = now_s() - t0;
    skv_slots_free(req);
    skv_slots_free(cap);
    if (sink != n)
        die("fits gave 0", NULL);
    return (double)n / dt;
}

/* Session i's request; bench.py's session_request() is the same table. */
static const char *session_request(long i)
{
    static const char *const mix[10] = {
        "cuda.shares=0.5,cpu=1,mem=4g", "cuda.shares=0.5,cpu=1,mem=4g",
        "cuda.shares=0.25,cpu=1,mem=2g", "cuda.shares=0.25,cpu=1,mem=2g",
        "cuda.device=1,cpu=4,mem=16g", "cuda.device=2,cpu=8,mem=32g",
        "cuda.device=1,cpu=4,mem=16g", "cuda.device=4,cpu=16,mem=64g",
        "cuda.device=8,cpu=32,mem=256g", "cpu=2,mem=8g"};
    return mix[i % 10];
}

static void add_agents(skv_sched *s, long agents)
{
    skv_error e = SKV_ERROR_INIT;
    static const char *const ids[8] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    skv_sched_device_spec dev[8];
    for (int d = 0; d < 8; d++)
        dev[d] = (skv_sched_device_spec){ids[d], "cuda.device", "cuda.shares", 0};
    skv_slots *cap = parse("cpu=64,mem=512g");
    for (long i = 0; i < agents; i++) {
        char id[32];
        snprintf(id, sizeof(id), "a%ld", i);
        skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
        a.id = id;
        a.resource_group = "g";
        a.capacity = cap;
        a.n_devices = 8;
        a.devices = dev;
        if (skv_sched_agent_add(s, &a, &e))
            die("agent", &e);
    }
    skv_slots_free(cap);
}

static void submit_all(skv_sched *s, long pending)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req[10];
    for (int k = 0; k < 10; k++)
        req[k] = parse(session_request(k));
    for (long i = 0; i < pending; i++) {
        char id[32];
        snprintf(id, sizeof(id), "s%ld", i);
        skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req[i % 10]};
        skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
        sp.id = id;
        sp.resource_group = "g";
        sp.n_kernels = 1;
        sp.kernels = &k;
        if (skv_sched_submit(s, &sp, 0, &e))
            die("submit", &e);
    }
    for (int k = 0; k < 10; k++)
        skv_slots_free(req[k]);
}

int main(int argc, char **argv)
{
    long fits_n = argc > 1 ? atol(argv[1]) : 2000000;
    long agents = argc > 2 ? atol(argv[2]) : 10000;
    long pending = argc > 3 ? atol(argv[3]) : 100000;
    if (fits_n < 1 || agents < 1 || pending < 1) {
        fprintf(stderr, "usage: bench_bindings [FITS_CALLS] [AGENTS] [PENDING]\n");
        return 2;
    }
    double fps = fits_per_s(fits_n);
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    if (skv_sched_new(&s, NULL, &e) || skv_sched_group_add(s, "g", NULL, &e))
        die("scheduler", &e);
    double t0 = now_s();
    add_agents(s, agents);
    double t_agents = now_s() - t0;
    t0 = now_s();
    submit_all(s, pending);
    double t_submit = now_s() - t0;
    skv_sched_result *r = NULL;
    t0 = now_s();
    if (skv_sched_pass(&r, s, 1, NULL, &e))
        die("pass", &e);
    double t_pass = now_s() - t0;
    printf("{\"side\":\"c\",\"fits_per_s\":%.0f,\"agents\":%ld,\"pending\":%ld,"
           "\"agents_s\":%.4f,\"submit_s\":%.4f,\"pass_s\":%.4f,\"placed\":%zu,"
           "\"considered\":%zu}\n", fps, agents, pending, t_agents, t_submit,
           t_pass, r->n_placements, r->n_considered);
    skv_sched_result_free(r);
    skv_sched_free(s);
    return 0;
}
