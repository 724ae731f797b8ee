/* GPU fragmentation measure of a node against a workload (see
 * selector_frag.h). Types are grouped by GPU demand ("classes"): the GPU
 * part of the measure depends only on the class, the CPU/memory/model
 * feasibility only on the node, so one node costs O(types + classes*GPUs).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"
#include "selector_frag.h"

#define FRAG_MAX_CLASSES 512

typedef struct frag_entry {
    skv__frag_shape shape;
    double weight;
} frag_entry;

typedef struct frag_class {
    skv_qty gpu;
    int ngpu;
    double weight;          /* sum over its entries */
    size_t first, count;    /* entries[first .. first+count) */
} frag_class;

struct skv__frag_workload {
    frag_entry *entries;    /* merged types, grouped by class */
    size_t nentries;
    frag_class *classes;
    size_t nclasses;
};

static bool shape_eq(const skv__frag_shape *a, const skv__frag_shape *b)
{
    return a->cpu == b->cpu && a->mem == b->mem && a->gpu == b->gpu &&
           a->ngpu == b->ngpu && a->any_model == b->any_model &&
           (a->any_model || a->models == b->models);
}

static int shape_check(const skv__frag_shape *s, double wt, size_t i,
                       skv_error *err)
{
    if (s->cpu < 0 || s->mem < 0 || s->gpu < 0 || s->gpu > SKV__FRAG_GPU_UNIT ||
        s->ngpu < 0 || s->ngpu > SKV__FRAG_MAX_GPU)
        return skv__err(err, SKV_EINVAL, "frag workload: shape %zu has a "
                        "negative or out-of-range demand", i);
    if (!(wt >= 0.0))
        return skv__err(err, SKV_EINVAL, "frag workload: shape %zu has "
                        "weight %g (must be >= 0)", i, wt);
    return 0;
}

/* Merge identical shapes, then order entries so each class is contiguous. */
static int build_entries(skv__frag_workload *w, const skv__frag_shape *shapes,
                         const double *weights, size_t n, skv_error *err)
{
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = shape_check(&shapes[i], weights[i], i, err);
        if (rc < 0)
            return rc;
        total += weights[i];
    }
    if (n == 0 || !(total > 0))
        return skv__err(err, SKV_EINVAL, "frag workload: no shape with a "
                        "positive weight");
    w->entries = skv__calloc(n, sizeof(*w->entries));
    if (!w->entries)
        return skv__err(err, SKV_ENOMEM, "frag workload: out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < w->nentries && !shape_eq(&w->entries[j].shape, &shapes[i]))
            j++;
        if (j == w->nentries)
            w->entries[w->nentries++].shape = shapes[i];
        w->entries[j].weight += weights[i] / total;
    }
    return 0;
}

static int class_cmp(const void *pa, const void *pb)
{
    const frag_entry *a = pa, *b = pb;
    if (a->shape.ngpu != b->shape.ngpu)
        return a->shape.ngpu < b->shape.ngpu ? -1 : 1;
    if (a->shape.gpu != b->shape.gpu)
        return a->shape.gpu < b->shape.gpu ? -1 : 1;
    if (a->weight != b->weight)   /* popular types first: stable, readable */
        return a->weight > b->weight ? -1 : 1;
    if (a->shape.cpu != b->shape.cpu)
        return a->shape.cpu < b->shape.cpu ? -1 : 1;
    if (a->shape.mem != b->shape.mem)
        return a->shape.mem < b->shape.mem ? -1 : 1;
    if (a->shape.any_model != b->shape.any_model)
        return a->shape.any_model ? -1 : 1;
    return a->shape.models < b->shape.models ? -1 :
           a->shape.models > b->shape.models;
}

static int build_classes(skv__frag_workload *w, skv_error *err)
{
    qsort(w->entries, w->nentries, sizeof(*w->entries), class_cmp);
    w->classes = skv__calloc(w->nentries, sizeof(*w->classes));
    if (!w->classes)
        return skv__err(err, SKV_ENOMEM, "frag workload: out of memory");
    for (size_t i = 0; i < w->nentries; i++) {
        const skv__frag_shape *s = &w->entries[i].shape;
        frag_class *c = w->nclasses ? &w->classes[w->nclasses - 1] : NULL;
        if (!c || c->ngpu != s->ngpu || c->gpu != s->gpu) {
            if (w->nclasses == FRAG_MAX_CLASSES)
                return skv__err(err, SKV_ERANGE, "frag workload: more than "
                                "%d distinct GPU demands", FRAG_MAX_CLASSES);
            c = &w->classes[w->nclasses++];
            c->gpu = s->gpu;
            c->ngpu = s->ngpu;
            c->first = i;
        }
        c->count++;
        c->weight += w->entries[i].weight;
    }
    return 0;
}

int skv__frag_workload_new(skv__frag_workload **out,
                           const skv__frag_shape *shapes,
                           const double *weights, size_t n, skv_error *err)
{
    if (!out || (n && (!shapes || !weights)))
        return skv__err(err, SKV_EINVAL, "frag workload: NULL argument");
    skv__frag_workload *w = skv__calloc(1, sizeof(*w));
    if (!w)
        return skv__err(err, SKV_ENOMEM, "frag workload: out of memory");
    int rc = build_entries(w, shapes, weights, n, err);
    if (rc == 0)
        rc = build_classes(w, err);
    if (rc < 0) {
        skv__frag_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void skv__frag_workload_free(skv__frag_workload *w)
{
    if (!w)
        return;
    skv__free(w->entries);
    skv__free(w->classes);
    skv__free(w);
}

size_t skv__frag_workload_size(const skv__frag_workload *w)
{
    return w ? w->nentries : 0;
}

long skv__frag_workload_find(const skv__frag_workload *w,
                             const skv__frag_shape *shape)
{
    for (size_t i = 0; w && i < w->nentries; i++)
        if (shape_eq(&w->entries[i].shape, shape))
            return (long)i;
    return -1;
}

static bool host_fits(skv_qty cpu_free, skv_qty mem_free, int model,
                      const skv__frag_shape *s)
{
    if (s->cpu > cpu_free || s->mem > mem_free)
        return false;
    if (s->any_model || s->ngpu == 0)
        return true;
    return model >= 0 && model < 64 && (s->models >> model & 1u);
}

/* GPU side of the fit: a sharing task needs one GPU with enough free,
 * a whole-GPU task k entirely free GPUs. */
static bool gpus_fit(const skv_qty *f, int n, skv_qty gpu, int ngpu)
{
    if (ngpu == 0)
        return true;
    if (gpu < SKV__FRAG_GPU_UNIT) {
        for (int i = 0; i < n; i++)
            if (f[i] >= gpu)
                return true;
        return false;
    }
    int full = 0;
    for (int i = 0; i < n; i++)
        full += f[i] >= SKV__FRAG_GPU_UNIT;
    return full >= ngpu;
}

bool skv__frag_fits(const skv__frag_node *node, const skv__frag_shape *shape)
{
    return host_fits(node->cpu_free, node->mem_free, node->model, shape) &&
           gpus_fit(node->gpu_free, node->ngpu, shape->gpu, shape->ngpu);
}

/* Per class: the popularity of its types whose CPU/memory/model fit. */
static void host_weights(double *wfit, const skv__frag_workload *w,
                         skv_qty cpu_free, skv_qty mem_free, int model)
{
    for (size_t c = 0; c < w->nclasses; c++) {
        const frag_class *k = &w->classes[c];
        double s = 0;
        for (size_t i = k->first; i < k->first + k->count; i++)
            if (host_fits(cpu_free, mem_free, model, &w->entries[i].shape))
                s += w->entries[i].weight;
        wfit[c] = s;
    }
}

static double gpu_measure(const skv__frag_workload *w, const double *wfit,
                          const skv_qty *f, int n)
{
    skv_qty total = 0;
    for (int i = 0; i < n; i++)
        total += f[i];
    if (total == 0)
        return 0;
    double frag = 0;
    for (size_t c = 0; c < w->nclasses; c++) {
        const frag_class *k = &w->classes[c];
        /* CPU-only tasks use no GPU: every free GPU is a fragment to them. */
        if (k->ngpu == 0 || !gpus_fit(f, n, k->gpu, k->ngpu)) {
            frag += k->weight * (double)total;
            continue;
        }
        skv_qty need = k->gpu < SKV__FRAG_GPU_UNIT ? k->gpu : SKV__FRAG_GPU_UNIT;
        skv_qty small = 0;
        for (int i = 0; i < n; i++)
            if (f[i] < need)
                small += f[i];
        frag += wfit[c] * (double)small + (k->weight - wfit[c]) * (double)total;
    }
    return frag;
}

double skv__frag_measure(const skv__frag_workload *w,
                         const skv__frag_node *node)
{
    double wfit[FRAG_MAX_CLASSES];
    host_weights(wfit, w, node->cpu_free, node->mem_free, node->model);
    return gpu_measure(w, wfit, node->gpu_free, node->ngpu);
}

static skv_qty sum_free(const skv_qty *f, int n)
{
    skv_qty t = 0;
    for (int i = 0; i < n; i++)
        t += f[i];
    return t;
}

/* Whole-GPU or CPU-only task: the GPUs taken are interchangeable. */
static void best_whole(skv__frag_choice *out, const skv__frag_workload *w,
                       const double *wfit, const skv__frag_node *node,
                       const skv__frag_shape *s, double before)
{
    skv_qty f[SKV__FRAG_MAX_GPU];
    memcpy(f, node->gpu_free, (size_t)node->ngpu * sizeof(*f));
    for (int i = 0, left = s->ngpu; i < node->ngpu && left > 0; i++)
        if (f[i] >= SKV__FRAG_GPU_UNIT) {
            f[i] = 0;
            left--;
        }
    out->gpu = -1;
    out->delta = gpu_measure(w, wfit, f, node->ngpu) - before;
    out->gpu_left = sum_free(f, node->ngpu);
}

bool skv__frag_delta(skv__frag_choice *out, const skv__frag_workload *w,
                     const skv__frag_node *node, const skv__frag_shape *s,
                     int gpu, double before)
{
    if (node->ngpu > SKV__FRAG_MAX_GPU || !skv__frag_fits(node, s))
        return false;
    double wfit[FRAG_MAX_CLASSES];
    host_weights(wfit, w, node->cpu_free - s->cpu, node->mem_free - s->mem,
                 node->model);
    if (s->ngpu != 1 || s->gpu >= SKV__FRAG_GPU_UNIT) {
        best_whole(out, w, wfit, node, s, before);
        return true;
    }
    if (gpu < 0 || gpu >= node->ngpu || node->gpu_free[gpu] < s->gpu)
        return false;
    skv_qty f[SKV__FRAG_MAX_GPU];
    memcpy(f, node->gpu_free, (size_t)node->ngpu * sizeof(*f));
    f[gpu] -= s->gpu;
    out->gpu = gpu;
    out->delta = gpu_measure(w, wfit, f, node->ngpu) - before;
    out->gpu_left = sum_free(node->gpu_free, node->ngpu) - s->gpu;
    return true;
}

bool skv__frag_best(skv__frag_choice *out, const skv__frag_workload *w,
                    const skv__frag_node *node, const skv__frag_shape *s,
                    double before)
{
    if (node->ngpu > SKV__FRAG_MAX_GPU || !skv__frag_fits(node, s))
        return false;
    double wfit[FRAG_MAX_CLASSES];
    host_weights(wfit, w, node->cpu_free - s->cpu, node->mem_free - s->mem,
                 node->model);
    if (s->ngpu != 1 || s->gpu >= SKV__FRAG_GPU_UNIT) {
        best_whole(out, w, wfit, node, s, before);
        return true;
    }
    skv_qty f[SKV__FRAG_MAX_GPU];
    memcpy(f, node->gpu_free, (size_t)node->ngpu * sizeof(*f));
    bool found = false;
    for (int g = 0; g < node->ngpu; g++) {
        if (f[g] < s->gpu)
            continue;
        bool seen = false;   /* GPUs with equal free space are equivalent */
        for (int h = 0; h < g && !seen; h++)
            seen = node->gpu_free[h] == f[g];
        if (seen)
            continue;
        f[g] -= s->gpu;
        double d = gpu_measure(w, wfit, f, node->ngpu) - before;
        f[g] += s->gpu;
        if (!found || d < out->delta ||
            (d == out->delta && f[g] < node->gpu_free[out->gpu])) {
            out->gpu = g;
            out->delta = d;
            found = true;
        }
    }
    out->gpu_left = sum_free(node->gpu_free, node->ngpu) - s->gpu;
    return found;
}
