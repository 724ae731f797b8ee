/* Workload variants of an openb pod list, by the FGD paper's own recipe
 * (Weng et al., ATC'23, Sec. 6 and the published pod lists): the cluster
 * is kept, and the pod list is resampled so that
 *  - share: GPU-sharing pods make up a given share of the GPU demand (the
 *    number of GPU pods and the CPU-only pods are kept; every GPU pod is
 *    drawn, sharing or not, from the list's own pods of that kind);
 *  - multi: multi-GPU pods make up a given share of the GPU demand (multi-
 *    GPU pods drawn from the list are added, or removed at random);
 *  - spec: a given share of the GPU pods is constrained to GPU models
 *    (constraints drawn from the list's own constrained pods of the same
 *    GPU count, else one model of the cluster, by its GPU supply, among
 *    those whose nodes can hold the pod);
 *  - cpu: CPU-only pods make up a given share of all pods (the list's
 *    CPU-only pods, subsampled, or drawn again with replacement).
 * Applied in that order; every draw comes from one seeded generator.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim_int.h"
#include "../sched/selector_frag.h"

typedef struct vpods {
    skv__ob_pod *p;
    size_t n, cap;
} vpods;

static int vp_push(vpods *v, const skv__ob_pod *p)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 1024;
        skv__ob_pod *np = skv__reallocarray(v->p, nc, sizeof(*np));
        if (!np)
            return SKV_ENOMEM;
        v->p = np;
        v->cap = nc;
    }
    v->p[v->n++] = *p;
    return 0;
}

static bool is_share(const skv__ob_pod *p)
{
    return p->ngpu == 1 && p->gpu < 1000;
}

static double demand_of(const vpods *v, bool (*pick)(const skv__ob_pod *))
{
    double d = 0;
    for (size_t i = 0; i < v->n; i++)
        if (!pick || pick(&v->p[i]))
            d += (double)skv__ob_demand(&v->p[i]);
    return d;
}

static bool is_multi(const skv__ob_pod *p)
{
    return p->ngpu > 1;
}

static bool is_gpu(const skv__ob_pod *p)
{
    return p->ngpu > 0;
}

static bool is_whole_gpu(const skv__ob_pod *p)
{
    return p->ngpu > 0 && !is_share(p);
}

/* Indexes of the pods matching pick. */
static size_t *pick_all(const vpods *v, bool (*pick)(const skv__ob_pod *),
                        size_t *n)
{
    size_t *ix = skv__calloc(v->n + 1, sizeof(*ix));
    *n = 0;
    for (size_t i = 0; ix && i < v->n; i++)
        if (pick(&v->p[i]))
            ix[(*n)++] = i;
    return ix;
}

/* Remove the pods whose keep[] is false, in place. */
static void compact(vpods *v, const bool *keep)
{
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++)
        if (keep[i])
            v->p[k++] = v->p[i];
    v->n = k;
}

static int vary_share(vpods *v, double x, uint64_t *rng, skv_error *err)
{
    size_t ns, nw;
    size_t *s = pick_all(v, is_share, &ns), *w = pick_all(v, is_whole_gpu, &nw);
    vpods out = {0};
    int rc = s && w ? 0 : SKV_ENOMEM;
    if (rc == 0 && ((x > 0 && ns == 0) || (x < 1 && nw == 0)))
        rc = skv__err(err, SKV_EINVAL, "openb vary: share=%g needs %s pods in "
                      "the list", x, ns == 0 ? "GPU-sharing" : "whole-GPU");
    size_t ngpu = ns + nw;
    double ds = 0, dw = 0;
    for (size_t i = 0; rc == 0 && i < v->n; i++)
        if (!is_gpu(&v->p[i]) && vp_push(&out, &v->p[i]) < 0)
            rc = SKV_ENOMEM;
    /* Greedy: a sharing pod while sharing is below its share of the demand
     * drawn so far, else a whole-GPU one; ends within one pod of x. */
    for (size_t i = 0; rc == 0 && i < ngpu; i++) {
        bool share = x >= 1 || (x > 0 && ds <= x * (ds + dw));
        const skv__ob_pod *p = share ? &v->p[s[skv__rng_below(rng, ns)]]
                                     : &v->p[w[skv__rng_below(rng, nw)]];
        *(share ? &ds : &dw) += (double)skv__ob_demand(p);
        if (vp_push(&out, p) < 0)
            rc = SKV_ENOMEM;
    }
    if (rc == SKV_ENOMEM)
        rc = skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    skv__free(s);
    skv__free(w);
    if (rc < 0) {
        skv__free(out.p);
        return rc;
    }
    skv__free(v->p);
    *v = out;
    return 0;
}

/* Drop multi-GPU pods at random while their demand share exceeds x. */
static int drop_multi(vpods *v, size_t *m, size_t nm, double x, double dm,
                      double d, uint64_t *rng, skv_error *err)
{
    bool *keep = skv__calloc(v->n + 1, sizeof(*keep));
    if (!keep)
        return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    for (size_t i = 0; i < v->n; i++)
        keep[i] = true;
    for (size_t left = nm; left > 0 && dm > x * d; left--) {
        size_t j = (size_t)skv__rng_below(rng, left);
        size_t victim = m[j];
        m[j] = m[left - 1];
        keep[victim] = false;
        dm -= (double)skv__ob_demand(&v->p[victim]);
        d -= (double)skv__ob_demand(&v->p[victim]);
    }
    compact(v, keep);
    skv__free(keep);
    return 0;
}

static int vary_multi(vpods *v, double x, uint64_t *rng, skv_error *err)
{
    size_t nm;
    size_t *m = pick_all(v, is_multi, &nm);
    if (!m)
        return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    double dm = demand_of(v, is_multi), d = demand_of(v, NULL);
    int rc = 0;
    if (x > 0 && nm == 0)
        rc = skv__err(err, SKV_EINVAL, "openb vary: multi=%g needs multi-GPU "
                      "pods in the list", x);
    if (rc == 0 && dm > x * d) {
        rc = drop_multi(v, m, nm, x, dm, d, rng, err);
        skv__free(m);
        return rc;
    }
    while (rc == 0 && dm < x * d) {   /* add multi-GPU pods of the list */
        const skv__ob_pod p = v->p[m[skv__rng_below(rng, nm)]];
        dm += (double)skv__ob_demand(&p);
        d += (double)skv__ob_demand(&p);
        if (vp_push(v, &p) < 0)
            rc = skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    }
    skv__free(m);
    return rc;
}

/* Whether some node of model bit m can hold p (GPUs and CPU/memory). */
static bool model_holds(const skv_sim_openb *w, int m, const skv__ob_pod *p)
{
    for (size_t i = 0; i < w->nnodes; i++)
        if (w->nodes[i].model == m && w->nodes[i].gpus >= p->ngpu &&
            w->nodes[i].cpu >= p->cpu && w->nodes[i].mem >= p->mem)
            return true;
    return false;
}

/* A constraint for p: a constrained pod's of the list with the same GPU
 * count, else one model by GPU supply among those that can hold p. */
static uint64_t draw_spec(const skv_sim_openb *w, const vpods *v,
                          const size_t *con, size_t ncon,
                          const skv__ob_pod *p, uint64_t *rng)
{
    size_t same = 0;
    for (size_t i = 0; i < ncon; i++)
        same += v->p[con[i]].ngpu == p->ngpu;
    if (same > 0) {
        size_t k = (size_t)skv__rng_below(rng, same);
        for (size_t i = 0; i < ncon; i++)
            if (v->p[con[i]].ngpu == p->ngpu && k-- == 0)
                return v->p[con[i]].models;
    }
    skv_qty supply[64] = {0}, total = 0;
    for (size_t i = 0; i < w->nnodes; i++)
        if (w->nodes[i].model >= 0 && model_holds(w, w->nodes[i].model, p)) {
            supply[w->nodes[i].model] += w->nodes[i].gpus;
            total += w->nodes[i].gpus;
        }
    if (total == 0)
        return 0;
    skv_qty r = (skv_qty)skv__rng_below(rng, (uint64_t)total);
    for (int m = 0; m < w->nmodels; m++) {
        if (r < supply[m])
            return 1ull << m;
        r -= supply[m];
    }
    return 0;
}

static bool is_constrained(const skv__ob_pod *p)
{
    return p->ngpu > 0 && !p->any_model;
}

static bool is_free_gpu(const skv__ob_pod *p)
{
    return p->ngpu > 0 && p->any_model;
}

static int vary_spec(const skv_sim_openb *w, vpods *v, double x, uint64_t *rng,
                     skv_error *err)
{
    size_t ng, nc, nf;
    size_t *g = pick_all(v, is_gpu, &ng), *c = pick_all(v, is_constrained, &nc),
           *f = pick_all(v, is_free_gpu, &nf);
    int rc = g && c && f ? 0 : skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    size_t want = (size_t)llround(x * (double)ng);
    for (size_t left = nf; rc == 0 && nc < want && left > 0; left--) {
        size_t j = (size_t)skv__rng_below(rng, left);
        skv__ob_pod *p = &v->p[f[j]];
        f[j] = f[left - 1];
        uint64_t models = draw_spec(w, v, c, nc, p, rng);
        if (models == 0)
            continue;     /* no model can hold it: leave it free */
        p->models = models;
        p->any_model = false;
        p->unknown_model = false;
        c[nc++] = (size_t)(p - v->p);
    }
    for (size_t left = nc; rc == 0 && left > want; left--) {
        size_t j = (size_t)skv__rng_below(rng, left);
        skv__ob_pod *p = &v->p[c[j]];
        c[j] = c[left - 1];
        p->any_model = true;
        p->models = 0;
        p->unknown_model = false;
    }
    skv__free(g);
    skv__free(c);
    skv__free(f);
    return rc;
}

static bool is_cpu_only(const skv__ob_pod *p)
{
    return p->ngpu == 0;
}

static int vary_cpu(vpods *v, double x, uint64_t *rng, skv_error *err)
{
    size_t nc;
    size_t *c = pick_all(v, is_cpu_only, &nc);
    if (!c)
        return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    size_t other = v->n - nc;
    size_t want = (size_t)llround(x * (double)other / (1.0 - x));
    int rc = 0;
    if (want > nc && nc == 0)
        rc = skv__err(err, SKV_EINVAL, "openb vary: cpu=%g needs CPU-only "
                      "pods in the list", x);
    for (size_t i = nc; rc == 0 && i < want; i++) {
        const skv__ob_pod p = v->p[c[skv__rng_below(rng, nc)]];
        if (vp_push(v, &p) < 0)
            rc = skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    }
    if (rc == 0 && want < nc) {
        bool *keep = skv__calloc(v->n + 1, sizeof(*keep));
        if (!keep) {
            rc = skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
        } else {
            for (size_t i = 0; i < v->n; i++)
                keep[i] = true;
            for (size_t left = nc; left > want; left--) {
                size_t j = (size_t)skv__rng_below(rng, left);
                keep[c[j]] = false;
                c[j] = c[left - 1];
            }
            compact(v, keep);
            skv__free(keep);
        }
    }
    skv__free(c);
    return rc;
}

static int check_share(double x, const char *what, bool below_one,
                       skv_error *err)
{
    if (x < 0 && !isnan(x))
        return 0;   /* keep */
    if (!(x >= 0 && (below_one ? x < 1 : x <= 1)))
        return skv__err(err, SKV_EINVAL, "openb vary: %s=%g is not in [0, 1%s",
                        what, x, below_one ? ")" : "]");
    return 0;
}

static int copy_nodes(skv_sim_openb *o, const skv_sim_openb *w, skv_error *err)
{
    o->nodes = skv__calloc(w->nnodes + 1, sizeof(*o->nodes));
    if (!o->nodes)
        return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    for (int m = 0; m < w->nmodels; m++) {
        if (!(o->models[m] = skv__strdup(w->models[m])))
            return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
        o->nmodels = m + 1;
    }
    for (size_t i = 0; i < w->nnodes; i++) {
        o->nodes[i] = w->nodes[i];
        if (!(o->nodes[i].name = skv__strdup(w->nodes[i].name)))
            return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
        o->nnodes = i + 1;
    }
    o->capacity = w->capacity;
    return 0;
}

static int apply(vpods *v, const skv_sim_openb *w,
                 const skv_sim_openb_vary_options *o, skv_error *err)
{
    uint64_t rng = o->seed;
    int rc = 0;
    if (o->share_demand >= 0)
        rc = vary_share(v, o->share_demand, &rng, err);
    if (rc == 0 && o->multi_demand >= 0)
        rc = vary_multi(v, o->multi_demand, &rng, err);
    if (rc == 0 && o->spec_share >= 0)
        rc = vary_spec(w, v, o->spec_share, &rng, err);
    if (rc == 0 && o->cpu_share >= 0)
        rc = vary_cpu(v, o->cpu_share, &rng, err);
    if (rc == 0 && v->n == 0)
        rc = skv__err(err, SKV_EINVAL, "openb vary: no pods left");
    return rc;
}

int skv_sim_openb_vary(skv_sim_openb **out, const skv_sim_openb *w,
                       const skv_sim_openb_vary_options *o, skv_error *err)
{
    if (!out || !w || !o)
        return skv__err(err, SKV_EINVAL, "openb vary: NULL argument");
    if (o->version != SKV_SIM_OPENB_VARY_VERSION)
        return skv__err(err, SKV_EVERSION, "openb vary: options version %u "
                        "(expected %u)", o->version, SKV_SIM_OPENB_VARY_VERSION);
    int rc;
    if ((rc = check_share(o->cpu_share, "cpu", true, err)) < 0 ||
        (rc = check_share(o->share_demand, "share", false, err)) < 0 ||
        (rc = check_share(o->multi_demand, "multi", true, err)) < 0 ||
        (rc = check_share(o->spec_share, "spec", false, err)) < 0)
        return rc;
    if (w->npods == 0)
        return skv__err(err, SKV_EINVAL, "openb vary: the workload has no pods");
    vpods v = {0};
    for (size_t i = 0; i < w->npods; i++)
        if (vp_push(&v, &w->pods[i]) < 0) {
            skv__free(v.p);
            return skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
        }
    skv_sim_openb *n = skv__calloc(1, sizeof(*n));
    rc = n ? copy_nodes(n, w, err) : skv__err(err, SKV_ENOMEM, "openb vary: out of memory");
    if (rc == 0)
        rc = apply(&v, w, o, err);
    if (rc < 0) {
        skv__free(v.p);
        skv_sim_openb_free(n);
        return rc;
    }
    n->pods = v.p;
    n->npods = v.n;
    *out = n;
    return 0;
}

/* gpu_spec of a pod: its models joined by '|' ("-none-" for a spec that
 * named no model of the cluster, which reloads the same way). */
static void spec_text(char *buf, size_t len, const skv_sim_openb *w,
                      const skv__ob_pod *p)
{
    buf[0] = '\0';
    if (p->any_model || p->ngpu == 0)
        return;
    if (p->models == 0) {
        snprintf(buf, len, "-none-");
        return;
    }
    size_t off = 0;
    for (int m = 0; m < w->nmodels && off < len; m++)
        if (p->models >> m & 1u)
            off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                    off ? "|" : "", w->models[m]);
}

int skv_sim_openb_write_pods(const skv_sim_openb *w, const char *path,
                             skv_error *err)
{
    if (!w || !path)
        return skv__err(err, SKV_EINVAL, "openb write: NULL argument");
    FILE *f = fopen(path, "w");
    if (!f)
        return skv__err(err, SKV_EIO, "openb write: %s: %s", path,
                        strerror(errno));
    fprintf(f, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    for (size_t i = 0; i < w->npods; i++) {
        const skv__ob_pod *p = &w->pods[i];
        char spec[1024];
        spec_text(spec, sizeof(spec), w, p);
        fprintf(f, "pod-%06zu,%lld,%lld,%u,%lld,%s\n", i, (long long)p->cpu,
                (long long)(p->mem >> 20), p->ngpu, (long long)p->gpu, spec);
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        unlink(path);
        return skv__err(err, SKV_EIO, "openb write: %s: write failed", path);
    }
    return 0;
}
