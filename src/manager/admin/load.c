/* On open: every active key pair of an active user into the verifier,
 * every resource group into the scheduler (inactive ones too: sessions
 * restored from the database may still live there; `active` only stops
 * new submissions) and every user and project policy.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

static int load_keys(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT DISTINCT user FROM keypairs ORDER BY user", err);
    if (rc)
        return rc;
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = skv__mgr_admin_sync_user_keys(
            ctx, (const char *)sqlite3_column_text(st, 0), false, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "list key pairs");
    sqlite3_finalize(st);
    return rc;
}

static int load_groups(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT name, scheduler, selector FROM resource_groups ORDER BY name",
        err);
    if (rc)
        return rc;
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        rc = skv__mgr_admin_sched_group_add(ctx,
            (const char *)sqlite3_column_text(st, 0),
            (const char *)sqlite3_column_text(st, 1),
            (const char *)sqlite3_column_text(st, 2), err);
        if (rc == SKV_EEXIST)   /* loaded before: nothing to do */
            rc = 0;
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "list resource groups");
    sqlite3_finalize(st);
    return rc;
}

int skv__mgr_admin_load(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    if (!ctx || !ctx->db || !ctx->sched || !ctx->verifier)
        return skv__err(err, SKV_EINVAL, "admin load: missing context");
    int rc = load_keys(ctx, err);
    if (!rc)
        rc = load_groups(ctx, err);
    if (!rc)
        rc = skv__mgr_admin_sync_all_policies(ctx, err);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "admin plane loaded: %zu keys",
                 skv_auth_verifier_key_count(ctx->verifier));
    return rc;
}
