/* Shared plumbing of the baseline policies (see simpolicy.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"
#include "simpolicy.h"

int skv__simpol_create(void **state, const char *config, skv_error *err)
{
    uint64_t seed = 0;
    if (config && *config) {
        char *e;
        if (strncmp(config, "seed=", 5) != 0)
            return skv__err(err, SKV_EINVAL, "policy config '%s': expected "
                            "seed=N", config);
        errno = 0;
        seed = strtoull(config + 5, &e, 10);
        if (e == config + 5 || *e || errno)
            return skv__err(err, SKV_EINVAL, "policy config '%s': bad seed",
                            config);
    }
    skv__simpol *p = skv__calloc(1, sizeof(*p));
    if (!p)
        return skv__err(err, SKV_ENOMEM, "policy: out of memory");
    p->rng = seed;
    p->slots.cpu = p->slots.mem = p->slots.whole = p->slots.share = -1;
    *state = p;
    return 0;
}

void skv__simpol_destroy(void *state)
{
    skv__simpol *p = state;
    if (!p)
        return;
    skv__free(p->extra);
    skv__free(p);
}

int64_t skv__simpol_compose(skv__simpol *p, int64_t primary)
{
    const int64_t lim = (int64_t)1 << 40;
    primary = primary > lim ? lim : primary < -lim ? -lim : primary;
    return primary * (1 << 20) + (int64_t)(skv__rng_next(&p->rng) & 0xFFFFF);
}

bool skv__simpol_view(skv__simpol *p, skv__frag_node *node, skv_qty *gbuf,
                      skv__frag_shape *shape, const skv_sched_agent_view *a,
                      const skv_sched_kernel_view *k)
{
    skv__frag_slots_resolve(&p->slots, a);
    skv__frag_view_shape(shape, &p->slots, k);
    /* one GPU per fractional share, as in the FGD model (see
     * skv__frag_view_trial_gpu) */
    if (skv__simpol_sharing(shape) && skv__frag_view_trial_gpu(a, k) < 0)
        return false;
    return skv__frag_view_node(node, gbuf, &p->slots, -1, a) == 0;
}

skv_qty skv__simpol_gpu_free(const skv__frag_node *n)
{
    skv_qty t = 0;
    for (int i = 0; i < n->ngpu; i++)
        t += n->gpu_free[i];
    return t;
}

skv_qty skv__simpol_gpu_demand(const skv__frag_shape *s)
{
    return (skv_qty)s->ngpu * s->gpu;
}
