/* What the manager observes as it happens, for the histograms: pass
 * durations and container start latency (kernel.create sent -> the kernel
 * runs). Nothing is recorded until skv_manager_metrics_collect() bound a
 * registry, so an embedder without metrics pays nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* Kernels awaiting their start beyond this are not timed (a cluster with
 * that many kernels starting at once has other problems). */
#define STARTS_MAX 4096

static skv__mgr_metrics *bound(const skv_manager *m)
{
    skv__mgr_metrics *x = m ? m->metrics : NULL;
    return x && x->reg ? x : NULL;
}

void skv__mgr_metrics_pass(skv_manager *m, uint64_t ns)
{
    skv__mgr_metrics *x = bound(m);
    if (x)
        skv_metrics_observe(x->f.pass_hist, NULL, 0, (double)ns / 1e9, NULL);
}

static size_t start_find(const skv__mgr_metrics *x, const char *kid)
{
    for (size_t i = 0; i < x->n_starts; i++)
        if (!strcmp(x->starts[i].kernel_id, kid))
            return i;
    return SIZE_MAX;
}

static void start_drop(skv__mgr_metrics *x, size_t i)
{
    skv__free(x->starts[i].kernel_id);
    x->starts[i] = x->starts[--x->n_starts];
}

void skv__mgr_metrics_create_sent(skv_manager *m, const char *kid,
                                  int64_t now_ms)
{
    skv__mgr_metrics *x = bound(m);
    /* A resend (reconnect, restart) keeps the first send's time. */
    if (!x || !kid || start_find(x, kid) != SIZE_MAX ||
        x->n_starts >= STARTS_MAX)
        return;
    if (x->n_starts == x->cap_starts) {
        size_t cap = x->cap_starts ? 2 * x->cap_starts : 16;
        skv__mgr_start *n = skv__reallocarray(x->starts, cap, sizeof *n);
        if (!n)
            return;   /* this start is not timed; nothing else suffers */
        x->starts = n;
        x->cap_starts = cap;
    }
    char *copy = skv__strdup(kid);
    if (!copy)
        return;
    x->starts[x->n_starts].kernel_id = copy;
    x->starts[x->n_starts++].sent_ms = now_ms;
}

void skv__mgr_metrics_kernel_running(skv_manager *m, const char *kid,
                                     int64_t now_ms)
{
    skv__mgr_metrics *x = bound(m);
    size_t i = x && kid ? start_find(x, kid) : SIZE_MAX;
    if (i == SIZE_MAX)
        return;     /* adopted at reconciliation: no start to time */
    int64_t d = now_ms - x->starts[i].sent_ms;
    skv_metrics_observe(x->f.start_hist, NULL, 0, d > 0 ? d / 1000.0 : 0,
                        NULL);
    start_drop(x, i);
}

void skv__mgr_metrics_kernel_gone(skv_manager *m, const char *kid)
{
    skv__mgr_metrics *x = bound(m);
    size_t i = x && kid ? start_find(x, kid) : SIZE_MAX;
    if (i != SIZE_MAX)
        start_drop(x, i);
}

void skv__mgr_metrics_forget_starts(skv__mgr_metrics *x)
{
    for (size_t i = 0; i < x->n_starts; i++)
        skv__free(x->starts[i].kernel_id);
    x->n_starts = 0;
}

void skv__mgr_metrics_free(skv__mgr_metrics *x)
{
    if (!x)
        return;
    skv__mgr_metrics_forget_starts(x);
    skv__free(x->starts);
    skv__free(x);
}
