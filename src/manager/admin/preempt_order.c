/* A resource group's preemption settings as the scheduler holds them: the
 * stored row (admin_preempt.c) mirrored on change and on load, the order
 * included, so a restarted manager chooses victims as before.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_preempt_order(const char *name)
{
    if (strcmp(name, "lowest-priority") == 0)
        return SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY;
    if (strcmp(name, "newest") == 0)
        return SKV_SCHED_PREEMPT_ORDER_NEWEST;
    return -1;
}

int skv__mgr_admin_preempt_mirror(skv__mgr_admin_ctx *ctx, const char *group,
                                  const skv__mgr_store_preempt *p,
                                  skv_error *err)
{
    int rc = skv_sched_group_set_preemption(ctx->sched, group, p->on > 0,
                                            p->min_runtime_ms, err);
    /* a row from before the column (or a blank one) keeps the default */
    int order = p->order[0] ? skv__mgr_admin_preempt_order(p->order) : 0;
    if (!rc && order < 0)
        return skv__err(err, SKV_ESTATE, "resource group '%s': stored "
                        "preempt_order '%s' is not 'lowest-priority' or "
                        "'newest'", group, p->order);
    return rc ? rc : skv_sched_group_set_preempt_order(
                         ctx->sched, group, (skv_sched_preempt_order)order,
                         err);
}
