/* Suite sched, tcase "room": the hinted selectors (concentrated packs,
 * dispersed spreads) skip agents whose shared room (bucket.c, beside each
 * agent in the free-device index) is below the request's largest shared
 * amount, without trying them (place.c, choose_hinted). Such an agent's
 * trial fails, so the choice must be the plain scan's. Two schedulers get
 * the same seeded operations (fractions of every size, shares spanning
 * devices, whole GPUs, single-node and multi-node gangs, CPU-only work,
 * agents of 0-8 GPUs, finishes); one scans
 * with the skip, one without (skv__sched_room_skip), and every pass must
 * place the same sessions on the same agents and devices.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_ROOM_EQUIV_H
#define SKV_TEST_SCHED_ROOM_EQUIV_H

#include <stdbool.h>

#include "sched_auto.h"
#include "sched_util.h"

extern bool skv__sched_room_skip;

enum { RM_AGENTS = 40, RM_ROUNDS = 400 };

static const char *const rm_shapes[] = {
    "cuda.shares=0.1,cpu=1", "cuda.shares=0.3", "cuda.shares=0.45,mem=2g",
    "cuda.shares=0.7", "cuda.shares=0.9,cpu=2", "cuda.shares=1.5",
    "cuda.shares=2.25", "cuda.device=1,cpu=1", "cuda.device=2",
    "cuda.device=4,cpu=4", "cuda.device=8", "cpu=3,mem=8g"};

static skv_sched *rm_build(const char *sel)
{
    skv_sched *s = mk_sched("fifo", sel);
    static const int gpus[] = {8, 4, 2, 0, 8, 1};
    for (int a = 0; a < RM_AGENTS; a++) {
        char id[16];
        snprintf(id, sizeof(id), "a%02d", a);
        add_agent(s, id, "cpu=24,mem=64g", gpus[a % 6]);
    }
    return s;
}

static void rm_submit(skv_sched **s, int i, uint64_t *rng)
{
    char id[16];
    snprintf(id, sizeof(id), "s%d", i);
    const char *shape = rm_shapes[au_rnd(rng, sizeof(rm_shapes) / sizeof(*rm_shapes))];
    sub_opts o = {0};
    uint32_t g = au_rnd(rng, 10);
    if (g == 0) { /* two kernels on one agent */
        o.nk = 2;
    } else if (g == 1) { /* two kernels, one per agent */
        o.nk = 2;
        o.mode = SKV_SCHED_MULTI_NODE;
        o.one_per_agent = true;
    }
    for (int k = 0; k < 2; k++)
        submit(s[k], id, shape, &o, i);
}

static void rm_run(const char *sel, uint64_t seed)
{
    skv_sched *s[2] = {rm_build(sel), rm_build(sel)};
    static char d[2][16384];
    uint64_t rng = seed;
    long placed = 0;
    int next = 0;
    for (int i = 0; i < RM_ROUNDS; i++) {
        for (int j = 0, n = 1 + (int)au_rnd(&rng, 6); j < n; j++)
            rm_submit(s, next++, &rng);
        for (int k = 0; k < 2; k++) {
            skv__sched_room_skip = k == 0;
            skv_sched_result *r = pass(s[k], i);
            au_digest(r, d[k], sizeof(d[k]));
            placed += k == 0 ? (long)r->n_placements : 0;
            skv_sched_result_free(r);
        }
        skv__sched_room_skip = true;
        ck_assert_msg(strcmp(d[0], d[1]) == 0,
                      "%s round %d: with the skip '%s', plain scan '%s'", sel,
                      i, d[0], d[1]);
        for (int f = 0, n = (int)au_rnd(&rng, 5); f < n; f++) {
            char fid[16];
            snprintf(fid, sizeof(fid), "s%u", au_rnd(&rng, (uint32_t)next));
            for (int k = 0; k < 2; k++) {
                skv_error e = SKV_ERROR_INIT;
                skv_sched_state st; /* finished ones are gone: ENOENT */
                if (skv_sched_session_state(&st, s[k], fid, &e) == 0 &&
                    st == SKV_SCHED_SCHEDULED)
                    SKV_CK_OK(skv_sched_mark_finished(s[k], fid, false, i, &e), &e);
            }
        }
    }
    ck_assert_int_gt(placed, RM_ROUNDS); /* the cluster kept turning over */
    for (int k = 0; k < 2; k++)
        skv_sched_free(s[k]);
}

START_TEST(test_room_skip_same_choice)
{
    static const char *const sels[] = {"concentrated", "dispersed"};
    rm_run(sels[_i / 2], 0x2545f4914f6cdd1dull + (uint64_t)_i * 7919);
}
END_TEST

static void add_room_tcase(Suite *su)
{
    TCase *tc = tcase_create("room");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_room_skip_same_choice, 0, 4);
    suite_add_tcase(su, tc);
}

#endif
