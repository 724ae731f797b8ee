/* Random: any agent the kernel fits on, uniformly at random (seeded).
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"
#include "simpolicy.h"

static int64_t random_score(void *state, const skv_sched_agent_view *a,
                            const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_node n;
    skv__frag_shape s;
    skv_qty g[SKV__FRAG_MAX_GPU];
    if (!skv__simpol_view(p, &n, g, &s, a, k))
        return SKV_SCHED_SCORE_REJECT;
    /* 62 random bits: equal draws (and so index tie-breaks) are negligible */
    return (int64_t)(skv__rng_next(&p->rng) >> 2);
}

static const skv_sched_selector random_sel = {
    SKV_SCHED_SELECTOR_ABI, "random", skv__simpol_create, skv__simpol_destroy,
    random_score, NULL, NULL};

const skv_sched_selector *skv__simpol_random(void)
{
    return &random_sel;
}
