/* Suite sched, tcase "rr_walk": roundrobin's choice without scoring the
 * group. place.c (rr_choose) walks from the selector's cursor and stops at
 * the first agent that fits (with a layout, at the first few for the
 * topology's re-rank); the plain scan scores every agent by its distance
 * after the cursor. Two schedulers get the same seeded operations: sessions
 * of mixed sizes (fractions, whole GPUs of 1-4 with and without layouts,
 * CPU-only work, single-node and one-per-agent multi-node gangs, work
 * estimated to be short for backfill), agents joining with 0-8 GPUs,
 * leaving idle, lost with their sessions, drained and undrained,
 * finishes; one walks, one scans (skv__sched_rr_walk), and every pass must
 * place the same sessions on the same agents and devices, and leave the
 * same reasons on what stays pending.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_RR_EQUIV_H
#define SKV_TEST_SCHED_RR_EQUIV_H

#include <stdbool.h>

#include "sched_auto.h"
#include "sched_util.h"

extern bool skv__sched_rr_walk;

enum { RR_AGENTS = 48, RR_ROUNDS = 300 };

static const char *const rr_shapes[] = {
    "cuda.shares=0.25,cpu=1", "cuda.shares=0.5,mem=2g", "cuda.shares=0.9",
    "cuda.shares=1.5", "cuda.device=1,cpu=1", "cuda.device=2",
    "cuda.device=4,cpu=4", "cpu=2,mem=4g", "cpu=20,mem=48g", "cpu=1"};

/* Agent n: a GPU count and a layout (two NUMA nodes) on every third. */
static void rr_add(skv_sched *s, int n)
{
    static const int gpus[] = {8, 4, 2, 0, 8, 1, 4};
    int ng = gpus[n % 7];
    char id[16];
    snprintf(id, sizeof(id), "a%03d", n);
    skv_error e = SKV_ERROR_INIT;
    skv_sched_device_spec dev[8];
    int32_t numa[8];
    for (int i = 0; i < ng; i++) {
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 0};
        numa[i] = i * 2 / (ng ? ng : 1);
    }
    skv_sched_agent_topology t = {numa, NULL, NULL};
    skv_slots *c = sl(n % 2 ? "cpu=24,mem=64g" : "cpu=48,mem=128g");
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = id;
    a.resource_group = "default";
    a.architecture = "x86_64";
    a.gpu_model = "A100";
    a.capacity = c;
    a.n_devices = (size_t)ng;
    a.devices = dev;
    a.topology = ng > 1 && n % 3 == 0 ? &t : NULL;
    SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    skv_slots_free(c);
}

static void rr_submit(skv_sched **s, int i, uint64_t *rng)
{
    char id[16];
    snprintf(id, sizeof(id), "s%d", i);
    const char *shape = rr_shapes[au_rnd(rng, sizeof(rr_shapes) / sizeof(*rr_shapes))];
    sub_opts o = {0};
    uint32_t g = au_rnd(rng, 10);
    if (g == 0) {
        o.nk = 2;
    } else if (g <= 2) {
        o.nk = 2 + (int)au_rnd(rng, 2);
        o.mode = SKV_SCHED_MULTI_NODE;
        o.one_per_agent = g == 1;
    }
    o.est = au_rnd(rng, 3) == 0 ? 1 + (int64_t)au_rnd(rng, 50) : 0;
    for (int k = 0; k < 2; k++)
        submit(s[k], id, shape, &o, i);
}

/* The same change to both; both must answer it the same. */
static void rr_churn(skv_sched **s, int round, int *nagents, uint64_t *rng)
{
    char id[16];
    snprintf(id, sizeof(id), "a%03d", (int)au_rnd(rng, (uint32_t)*nagents));
    uint32_t what = au_rnd(rng, 8);
    if (what == 0) {
        for (int k = 0; k < 2; k++)
            rr_add(s[k], *nagents);
        ++*nagents;
        return;
    }
    int rc[2];
    for (int k = 0; k < 2; k++) {
        skv_error e = SKV_ERROR_INIT;
        rc[k] = what == 1   ? skv_sched_agent_remove(s[k], id, &e)
                : what == 2 ? skv_sched_agent_lost(s[k], NULL, id, round, &e)
                : what <= 4 ? skv_sched_agent_set_schedulable(s[k], id, what == 4, &e)
                            : 0;
    }
    ck_assert_int_eq(rc[0], rc[1]);
}

static void rr_finish(skv_sched **s, int round, int next, uint64_t *rng)
{
    for (int f = 0, n = (int)au_rnd(rng, 5); f < n; f++) {
        char fid[16];
        snprintf(fid, sizeof(fid), "s%u", au_rnd(rng, (uint32_t)next));
        for (int k = 0; k < 2; k++) {
            skv_error e = SKV_ERROR_INIT;
            skv_sched_state st; /* finished ones are gone: ENOENT */
            if (skv_sched_session_state(&st, s[k], fid, &e) == 0 &&
                st == SKV_SCHED_SCHEDULED)
                SKV_CK_OK(skv_sched_mark_finished(s[k], fid, false, round, &e), &e);
        }
    }
}

/* Every pending session's reason (code, reservation holder, candidates),
 * in submit order. */
static void rr_reasons(skv_sched *s, int next, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < next && len < n; i++) {
        char id[16];
        snprintf(id, sizeof(id), "s%d", i);
        if (state_of(s, id) != SKV_SCHED_PENDING)
            continue;
        skv_sched_reason r = reason_of(s, id);
        len += (size_t)snprintf(buf + len, n - len, "%s:%d:%s:%u,", id, (int)r.code,
                                r.detail ? r.detail : "", r.agents_candidate);
    }
}

static void rr_run(uint64_t seed, int rounds)
{
    skv_sched *s[2] = {mk_sched("fifo", "roundrobin"), mk_sched("fifo", "roundrobin")};
    int nagents = 0;
    for (; nagents < RR_AGENTS; nagents++)
        for (int k = 0; k < 2; k++)
            rr_add(s[k], nagents);
    static char d[2][16384], rs[2][65536];
    uint64_t rng = seed;
    long placed = 0;
    int next = 0;
    for (int i = 0; i < rounds; i++) {
        for (int j = 0, n = 1 + (int)au_rnd(&rng, 8); j < n; j++)
            rr_submit(s, next++, &rng);
        for (int k = 0; k < 2; k++) {
            skv__sched_rr_walk = k == 0;
            skv_sched_result *r = pass(s[k], i);
            au_digest(r, d[k], sizeof(d[k]));
            placed += k == 0 ? (long)r->n_placements : 0;
            skv_sched_result_free(r);
            rr_reasons(s[k], next, rs[k], sizeof(rs[k]));
        }
        skv__sched_rr_walk = true;
        ck_assert_msg(strcmp(d[0], d[1]) == 0,
                      "round %d: walking '%s', plain scan '%s'", i, d[0], d[1]);
        ck_assert_msg(strcmp(rs[0], rs[1]) == 0, "round %d: reasons '%s' vs '%s'",
                      i, rs[0], rs[1]);
        rr_finish(s, i, next, &rng);
        for (int c = 0, n = (int)au_rnd(&rng, 3); c < n; c++)
            rr_churn(s, i, &nagents, &rng);
    }
    ck_assert_int_gt(placed, rounds); /* the cluster kept turning over */
    for (int k = 0; k < 2; k++)
        skv_sched_free(s[k]);
}

START_TEST(test_rr_walk_same_choice)
{
    rr_run(0x9e3779b97f4a7c15ull + (uint64_t)_i * 104729, RR_ROUNDS);
}
END_TEST

static void add_rr_tcase(Suite *su)
{
    TCase *tc = tcase_create("rr_walk");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_rr_walk_same_choice, 0, 4);
    suite_add_tcase(su, tc);
}

#endif
