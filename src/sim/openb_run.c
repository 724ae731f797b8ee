/* The FGD experiment on an openb trace, through the real scheduler.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "sim_int.h"
#include "../sched/selector_frag.h"

typedef struct ob_run {
    const skv_sim_openb *w;
    skv_sched *s;
    uint32_t *order;           /* pod index of each event */
    size_t n;
    skv_qty *arrived, *allocated;
    size_t placed, dropped;
    uint64_t *trace;           /* per event: where it went (optional) */
    size_t ntrace;
} ob_run;

/* Every pod once in seeded random order (Fisher-Yates), then uniform draws
 * with replacement until the demand passes pct% of capacity. */
static int build_order(ob_run *r, uint64_t seed, uint32_t pct, skv_error *err)
{
    const skv_sim_openb *w = r->w;
    uint64_t rng = seed;
    size_t cap = w->npods * 2 + 16;
    r->order = skv__calloc(cap, sizeof(*r->order));
    if (!r->order)
        return skv__err(err, SKV_ENOMEM, "openb: out of memory");
    skv_qty demand = 0;
    for (size_t i = 0; i < w->npods; i++) {
        r->order[i] = (uint32_t)i;
        demand += skv__ob_demand(&w->pods[i]);
    }
    for (size_t i = w->npods; i > 1; i--) {
        size_t j = (size_t)skv__rng_below(&rng, i);
        uint32_t t = r->order[i - 1];
        r->order[i - 1] = r->order[j];
        r->order[j] = t;
    }
    r->n = w->npods;
    if (demand == 0 && w->npods)   /* CPU-only trace: one pass, no resampling */
        return 0;
    while (demand * 100 <= w->capacity * (skv_qty)pct) {
        if (r->n == cap) {
            uint32_t *no = skv__reallocarray(r->order, cap * 2, sizeof(*no));
            if (!no)
                return skv__err(err, SKV_ENOMEM, "openb: out of memory");
            r->order = no;
            cap *= 2;
        }
        uint32_t p = (uint32_t)skv__rng_below(&rng, w->npods);
        r->order[r->n++] = p;
        demand += skv__ob_demand(&w->pods[p]);
    }
    return 0;
}

static int add_nodes(ob_run *r, skv_error *err)
{
    const skv_sim_openb *w = r->w;
    for (size_t i = 0; i < w->nnodes; i++) {
        const skv__ob_node *n = &w->nodes[i];
        int rc = skv__sim_add_node(r->s, n->name, n->cpu, n->mem, n->gpus,
                                   n->model >= 0 ? w->models[n->model] : NULL,
                                   err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int submit(ob_run *r, const skv__ob_pod *p, const char *id, int64_t now,
                  skv_error *err)
{
    const skv_sim_openb *w = r->w;
    const char *models[64];
    size_t nm = 0;
    if (!p->any_model && p->ngpu > 0) {
        for (int m = 0; m < w->nmodels; m++)
            if (p->models >> m & 1u)
                models[nm++] = w->models[m];
        if (nm == 0)
            models[nm++] = "-none-";   /* names no model of this cluster */
    }
    skv_slots *req = NULL;
    int rc = skv__sim_request(&req, p->cpu, p->mem, p->ngpu, p->gpu, err);
    if (rc < 0)
        return rc;
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
    skv_sched_session_spec ss = SKV_SCHED_SESSION_SPEC_INIT;
    ss.id = id;
    ss.resource_group = SKV__SIM_GROUP;
    ss.n_kernels = 1;
    ss.kernels = &k;
    ss.n_gpu_models = nm;
    ss.gpu_models = models;
    rc = skv_sched_submit(r->s, &ss, now, err);
    skv_slots_free(req);
    return rc;
}

/* One event: submit, pass, keep or drop. */
static int step(ob_run *r, size_t e, skv_qty *alloc, skv_error *err)
{
    const skv__ob_pod *p = &r->w->pods[r->order[e]];
    if (p->cpu == 0 && p->mem == 0 && p->ngpu == 0) {
        r->placed++;      /* asks for nothing: fits anywhere, changes nothing */
        return 0;
    }
    char id[32];
    snprintf(id, sizeof(id), "t%zu", e);
    int rc = submit(r, p, id, (int64_t)e, err);
    if (rc < 0)
        return rc;
    skv_sched_result *res = NULL;
    /* The full walk: one session is pending, so the incremental walk can
     * skip nothing, but its shape verdict (pass_inc.c) runs first and
     * scans the agents through the map (skv__dmap_trial), O(nodes) per
     * event, before the selector's class index decides in O(classes):
     * at 9,704 nodes that scan was nearly all of the replay (> 120 s
     * instead of ~5 s). Same placements either way (suite sched compares
     * the two walks pass by pass). */
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.full_walk = true;
    if ((rc = skv_sched_pass(&res, r->s, (int64_t)e, &po, err)) < 0)
        return rc;
    bool placed = res->n_placements == 1;
    if (r->trace && e < r->ntrace)
        r->trace[e] = placed ? skv__sim_placement_digest(&res->placements[0]) : 0;
    skv_sched_result_free(res);
    if (placed) {
        r->placed++;
        *alloc += skv__ob_demand(p);
        return 0;
    }
    r->dropped++;
    if ((rc = skv_sched_cancel(r->s, id, (int64_t)e, err)) < 0)
        return rc;
    return skv_sched_session_remove(r->s, id, err);
}

/* Cross-check the replay's own count against the scheduler's accounting:
 * the GPU in use on all agents must equal what the replay placed. */
static int verify(ob_run *r, skv_qty alloc, skv_error *err)
{
    int rc = skv_sched_check(r->s, err);
    skv_qty used_total = 0;
    for (size_t i = 0; rc == 0 && i < r->w->nnodes; i++) {
        skv_slots *used = NULL;
        rc = skv_sched_agent_usage(&used, NULL, r->s, r->w->nodes[i].name, err);
        if (rc == 0)
            used_total += skv_slots_get(used, "cuda.device") +
                          skv_slots_get(used, "cuda.shares");
        skv_slots_free(used);
    }
    if (rc == 0 && used_total != alloc)
        rc = skv__err(err, SKV_ESTATE, "openb: scheduler reports %lld "
                      "milli-GPU in use, the replay placed %lld",
                      (long long)used_total, (long long)alloc);
    return rc;
}

static int replay(ob_run *r, const skv_sim_openb_options *o, skv_error *err)
{
    char *config = NULL;
    const char *policy = o->policy ? o->policy : "frag";
    int rc = 0;
    if (strcmp(policy, "fgd") == 0 || strcmp(policy, "frag") == 0)
        rc = skv__ob_workload_config(&config, r->w, o->seed,
                                     strcmp(policy, "fgd") != 0,
                                     o->policy_config, err);
    else if (skv_sim_policy(policy))
        config = skv__asprintf("seed=%llu", (unsigned long long)o->seed);
    if (rc < 0)
        return rc;
    rc = skv__sim_sched_new(&r->s, policy, config, NULL, 0, err);
    skv__free(config);
    if (rc == 0)
        rc = add_nodes(r, err);
    if (rc == 0)
        rc = build_order(r, o->seed, o->demand_pct ? o->demand_pct : 130, err);
    if (rc == 0 && r->trace && r->n > r->ntrace)
        r->n = r->ntrace;   /* a traced replay is its first ntrace events */
    if (rc == 0 && (!(r->arrived = skv__calloc(r->n, sizeof(skv_qty))) ||
                    !(r->allocated = skv__calloc(r->n, sizeof(skv_qty)))))
        rc = skv__err(err, SKV_ENOMEM, "openb: out of memory");
    skv_qty arrived = 0, alloc = 0;
    for (size_t e = 0; rc == 0 && e < r->n; e++) {
        arrived += skv__ob_demand(&r->w->pods[r->order[e]]);
        rc = step(r, e, &alloc, err);
        r->arrived[e] = arrived;
        r->allocated[e] = alloc;
    }
    return rc == 0 ? verify(r, alloc, err) : rc;
}

/* FNV-1a over the agent id and every device share of each kernel. */
uint64_t skv__sim_placement_digest(const skv_sched_placement *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < p->n_kernels; k++) {
        const skv_sched_kernel_placement *kp = &p->kernels[k];
        for (const char *c = kp->agent_id; *c; c++)
            h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
        for (size_t d = 0; d < kp->n_devices; d++)
            h = (h ^ ((uint64_t)kp->devices[d].device << 32 ^
                      (uint64_t)kp->devices[d].amount << 1 ^
                      kp->devices[d].whole)) * 0x100000001b3ull;
        h = (h ^ 0xFF) * 0x100000001b3ull;
    }
    return h | 1;   /* 0 means "dropped" */
}

int skv_sim_openb_run(skv_sim_openb_result **out, const skv_sim_openb *w,
                      const skv_sim_openb_options *opts, skv_error *err)
{
    return skv__sim_openb_trace(out, NULL, 0, w, opts, err);
}

int skv__sim_openb_trace(skv_sim_openb_result **out, uint64_t *trace,
                         size_t ntrace, const skv_sim_openb *w,
                         const skv_sim_openb_options *opts, skv_error *err)
{
    skv_sim_openb_options o = SKV_SIM_OPENB_OPTIONS_INIT;
    if (!out || !w)
        return skv__err(err, SKV_EINVAL, "openb run: NULL argument");
    if (w->npods == 0)
        return skv__err(err, SKV_EINVAL, "openb run: no pods loaded");
    if (opts && opts->version != SKV_SIM_OPENB_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "openb run: options version %u "
                        "(expected %u)", opts->version,
                        SKV_SIM_OPENB_OPTIONS_VERSION);
    if (opts)
        o = *opts;
    ob_run r = {.w = w, .trace = trace, .ntrace = ntrace};
    skv_sim_openb_result *res = skv__calloc(1, sizeof(*res));
    int rc = res ? replay(&r, &o, err)
                 : skv__err(err, SKV_ENOMEM, "openb: out of memory");
    skv_sched_free(r.s);
    skv__free(r.order);
    if (rc < 0) {
        skv__free(r.arrived);
        skv__free(r.allocated);
        skv__free(res);
        return rc;
    }
    res->seed = o.seed;
    res->capacity = w->capacity;
    res->n_events = r.n;
    res->n_placed = r.placed;
    res->n_dropped = r.dropped;
    res->arrived = r.arrived;
    res->allocated = r.allocated;
    *out = res;
    return 0;
}

void skv_sim_openb_result_free(skv_sim_openb_result *r)
{
    if (!r)
        return;
    skv__free((void *)r->arrived);
    skv__free((void *)r->allocated);
    skv__free(r);
}

int skv_sim_openb_column(double *out, const skv_sim_openb_result *r, int k)
{
    if (!out || !r || r->capacity <= 0)
        return SKV_EINVAL;
    double sum = 0;
    size_t n = 0;
    for (size_t e = 0; e < r->n_events; e++) {
        /* round half up, in integers: floor((200 a + c) / 2c) */
        skv_qty pct = (200 * r->arrived[e] + r->capacity) / (2 * r->capacity);
        if (pct == k) {
            sum += 100.0 * (double)r->allocated[e] / (double)r->capacity;
            n++;
        }
    }
    if (n == 0)
        return SKV_ENOENT;
    *out = sum / (double)n;
    return 0;
}
