/* Private to src/simpolicy: the FGD paper's baseline placement policies
 * as scheduler selector plugins (Random, DotProd, GpuClustering,
 * GpuPacking, BestFit, FGD). They only choose the agent; the devices on it
 * come from the scheduler's allocation map, as for every selector.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SIMPOLICY_H
#define SKV_SIMPOLICY_H

#include "sokovan/sched.h"
#include "../sched/selector_frag.h"

/* State shared by the simple policies: a seeded random tie-breaker (the
 * paper's Kubernetes scheduler breaks score ties at random) and resolved
 * slot indexes. Config: "seed=N" (empty or NULL: seed 0). */
typedef struct skv__simpol {
    uint64_t rng;
    skv__frag_slots slots;
    void *extra;               /* policy-specific (GpuClustering) */
} skv__simpol;

int skv__simpol_create(void **state, const char *config, skv_error *err);
void skv__simpol_destroy(void *state);

/* A primary score (higher wins) with 20 random low bits for ties. The
 * primary value is clamped to +-2^40. */
int64_t skv__simpol_compose(skv__simpol *p, int64_t primary);

/* The agent and kernel in the measure's terms (model ignored). False when
 * the agent has more devices than the measure handles, or a fractional
 * share would not sit on one GPU (the caller rejects the agent). */
bool skv__simpol_view(skv__simpol *p, skv__frag_node *node, skv_qty *gbuf,
                      skv__frag_shape *shape, const skv_sched_agent_view *a,
                      const skv_sched_kernel_view *k);

/* Free GPU on a node (milli-GPU) and the kernel's GPU demand. */
skv_qty skv__simpol_gpu_free(const skv__frag_node *n);
skv_qty skv__simpol_gpu_demand(const skv__frag_shape *s);
static inline bool skv__simpol_sharing(const skv__frag_shape *s)
{
    return s->ngpu == 1 && s->gpu < SKV__FRAG_GPU_UNIT;
}

const skv_sched_selector *skv__simpol_random(void);
const skv_sched_selector *skv__simpol_dotprod(void);
const skv_sched_selector *skv__simpol_gpuclustering(void);
const skv_sched_selector *skv__simpol_gpupacking(void);
const skv_sched_selector *skv__simpol_bestfit(void);
const skv_sched_selector *skv__simpol_fgd(void);

#endif
