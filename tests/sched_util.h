/* Helpers shared by the scheduler suites (test_sched*.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_SCHED_UTIL_H
#define SKV_TEST_SCHED_UTIL_H

#include <stdio.h>
#include <string.h>

#include "skv_test.h"
#include "sokovan/sched.h"

#define CHECK(s)                                                             \
    do {                                                                     \
        skv_error ce_ = SKV_ERROR_INIT;                                      \
        int crc_ = skv_sched_check((s), &ce_);                               \
        ck_assert_msg(crc_ == 0, "accounting check: %s", ce_.message);       \
    } while (0)

static inline skv_slots *sl(const char *text)
{
    skv_slots *v = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_slots_parse(&v, text, NULL, &e);
    ck_assert_msg(rc == 0, "parse '%s': %s", text, e.message);
    return v;
}

static inline skv_sched *mk_sched(const char *seq, const char *sel)
{
    skv_sched *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_new(&s, NULL, &e), &e);
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.sequencer = seq;
    go.selector = sel;
    SKV_CK_OK(skv_sched_group_add(s, "default", &go, &e), &e);
    return s;
}

/* An agent with pooled slots `cap` and ngpu GPUs (cuda.device whole,
 * cuda.shares shared, 1.0 each). */
static inline void add_agent_g(skv_sched *s, const char *id, const char *group,
                               const char *cap, int ngpu, const char *model)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_device_spec dev[64];
    for (int i = 0; i < ngpu; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 0};
    skv_slots *c = sl(cap);
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = id;
    a.resource_group = group;
    a.architecture = "x86_64";
    a.gpu_model = model;
    a.capacity = c;
    a.n_devices = (size_t)ngpu;
    a.devices = dev;
    SKV_CK_OK(skv_sched_agent_add(s, &a, &e), &e);
    skv_slots_free(c);
}

static inline void add_agent(skv_sched *s, const char *id, const char *cap,
                             int ngpu)
{
    add_agent_g(s, id, "default", cap, ngpu, "A100");
}

typedef struct sub_opts {
    const char *user, *project, *domain, *group;
    int32_t prio;
    int nk;
    skv_sched_cluster_mode mode;
    bool one_per_agent, preemptible;
    int64_t est;
} sub_opts;

static inline int submit_x(skv_sched *s, const char *id, const char *req,
                           const sub_opts *o, int64_t now, skv_error *e)
{
    int nk = o && o->nk ? o->nk : 1;
    skv_sched_kernel_spec ks[64];
    skv_slots *r = sl(req);
    for (int i = 0; i < nk; i++)
        ks[i] = (skv_sched_kernel_spec){i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.user = o && o->user ? o->user : "u";
    sp.project = o && o->project ? o->project : "p";
    sp.domain = o && o->domain ? o->domain : "d";
    sp.resource_group = o && o->group ? o->group : "default";
    sp.priority = o ? o->prio : 0;
    sp.n_kernels = (size_t)nk;
    sp.kernels = ks;
    sp.cluster_mode = o ? o->mode : SKV_SCHED_SINGLE_NODE;
    sp.one_kernel_per_agent = o ? o->one_per_agent : false;
    sp.preemptible = o ? o->preemptible : false;
    sp.estimated_duration_ms = o ? o->est : 0;
    int rc = skv_sched_submit(s, &sp, now, e);
    skv_slots_free(r);
    return rc;
}

static inline void submit(skv_sched *s, const char *id, const char *req,
                          const sub_opts *o, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(submit_x(s, id, req, o, now, &e), &e);
}

static inline skv_sched_result *pass(skv_sched *s, int64_t now)
{
    skv_sched_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_pass(&r, s, now, NULL, &e), &e);
    CHECK(s);
    return r;
}

static inline skv_sched_state state_of(const skv_sched *s, const char *id)
{
    skv_sched_state st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_session_state(&st, s, id, &e), &e);
    return st;
}

/* Agent of kernel k of a placed session. */
static inline const char *agent_of(const skv_sched_result *r, const char *id,
                                   uint32_t k)
{
    for (size_t i = 0; i < r->n_placements; i++)
        if (strcmp(r->placements[i].session_id, id) == 0)
            return r->placements[i].kernels[k].agent_id;
    return NULL;
}

static inline skv_qty used_of(const skv_sched *s, const char *agent,
                              const char *slot)
{
    skv_slots *u = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_agent_usage(&u, NULL, s, agent, &e), &e);
    skv_qty q = skv_slots_get(u, slot);
    skv_slots_free(u);
    return q;
}

static inline skv_sched_reason reason_of(const skv_sched *s, const char *id)
{
    skv_sched_reason r;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_session_reason(&r, s, id, &e), &e);
    return r;
}

#endif
