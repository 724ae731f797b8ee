/* Mirroring the database into the scheduler (per-owner policies): the
 * same functions apply a change and, after a rollback, restore the old
 * state, since they always copy what the connection sees.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_user_policy_name(skv__mgr_admin_ctx *ctx, char *buf,
                                    size_t bufsz, const char *user,
                                    skv_error *err)
{
    buf[0] = '\0';
    int rc = skv__mgr_store_admin_user_policy(ctx->db, user, buf, bufsz,
                                              err);
    if (rc)
        return rc < 0 ? rc : 0;
    /* No policy of its own: the user's oldest active key pair's. */
    rc = skv__mgr_store_admin_key_policy(ctx->db, user, buf, bufsz, err);
    return rc < 0 ? rc : 0;
}

static int sync_owner(skv__mgr_admin_ctx *ctx, skv_sched_scope scope,
                      const char *owner, const char *policy, skv_error *err)
{
    if (!policy[0])
        return skv_sched_policy_set(ctx->sched, scope, owner, NULL, err);
    skv__mgr_store_admin_limits l;
    int rc = skv__mgr_store_admin_policy_get(ctx->db, policy, &l, err);
    if (rc == 0) {    /* dangling reference: treat as no policy */
        rc = skv_sched_policy_set(ctx->sched, scope, owner, NULL, err);
    } else if (rc > 0) {
        skv_sched_policy sp = SKV_SCHED_POLICY_INIT;
        sp.limit = l.max_slots;
        sp.max_concurrent = l.max_concurrent_sessions;
        sp.max_pending = l.max_pending_sessions;
        rc = skv_sched_policy_set(ctx->sched, scope, owner, &sp, err);
    }
    skv_slots_free(l.max_slots);
    return rc;
}

int skv__mgr_admin_sync_user_policy(skv__mgr_admin_ctx *ctx, const char *user,
                                    skv_error *err)
{
    char pol[SKV__ADM_NAME_MAX];
    int rc = skv__mgr_admin_user_policy_name(ctx, pol, sizeof pol, user, err);
    return rc ? rc : sync_owner(ctx, SKV_SCHED_SCOPE_USER, user, pol, err);
}

int skv__mgr_admin_sync_project_policy(skv__mgr_admin_ctx *ctx,
                                       const char *project, skv_error *err)
{
    char pol[SKV__ADM_NAME_MAX] = "";
    int rc = skv__mgr_store_admin_project_policy(ctx->db, project, pol,
                                                 sizeof pol, err);
    if (rc < 0)
        return rc;
    if (!rc)
        pol[0] = '\0';
    return sync_owner(ctx, SKV_SCHED_SCOPE_PROJECT, project, pol, err);
}

int skv__mgr_admin_sync_all_policies(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    char **v;
    size_t n;
    int rc = skv__mgr_store_admin_names(ctx->db, SKV__MGR_STORE_ADMIN_USERS,
                                        &v, &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_admin_sync_user_policy(ctx, v[i], err);
    skv__mgr_store_admin_strv_free(v, n);
    if (rc)
        return rc;
    rc = skv__mgr_store_admin_names(ctx->db, SKV__MGR_STORE_ADMIN_PROJECTS,
                                    &v, &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_admin_sync_project_policy(ctx, v[i], err);
    skv__mgr_store_admin_strv_free(v, n);
    return rc;
}
