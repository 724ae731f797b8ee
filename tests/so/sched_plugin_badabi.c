/* Test plugin for the scheduler built for another ABI (must be refused).
 * SPDX-License-Identifier: Apache-2.0 */
#include "sokovan/sched.h"

static int64_t score(void *st, const skv_sched_agent_view *a,
                     const skv_sched_kernel_view *k)
{
    (void)st;
    (void)a;
    (void)k;
    return 0;
}

static const skv_sched_selector sel = {999, "test-badabi", NULL, NULL, score,
                                       NULL, NULL};

const skv_sched_selector *skv_sched_selector_plugin(void);
__attribute__((visibility("default"))) const skv_sched_selector *
skv_sched_selector_plugin(void)
{
    return &sel;
}
