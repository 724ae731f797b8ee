/* Statistics of a job-trace replay: utilization, queueing delay, job
 * completion time, per-owner service and Jain's fairness index.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "jobs_int.h"

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)ceil(p / 100.0 * (double)n);
    return v[i ? i - 1 : 0];
}

static void summarize(double *mean, double *p50, double *p99, double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    qsort(v, n, sizeof(*v), dcmp);
    *mean = n ? s / (double)n : 0;
    *p50 = pct(v, n, 50);
    *p99 = pct(v, n, 99);
}

static void owners(skv_sim_jobs_result *res, skv_sim_owner_stats *os,
                   const skv__jstat *st)
{
    const skv_sim_jobs *j = st->j;
    double *slow = skv__calloc(j->nowners, sizeof(*slow));
    for (size_t o = 0; o < j->nowners; o++)
        os[o].name = j->owners[o];
    for (size_t i = 0; i < st->n; i++) {
        uint32_t ji = st->order[i];
        const skv__job *x = &j->jobs[ji];
        if (st->end[ji] < 0)
            continue;
        skv_sim_owner_stats *w = &os[x->owner];
        double dur = (double)x->duration_ms / 1000.0;
        double jct = (double)(st->end[ji] - x->submit_ms) / 1000.0;
        w->n_jobs++;
        w->gpu_seconds += dur * x->gpus;
        if (slow)
            slow[x->owner] += jct / (dur > 1.0 ? dur : 1.0);
    }
    double s1 = 0, s2 = 0;
    size_t k = 0;
    for (size_t o = 0; o < j->nowners; o++) {
        if (!os[o].n_jobs)
            continue;
        os[o].mean_slowdown = slow ? slow[o] / (double)os[o].n_jobs : 0;
        double x = os[o].mean_slowdown > 0 ? 1.0 / os[o].mean_slowdown : 0;
        s1 += x;
        s2 += x * x;
        k++;
    }
    res->jain_fairness = s2 > 0 ? s1 * s1 / ((double)k * s2) : 1.0;
    skv__free(slow);
}

int skv__jobs_stats(skv_sim_jobs_result **out, const skv__jstat *st,
                    skv_error *err)
{
    const skv_sim_jobs *j = st->j;
    skv_sim_jobs_result *res = skv__calloc(1, sizeof(*res));
    skv_sim_owner_stats *os = skv__calloc(j->nowners ? j->nowners : 1, sizeof(*os));
    double *q = skv__calloc(st->n ? st->n : 1, sizeof(*q));
    double *c = skv__calloc(st->n ? st->n : 1, sizeof(*c));
    if (!res || !os || !q || !c) {
        skv__free(res);
        skv__free(os);
        skv__free(q);
        skv__free(c);
        return skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    }
    size_t nc = 0;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    double busy = 0;
    for (size_t i = 0; i < st->n; i++) {
        uint32_t ji = st->order[i];
        const skv__job *x = &j->jobs[ji];
        t0 = x->submit_ms < t0 ? x->submit_ms : t0;
        if (st->end[ji] < 0)
            continue;
        t1 = st->end[ji] > t1 ? st->end[ji] : t1;
        q[nc] = (double)(st->start[ji] - x->submit_ms) / 1000.0;
        c[nc] = (double)(st->end[ji] - x->submit_ms) / 1000.0;
        busy += (double)x->duration_ms / 1000.0 * x->gpus;
        nc++;
    }
    res->n_jobs = st->n;
    res->n_completed = nc;
    res->n_rejected = st->rejected;
    res->makespan_s = nc ? (double)(t1 - t0) / 1000.0 : 0;
    res->utilization = res->makespan_s > 0 && st->total_gpus
                           ? busy / ((double)st->total_gpus * res->makespan_s) : 0;
    summarize(&res->queue_mean_s, &res->queue_p50_s, &res->queue_p99_s, q, nc);
    summarize(&res->jct_mean_s, &res->jct_p50_s, &res->jct_p99_s, c, nc);
    owners(res, os, st);
    res->n_passes = st->passes;
    res->n_decisions = st->decisions;
    res->pass_seconds = st->pass_s;
    res->decisions_digest = st->digest;
    res->pass_cpu_seconds = st->pass_cpu_s;
    res->n_owners = j->nowners;
    res->owners = os;
    skv__free(q);
    skv__free(c);
    *out = res;
    return 0;
}

void skv_sim_jobs_result_free(skv_sim_jobs_result *r)
{
    if (!r)
        return;
    skv__free((void *)r->owners);
    skv__free(r);
}
