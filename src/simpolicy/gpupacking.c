/* GpuPacking: first onto GPUs already in use (a sharing task that fits on a
 * partly used device), then onto idle GPUs of agents already running
 * something, and only then onto idle agents. Random among equals.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"
#include "simpolicy.h"

static bool agent_active(const skv__frag_node *n)
{
    for (int i = 0; i < n->ngpu; i++)
        if (n->gpu_free[i] < SKV__FRAG_GPU_UNIT)
            return true;
    return false;
}

static int64_t gpupacking_score(void *state, const skv_sched_agent_view *a,
                                const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_node n;
    skv__frag_shape s;
    skv_qty g[SKV__FRAG_MAX_GPU];
    if (!skv__simpol_view(p, &n, g, &s, a, k))
        return SKV_SCHED_SCORE_REJECT;
    int tier = agent_active(&n) ? 1 : 0;
    if (skv__simpol_sharing(&s)) {
        int dev = skv__frag_view_trial_gpu(a, k);
        if (dev < 0)
            return SKV_SCHED_SCORE_REJECT;
        if (n.gpu_free[dev] < SKV__FRAG_GPU_UNIT)
            tier = 2;
    }
    return skv__simpol_compose(p, tier);
}

static const skv_sched_selector gpupacking_sel = {
    SKV_SCHED_SELECTOR_ABI, "gpupacking", skv__simpol_create,
    skv__simpol_destroy, gpupacking_score, NULL, NULL};

const skv_sched_selector *skv__simpol_gpupacking(void)
{
    return &gpupacking_sel;
}
