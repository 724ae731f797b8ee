/* The task mix of an openb pod list as a selector configuration string
 * (the FGD measure's target workload; format in selector_frag_config.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

static int pod_cmp(const void *pa, const void *pb)
{
    const skv__ob_pod *a = pa, *b = pb;
    if (a->cpu != b->cpu)
        return a->cpu < b->cpu ? -1 : 1;
    if (a->mem != b->mem)
        return a->mem < b->mem ? -1 : 1;
    if (a->ngpu != b->ngpu)
        return a->ngpu < b->ngpu ? -1 : 1;
    if (a->gpu != b->gpu)
        return a->gpu < b->gpu ? -1 : 1;
    if (a->any_model != b->any_model)
        return a->any_model ? -1 : 1;
    return a->models < b->models ? -1 : a->models > b->models;
}

/* Append text; len and cap track the buffer. */
static int put(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap + n + 1) * 2;
        char *nb = skv__realloc(*buf, nc);
        if (!nb)
            return SKV_ENOMEM;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return 0;
}

static int put_type(char **buf, size_t *len, size_t *cap,
                    const skv_sim_openb *w, const skv__ob_pod *p, size_t count)
{
    char t[256];
    snprintf(t, sizeof(t), ";type=%zu:%lld:%lld:%u:%lld:", count,
             (long long)p->cpu, (long long)p->mem, p->ngpu, (long long)p->gpu);
    int rc = put(buf, len, cap, t);
    if (rc == 0 && (p->any_model || p->ngpu == 0))
        return put(buf, len, cap, "*");
    if (rc == 0 && p->unknown_model)   /* fits no node of this cluster */
        return put(buf, len, cap, "-none-");
    for (int m = 0, first = 1; rc == 0 && m < w->nmodels; m++) {
        if (!(p->models >> m & 1u))
            continue;
        if (!first)
            rc = put(buf, len, cap, "|");
        if (rc == 0)
            rc = put(buf, len, cap, w->models[m]);
        first = 0;
    }
    return rc;
}

/* The cluster's node shapes (host=COUNT:CPU:MEM:NGPU:MODEL), for the
 * selectors' rarity weights. */
static int put_hosts(char **buf, size_t *len, size_t *cap, const skv_sim_openb *w)
{
    bool *done = skv__calloc(w->nnodes + 1, sizeof(*done));
    int rc = done ? 0 : SKV_ENOMEM;
    for (size_t i = 0; rc == 0 && i < w->nnodes; i++) {
        if (done[i])
            continue;
        const skv__ob_node *a = &w->nodes[i];
        size_t count = 0;
        for (size_t j = i; j < w->nnodes; j++) {
            const skv__ob_node *b = &w->nodes[j];
            if (!done[j] && b->cpu == a->cpu && b->mem == a->mem &&
                b->gpus == a->gpus && b->model == a->model) {
                done[j] = true;
                count++;
            }
        }
        char t[256];
        snprintf(t, sizeof(t), ";host=%zu:%lld:%lld:%u:%s", count,
                 (long long)a->cpu, (long long)a->mem, a->gpus,
                 a->model >= 0 ? w->models[a->model] : "");
        rc = put(buf, len, cap, t);
    }
    skv__free(done);
    return rc;
}

int skv__ob_workload_config(char **out, const skv_sim_openb *w, uint64_t seed,
                            bool with_mem, const char *extra, skv_error *err)
{
    skv__ob_pod *sorted = skv__calloc(w->npods, sizeof(*sorted));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char head[64];
    snprintf(head, sizeof(head), "seed=%llu", (unsigned long long)seed);
    int rc = sorted ? put(&buf, &len, &cap, head) : SKV_ENOMEM;
    if (rc == 0) {
        memcpy(sorted, w->pods, w->npods * sizeof(*sorted));
        for (size_t i = 0; !with_mem && i < w->npods; i++)
            sorted[i].mem = 0;   /* merge the types memory alone tells apart */
        qsort(sorted, w->npods, sizeof(*sorted), pod_cmp);
    }
    for (size_t i = 0; rc == 0 && i < w->npods;) {
        size_t j = i + 1;
        while (j < w->npods && pod_cmp(&sorted[i], &sorted[j]) == 0)
            j++;
        rc = put_type(&buf, &len, &cap, w, &sorted[i], j - i);
        i = j;
    }
    rc = rc == 0 ? put_hosts(&buf, &len, &cap, w) : rc;
    for (int m = 0; rc == 0 && m < w->nmodels; m++) {
        skv_qty sup = 0;
        for (size_t i = 0; i < w->nnodes; i++)
            if (w->nodes[i].model == m)
                sup += (skv_qty)w->nodes[i].gpus * 1000;
        char t[160];
        snprintf(t, sizeof(t), ";supply=%s:%lld", w->models[m], (long long)sup);
        rc = put(&buf, &len, &cap, t);
    }
    if (rc == 0 && extra && *extra && (rc = put(&buf, &len, &cap, ";")) == 0)
        rc = put(&buf, &len, &cap, extra);
    skv__free(sorted);
    if (rc < 0) {
        skv__free(buf);
        return skv__err(err, rc, "openb: building the workload config: out "
                        "of memory");
    }
    *out = buf;
    return 0;
}
