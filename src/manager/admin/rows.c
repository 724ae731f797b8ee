/* Row writers shared by bootstrap and the request handlers: key pairs and
 * resource groups (with their scheduler counterpart).
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_int.h"

int skv__mgr_admin_key_insert(skv__mgr_admin_ctx *ctx, const char *access_key,
                              const char *secret_key, const char *user,
                              const char *policy, int64_t now_ms,
                              skv_error *err)
{
    int rc = skv__mgr_store_admin_key_insert(ctx->db, access_key, secret_key,
                                             user, policy, now_ms, err);
    if (rc == SKV_EEXIST)
        rc = skv__err(err, SKV_EEXIST, "access key '%s' exists already",
                      access_key);
    return rc;
}

int skv__mgr_admin_group_insert(skv__mgr_admin_ctx *ctx,
                                const skv__mgr_store_admin_group *g,
                                skv_error *err)
{
    int rc = skv__mgr_store_admin_group_insert(ctx->db, g, err);
    if (rc == SKV_EEXIST)
        rc = skv__err(err, SKV_EEXIST, "resource group '%s' exists already",
                      g->name);
    return rc;
}

int skv__mgr_admin_sched_group_add(skv__mgr_admin_ctx *ctx, const char *name,
                                   const char *scheduler, const char *selector,
                                   skv_error *err)
{
    skv_sched_group_options o = SKV_SCHED_GROUP_OPTIONS_INIT;
    o.sequencer = scheduler;
    o.selector = selector;
    int rc = skv_sched_group_add(ctx->sched, name, &o, err);
    if (rc)
        skv__err_prefix(err, "resource group '%s'", name);
    return rc;
}
