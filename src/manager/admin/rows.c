/* Row writers shared by bootstrap and the request handlers: key pairs and
 * resource groups (with their scheduler counterpart).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_key_insert(skv__mgr_admin_ctx *ctx, const char *access_key,
                              const char *secret_key, const char *user,
                              const char *policy, int64_t now_ms,
                              skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "INSERT INTO keypairs (access_key, secret_key, user, resource_policy,"
        " active, created_ms) VALUES (?1, ?2, ?3, ?4, 1, ?5)", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, access_key);
    skv__mgr_admin_bind(st, 2, secret_key);
    skv__mgr_admin_bind(st, 3, user);
    skv__mgr_admin_bind(st, 4, policy && policy[0] ? policy : NULL);
    sqlite3_bind_int64(st, 5, now_ms);
    rc = skv__mgr_admin_done(ctx, st, "insert key pair", err);
    if (rc == SKV_EEXIST)
        rc = skv__err(err, SKV_EEXIST, "access key '%s' exists already",
                      access_key);
    return rc;
}

int skv__mgr_admin_group_insert(skv__mgr_admin_ctx *ctx, const char *name,
                                const char *description, const char *scheduler,
                                const char *selector, const char *lost_policy,
                                uint64_t pending_timeout_ms,
                                const char *session_types, skv_error *err)
{
    if (pending_timeout_ms > (uint64_t)INT64_MAX)
        return skv__err(err, SKV_ERANGE, "resource group '%s': "
                        "pending_timeout_ms too large", name);
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "INSERT INTO resource_groups (name, description, scheduler, selector,"
        " lost_batch_policy, pending_timeout_ms, session_types, active)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1)", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    skv__mgr_admin_bind(st, 2, description);
    skv__mgr_admin_bind(st, 3, scheduler);
    skv__mgr_admin_bind(st, 4, selector);
    skv__mgr_admin_bind(st, 5, lost_policy ? lost_policy : "requeue");
    sqlite3_bind_int64(st, 6, (int64_t)pending_timeout_ms);
    skv__mgr_admin_bind(st, 7, session_types ? session_types : "");
    rc = skv__mgr_admin_done(ctx, st, "insert resource group", err);
    if (rc == SKV_EEXIST)
        rc = skv__err(err, SKV_EEXIST, "resource group '%s' exists already",
                      name);
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
