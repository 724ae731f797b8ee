/* On open: every active key pair of an active user into the verifier,
 * every resource group into the scheduler (inactive ones too: sessions
 * restored from the database may still live there; `active` only stops
 * new submissions) and every user and project policy.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_int.h"

static int load_keys(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    char **users;
    size_t n;
    int rc = skv__mgr_store_admin_key_users(ctx->db, &users, &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_admin_sync_user_keys(ctx, users[i], false, err);
    skv__mgr_store_admin_strv_free(users, n);
    return rc;
}

static int add_group(void *arg, const char *name, const char *scheduler,
                     const char *selector, skv_error *err)
{
    skv__mgr_admin_ctx *ctx = arg;
    int rc = skv__mgr_admin_sched_group_add(ctx, name, scheduler, selector,
                                            err);
    if (rc == SKV_EEXIST)
        return 0;                       /* loaded before: nothing to do */
    skv__mgr_store_preempt p;
    if (!rc && (rc = skv__mgr_store_admin_group_preempt(ctx->db, name, &p,
                                                        err)) > 0)
        rc = skv__mgr_admin_preempt_mirror(ctx, name, &p, err);
    return rc;
}

int skv__mgr_admin_load(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    if (!ctx || !ctx->db || !ctx->sched || !ctx->verifier)
        return skv__err(err, SKV_EINVAL, "admin load: missing context");
    int rc = load_keys(ctx, err);
    if (!rc)
        rc = skv__mgr_store_admin_group_each(ctx->db, add_group, ctx, err);
    if (!rc)
        rc = skv__mgr_admin_sync_all_policies(ctx, err);
    if (!rc)
        rc = skv__mgr_admin_sync_all_quotas(ctx, err);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "admin plane loaded: %zu keys",
                 skv_auth_verifier_key_count(ctx->verifier));
    return rc;
}
