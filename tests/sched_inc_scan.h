/* Suite sched, tcase "incremental": what the incremental pass's fit
 * verdicts cost (src/sched/pass_inc.c, scan). Decisions are the same
 * whether or not a verdict re-scans the agents, so the lockstep tests
 * cannot see a lost shortcut; the number of agents the verdicts looked at
 * in the pass can. The scene: the first and the last agent are reserved
 * for a blocked gang and are the only ones 3-GPU sessions fit; the others
 * fill up in order, one per 1-GPU session. A verdict that re-scanned the
 * agents after each placement looked at about agents x placements of them
 * (4,000 here; 10,000 x 17,000 in bench/sched, where it made the default
 * selector's full pass 20 times slower), and one that restarted the search
 * for a free agent from the first agent, half that.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_INC_SCAN_H
#define SKV_TEST_SCHED_INC_SCAN_H

#include "sched_util.h"

int skv__pass_inc_looked(const skv_sched *s, const char *group, uint64_t *out,
                         skv_error *err);

enum { SC_AGENTS = 64 };

/* A session pinned to one agent. */
static void sc_pinned(skv_sched *s, const char *id, const char *req,
                      const char *agent, int64_t est, int64_t now)
{
    skv_slots *r = sl(req);
    skv_sched_kernel_spec ks = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.user = "u";
    sp.project = "p";
    sp.domain = "d";
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &ks;
    sp.estimated_duration_ms = est;
    sp.n_designated = 1;
    sp.designated_agents = &agent;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_submit(s, &sp, now, &e), &e);
    skv_slots_free(r);
}

/* a0 and a63 keep 3 GPUs free until 100, the others 2 until 1000. The
 * queue: head (2 x 8 GPUs, one per agent: reserves a0 and a63), then for
 * each other agent a<i>: p<i> (1 GPU, pinned to a<i>), x<i> (1 GPU: the
 * default selector packs it onto a<i>, now the fullest), y<i> (3 GPUs: fits
 * only a0 and a63, reserved); last z (3 GPUs, 50 ms: ends before the
 * reservation starts, so it backfills). */
static skv_sched *sc_scene(void)
{
    skv_sched *s = mk_sched("fifo", NULL);
    skv_error e = SKV_ERROR_INIT;
    char id[32], ag[32];
    for (int i = 0; i < SC_AGENTS; i++) {
        bool end = i == 0 || i == SC_AGENTS - 1;
        snprintf(ag, sizeof(ag), "a%d", i);
        add_agent(s, ag, "cpu=64,mem=256g", 8);
        snprintf(id, sizeof(id), "fill%d", i);
        sc_pinned(s, id, end ? "cuda.device=5" : "cuda.device=6", ag,
                  end ? 100 : 1000, 0);
    }
    skv_sched_result *r = pass(s, 0);
    ck_assert_uint_eq(r->n_placements, SC_AGENTS);
    for (size_t i = 0; i < r->n_placements; i++)
        SKV_CK_OK(skv_sched_mark_started(s, r->placements[i].session_id, 0, &e), &e);
    skv_sched_result_free(r);
    sub_opts o = {0};
    o.nk = 2;
    o.mode = SKV_SCHED_MULTI_NODE;
    o.one_per_agent = true;
    submit(s, "head", "cuda.device=8", &o, 1);
    o = (sub_opts){0};
    for (int i = 1; i < SC_AGENTS - 1; i++) {
        snprintf(ag, sizeof(ag), "a%d", i);
        snprintf(id, sizeof(id), "p%d", i);
        sc_pinned(s, id, "cuda.device=1", ag, 0, 1);
        snprintf(id, sizeof(id), "x%d", i);
        o.est = 0;
        submit(s, id, "cuda.device=1", &o, 1);
        snprintf(id, sizeof(id), "y%d", i);
        o.est = i % 3 ? 0 : 500; /* ends after the reservation starts */
        submit(s, id, "cuda.device=3", &o, 1);
    }
    o.est = 50;
    submit(s, "z", "cuda.device=3", &o, 1);
    return s;
}

static skv_sched_result *sc_pass(skv_sched *s, bool full_walk)
{
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.full_walk = full_walk;
    skv_sched_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_pass(&r, s, 10, &po, &e), &e);
    CHECK(s);
    return r;
}

START_TEST(test_inc_scan_resumes)
{
    skv_sched *s[2] = {sc_scene(), sc_scene()};
    skv_sched_result *r[2] = {sc_pass(s[0], true), sc_pass(s[1], false)};
    /* the decisions: every x, then z on a reserved agent; head and the
     * y's wait */
    ck_assert_uint_eq(r[1]->n_placements, 2 * (SC_AGENTS - 2) + 1);
    ck_assert_str_eq(agent_of(r[1], "x1", 0), "a1"); /* the scene holds */
    ck_assert_str_eq(agent_of(r[1], "x62", 0), "a62");
    const char *za = agent_of(r[1], "z", 0);
    ck_assert_msg(za && (!strcmp(za, "a0") || !strcmp(za, "a63")), "z on %s", za);
    ck_assert_ptr_null(agent_of(r[1], "y1", 0));
    ck_assert_int_eq(reason_of(s[1], "head").code, SKV_SCHED_REASON_HAS_RESERVATION);
    ck_assert_uint_eq(r[0]->n_placements, r[1]->n_placements);
    for (size_t i = 0; i < r[0]->n_placements; i++) {
        const skv_sched_placement *a = &r[0]->placements[i], *b = &r[1]->placements[i];
        ck_assert_str_eq(a->session_id, b->session_id);
        ck_assert_str_eq(a->kernels[0].agent_id, b->kernels[0].agent_id);
    }
    /* the cost: each class's scans resume where the last one stopped, and
     * a 3-GPU session that may not backfill needs no scan at all: a few
     * times 64 agents looked at, not 64 x 62 */
    uint64_t looked = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__pass_inc_looked(s[1], "default", &looked, &e), &e);
    ck_assert_uint_gt(looked, SC_AGENTS);        /* the scans ran */
    ck_assert_uint_le(looked, 6 * SC_AGENTS);
    ck_assert_int_eq(skv__pass_inc_looked(s[1], "nope", &looked, &e), SKV_ENOENT);
    for (int k = 0; k < 2; k++) {
        skv_sched_result_free(r[k]);
        skv_sched_free(s[k]);
    }
}
END_TEST

#endif
