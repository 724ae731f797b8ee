/* BestFit: the agent with the least resources left after the placement,
 * the sum over CPU, memory and GPU of what remains as a fraction of the
 * agent's capacity (equal weights). Random among equals.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"
#include "simpolicy.h"

#define FIX ((double)(1 << 30))

static double frac(skv_qty left, skv_qty cap)
{
    if (cap <= 0 || cap == SKV_QTY_UNLIMITED)
        return 0;
    return (double)left / (double)cap;
}

static int64_t bestfit_score(void *state, const skv_sched_agent_view *a,
                             const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_node n;
    skv__frag_shape s;
    skv_qty g[SKV__FRAG_MAX_GPU];
    if (!skv__simpol_view(p, &n, g, &s, a, k))
        return SKV_SCHED_SCORE_REJECT;
    double left = 0;
    if (p->slots.cpu >= 0)
        left += frac(n.cpu_free - s.cpu, a->capacity[p->slots.cpu]);
    if (p->slots.mem >= 0)
        left += frac(n.mem_free - s.mem, a->capacity[p->slots.mem]);
    if (n.ngpu > 0)
        left += frac(skv__simpol_gpu_free(&n) - skv__simpol_gpu_demand(&s),
                     (skv_qty)n.ngpu * SKV__FRAG_GPU_UNIT);
    return skv__simpol_compose(p, -(int64_t)(left * FIX));
}

static const skv_sched_selector bestfit_sel = {
    SKV_SCHED_SELECTOR_ABI, "bestfit", skv__simpol_create, skv__simpol_destroy,
    bestfit_score, NULL, NULL};

const skv_sched_selector *skv__simpol_bestfit(void)
{
    return &bestfit_sel;
}
