/* DotProd (Tetris-style alignment): the dot product of the kernel's demand
 * and the agent's free resources, each as a fraction of the agent's
 * capacity, over CPU, memory and GPU; the smallest product wins (the
 * demand lands where it aligns least with what is free, i.e. packs).
 * The GPU term of a sharing task uses the device the map would give it.
 * Random among equals.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"
#include "simpolicy.h"

#define FIX ((double)(1 << 30))

static double term(skv_qty req, skv_qty free_, skv_qty cap)
{
    if (cap <= 0 || cap == SKV_QTY_UNLIMITED)
        return 0;
    return (double)req / (double)cap * ((double)free_ / (double)cap);
}

static int64_t dotprod_score(void *state, const skv_sched_agent_view *a,
                             const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_node n;
    skv__frag_shape s;
    skv_qty g[SKV__FRAG_MAX_GPU];
    if (!skv__simpol_view(p, &n, g, &s, a, k))
        return SKV_SCHED_SCORE_REJECT;
    double d = 0;
    if (p->slots.cpu >= 0)
        d += term(s.cpu, n.cpu_free, a->capacity[p->slots.cpu]);
    if (p->slots.mem >= 0)
        d += term(s.mem, n.mem_free, a->capacity[p->slots.mem]);
    if (skv__simpol_sharing(&s)) {
        int dev = skv__frag_view_trial_gpu(a, k);
        if (dev < 0)
            return SKV_SCHED_SCORE_REJECT;
        d += term(s.gpu, n.gpu_free[dev], SKV__FRAG_GPU_UNIT);
    } else if (n.ngpu > 0) {
        skv_qty cap = (skv_qty)n.ngpu * SKV__FRAG_GPU_UNIT;
        d += term(skv__simpol_gpu_demand(&s), skv__simpol_gpu_free(&n), cap);
    }
    return skv__simpol_compose(p, -(int64_t)(d * FIX));
}

static const skv_sched_selector dotprod_sel = {
    SKV_SCHED_SELECTOR_ABI, "dotprod", skv__simpol_create, skv__simpol_destroy,
    dotprod_score, NULL, NULL};

const skv_sched_selector *skv__simpol_dotprod(void)
{
    return &dotprod_sel;
}
