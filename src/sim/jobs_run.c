/* Replaying a job trace in simulated time through the real scheduler:
 * arrivals are submitted, a pass runs at every event time, placed jobs run
 * for their duration and then finish, freeing their resources.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "jobs_int.h"

typedef struct ev {
    int64_t t;
    uint32_t job;
} ev;

typedef struct jrun {
    const skv_sim_jobs *j;
    const skv_sim_jobs_options *o;
    skv_sched *s;
    uint32_t gpus_per_node;
    uint64_t total_gpus;
    uint32_t *order;           /* jobs by submit time */
    int64_t *start, *end;      /* per job; -1 = not yet / rejected */
    ev *heap;                  /* completions, min-heap on t */
    size_t nheap;
    size_t n;                  /* jobs replayed */
    size_t passes, decisions, rejected;
    double pass_s;
    uint64_t digest;           /* of every placement (result.h) */
    double pass_cpu_s;
    size_t held;               /* strict FIFO: next job not yet submitted */
    bool head_waiting;         /* strict FIFO: a submitted job waits */
} jrun;

static void heap_push(jrun *r, ev e)
{
    size_t i = r->nheap++;
    while (i > 0 && r->heap[(i - 1) / 2].t > e.t) {
        r->heap[i] = r->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->heap[i] = e;
}

static ev heap_pop(jrun *r)
{
    ev top = r->heap[0], last = r->heap[--r->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->nheap)
            break;
        if (c + 1 < r->nheap && r->heap[c + 1].t < r->heap[c].t)
            c++;
        if (r->heap[c].t >= last.t)
            break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    if (r->nheap)
        r->heap[i] = last;
    return top;
}

static int by_submit(const void *a, const void *b, void *payload)
{
    const skv_sim_jobs *jobs = payload;
    const skv__job *x = &jobs->jobs[*(const uint32_t *)a];
    const skv__job *y = &jobs->jobs[*(const uint32_t *)b];
    if (x->submit_ms != y->submit_ms)
        return x->submit_ms < y->submit_ms ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int add_cluster(jrun *r, skv_error *err)
{
    const skv_sim_jobs_options *o = r->o;
    char id[32];
    if (o->nodes) {
        for (size_t i = 0; i < o->nodes->nnodes; i++) {
            const skv__ob_node *n = &o->nodes->nodes[i];
            int rc = skv__sim_add_node(r->s, n->name, n->cpu, n->mem, n->gpus,
                                       n->model >= 0 ? o->nodes->models[n->model]
                                                     : NULL, err);
            if (rc < 0)
                return rc;
            r->gpus_per_node = n->gpus > r->gpus_per_node ? n->gpus : r->gpus_per_node;
            r->total_gpus += n->gpus;
        }
        return 0;
    }
    for (uint32_t i = 0; i < o->n_nodes; i++) {
        snprintf(id, sizeof(id), "node%04u", i);
        int rc = skv__sim_add_node(r->s, id, o->shape.cpu, o->shape.mem,
                                   o->shape.gpus, NULL, err);
        if (rc < 0)
            return rc;
    }
    r->gpus_per_node = o->shape.gpus;
    r->total_gpus = (uint64_t)o->n_nodes * o->shape.gpus;
    return 0;
}

/* Per-GPU CPU/memory when the trace has none. */
static void job_host(const jrun *r, const skv__job *x, skv_qty *cpu, skv_qty *mem,
                     uint32_t gpus)
{
    *cpu = x->cpu >= 0 ? x->cpu * gpus / (x->gpus ? x->gpus : 1)
                       : r->o->cpu_per_gpu * gpus;
    *mem = x->mem >= 0 ? x->mem * gpus / (x->gpus ? x->gpus : 1)
                       : r->o->mem_per_gpu * gpus;
}

/* A job of more GPUs than a node has becomes a multi-node gang of full
 * nodes (one kernel per agent). */
static int submit_job(jrun *r, uint32_t ji, int64_t now, skv_error *err)
{
    const skv__job *x = &r->j->jobs[ji];
    uint32_t per = r->gpus_per_node ? r->gpus_per_node : 1;
    uint32_t gpus = x->gpus ? x->gpus : 0;
    size_t nk = gpus > per ? (gpus + per - 1) / per : 1;
    skv_sched_kernel_spec *k = skv__calloc(nk, sizeof(*k));
    skv_slots **req = skv__calloc(nk, sizeof(*req));
    if (!k || !req) {
        skv__free(k);
        skv__free(req);
        return skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < nk && rc == 0; i++) {
        uint32_t g = nk == 1 ? gpus : (i + 1 < nk ? per : gpus - per * (uint32_t)i);
        skv_qty cpu, mem;
        job_host(r, x, &cpu, &mem, g);
        if (g == 0 && cpu == 0 && mem == 0)
            cpu = 1;  /* a request may not be empty */
        k[i].role = i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN;
        rc = skv__sim_request(&req[i], cpu, mem, g, 1000, err);
        k[i].request = req[i];
    }
    char id[32];
    snprintf(id, sizeof(id), "j%u", ji);
    const char *owner = r->j->owners[x->owner];
    skv_sched_session_spec ss = SKV_SCHED_SESSION_SPEC_INIT;
    ss.id = id;
    ss.project = owner;
    ss.user = owner;
    ss.resource_group = SKV__SIM_GROUP;
    ss.cluster_mode = nk > 1 ? SKV_SCHED_MULTI_NODE : SKV_SCHED_SINGLE_NODE;
    ss.one_kernel_per_agent = nk > 1;
    ss.n_kernels = nk;
    ss.kernels = k;
    ss.estimated_duration_ms = x->duration_ms > 0 ? x->duration_ms : 1;
    if (rc == 0)
        rc = skv_sched_submit(r->s, &ss, now, err);
    for (size_t i = 0; i < nk; i++)
        skv_slots_free(req[i]);
    skv__free(req);
    skv__free(k);
    return rc;
}

static uint32_t job_of(const char *id)
{
    return (uint32_t)strtoul(id + 1, NULL, 10);
}

static void digest(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 1099511628211ull;
}

static void digest_placement(jrun *r, int64_t now, uint32_t ji,
                             const skv_sched_placement *pl)
{
    digest(&r->digest, &now, sizeof(now));
    digest(&r->digest, &ji, sizeof(ji));
    for (size_t k = 0; k < pl->n_kernels; k++) {
        const skv_sched_kernel_placement *kp = &pl->kernels[k];
        digest(&r->digest, kp->agent_id, strlen(kp->agent_id) + 1);
        for (size_t d = 0; d < kp->n_devices; d++) {
            const skv_sched_device_share *sh = &kp->devices[d];
            digest(&r->digest, &sh->device, sizeof(sh->device));
            digest(&r->digest, &sh->amount, sizeof(sh->amount));
        }
    }
}

static int run_pass(jrun *r, int64_t now, skv_error *err)
{
    skv_sched_result *res = NULL;
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.full_walk = r->o->version >= 2 && r->o->full_walk;
    double t0 = skv__sim_now(), c0 = skv__sim_cpu_now();
    int rc = skv_sched_pass(&res, r->s, now, &po, err);
    r->pass_s += skv__sim_now() - t0;
    r->pass_cpu_s += skv__sim_cpu_now() - c0;
    r->passes++;
    for (size_t i = 0; rc == 0 && i < res->n_placements; i++) {
        uint32_t ji = job_of(res->placements[i].session_id);
        digest_placement(r, now, ji, &res->placements[i]);
        rc = skv_sched_mark_started(r->s, res->placements[i].session_id, now, err);
        r->start[ji] = now;
        r->end[ji] = now + r->j->jobs[ji].duration_ms;
        heap_push(r, (ev){r->end[ji], ji});
        r->decisions++;
    }
    skv_sched_result_free(res);
    return rc;
}

static int finish(jrun *r, uint32_t ji, int64_t now, skv_error *err)
{
    char id[32];
    snprintf(id, sizeof(id), "j%u", ji);
    int rc = skv_sched_mark_finished(r->s, id, false, now, err);
    return rc ? rc : skv_sched_session_remove(r->s, id, err);
}

static bool too_big(const jrun *r, uint32_t ji)
{
    return (uint64_t)r->j->jobs[ji].gpus > r->total_gpus;
}

/* Strict FIFO: submit the oldest arrived job only when none waits in the
 * scheduler, and pass again after each placement, so nothing overtakes a
 * job that does not fit. */
static int strict_step(jrun *r, size_t arrived, int64_t t, skv_error *err)
{
    int rc = 0;
    while (rc == 0) {
        if (!r->head_waiting) {
            while (r->held < arrived && too_big(r, r->order[r->held]))
                r->held++;
            if (r->held >= arrived)
                return 0;
            rc = submit_job(r, r->order[r->held++], t, err);
            r->head_waiting = true;
            continue;
        }
        size_t before = r->decisions;
        rc = run_pass(r, t, err);
        if (rc || r->decisions == before)
            return rc;
        r->head_waiting = false;
    }
    return rc;
}

static int loop_strict(jrun *r, skv_error *err)
{
    size_t next = 0;
    int rc = 0;
    while (rc == 0 && (next < r->n || r->nheap)) {
        int64_t ta = next < r->n ? r->j->jobs[r->order[next]].submit_ms : INT64_MAX;
        int64_t t = r->nheap && r->heap[0].t < ta ? r->heap[0].t : ta;
        while (rc == 0 && r->nheap && r->heap[0].t == t)
            rc = finish(r, heap_pop(r).job, t, err);
        for (; next < r->n && r->j->jobs[r->order[next]].submit_ms == t; next++)
            r->rejected += too_big(r, r->order[next]);
        if (rc == 0)
            rc = strict_step(r, next, t, err);
    }
    return rc;
}

static int loop(jrun *r, skv_error *err)
{
    if (r->o->version >= 2 && r->o->strict_fifo)
        return loop_strict(r, err);
    size_t next = 0;
    int rc = 0;
    while (rc == 0 && (next < r->n || r->nheap)) {
        int64_t ta = next < r->n ? r->j->jobs[r->order[next]].submit_ms : INT64_MAX;
        int64_t t = r->nheap && r->heap[0].t < ta ? r->heap[0].t : ta;
        while (rc == 0 && r->nheap && r->heap[0].t == t)
            rc = finish(r, heap_pop(r).job, t, err);
        for (; rc == 0 && next < r->n && r->j->jobs[r->order[next]].submit_ms == t; next++) {
            uint32_t ji = r->order[next];
            if ((uint64_t)r->j->jobs[ji].gpus > r->total_gpus) {
                r->rejected++;          /* can never fit this cluster */
                continue;
            }
            rc = submit_job(r, ji, t, err);
        }
        if (rc == 0)
            rc = run_pass(r, t, err);
    }
    return rc;
}

static int prepare(jrun *r, skv_error *err)
{
    const skv_sim_jobs_options *o = r->o;
    const char *policy = o->policy ? o->policy : "concentrated";
    char *config = skv_sim_policy(policy) && strcmp(policy, "fgd") &&
                           strcmp(policy, "frag")
                       ? skv__asprintf("seed=%llu", (unsigned long long)o->seed)
                       : NULL;
    int rc = skv__sim_sched_new(&r->s, policy, config, o->sequencer,
                                o->max_reservations, err);
    skv__free(config);
    if (rc == 0)
        rc = add_cluster(r, err);
    size_t n = r->j->n;
    r->n = o->max_jobs && o->max_jobs < n ? o->max_jobs : n;
    r->order = skv__calloc(n, sizeof(*r->order));
    r->start = skv__calloc(n, sizeof(*r->start));
    r->end = skv__calloc(n, sizeof(*r->end));
    r->heap = skv__calloc(n, sizeof(*r->heap));
    if (rc == 0 && (!r->order || !r->start || !r->end || !r->heap))
        rc = skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        r->order[i] = (uint32_t)i;
        r->start[i] = r->end[i] = -1;
    }
    qsort_r(r->order, n, sizeof(*r->order), by_submit, (void *)r->j);
    return 0;
}

static int check_opts(const skv_sim_jobs_options *o, skv_error *err)
{
    if (o->version < 1 || o->version > SKV_SIM_JOBS_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "job replay: options version %u "
                        "(expected 1..%u)", o->version, SKV_SIM_JOBS_OPTIONS_VERSION);
    if (!o->nodes && (o->n_nodes == 0 || o->shape.gpus == 0))
        return skv__err(err, SKV_EINVAL, "job replay: no cluster (n_nodes and "
                        "shape.gpus, or nodes)");
    if (o->cpu_per_gpu < 0 || o->mem_per_gpu < 0)
        return skv__err(err, SKV_EINVAL, "job replay: negative per-GPU CPU or "
                        "memory");
    return 0;
}

int skv_sim_jobs_run(skv_sim_jobs_result **out, const skv_sim_jobs *j,
                     const skv_sim_jobs_options *opts, skv_error *err)
{
    if (!out || !j || !opts)
        return skv__err(err, SKV_EINVAL, "job replay: NULL argument");
    int rc = check_opts(opts, err);
    if (rc < 0)
        return rc;
    jrun r = {.j = j, .o = opts, .digest = 1469598103934665603ull};
    rc = prepare(&r, err);
    if (rc == 0)
        rc = loop(&r, err);
    if (rc == 0)
        rc = skv_sched_check(r.s, err);
    if (rc == 0) {
        skv__jstat st = {j, r.order, r.n, r.start, r.end, r.total_gpus,
                         r.passes, r.decisions, r.rejected, r.pass_s, r.digest,
                         r.pass_cpu_s};
        rc = skv__jobs_stats(out, &st, err);
    }
    skv_sched_free(r.s);
    skv__free(r.order);
    skv__free(r.start);
    skv__free(r.end);
    skv__free(r.heap);
    return rc;
}
