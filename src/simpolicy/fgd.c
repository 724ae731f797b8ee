/* FGD, Fragmentation Gradient Descent (Weng et al., USENIX ATC'23): the
 * agent whose expected GPU fragmentation against the workload's task mix
 * (types weighted by how many tasks they have) grows least; ties at random
 * as in the paper's Kubernetes scheduler. Shares the measure with the
 * "frag" selector (src/sched/selector_frag*.c); config as there.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"
#include "simpolicy.h"

static int fgd_create(void **state, const char *config, skv_error *err)
{
    return skv__frag_selector_create(state, config, &skv__frag_params_fgd, err);
}

static const skv_sched_selector fgd_sel = {
    SKV_SCHED_SELECTOR_ABI, "fgd", fgd_create, skv__frag_selector_destroy,
    skv__frag_selector_score, NULL, NULL};

const skv_sched_selector *skv__simpol_fgd(void)
{
    return &fgd_sel;
}
