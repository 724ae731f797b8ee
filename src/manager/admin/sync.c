/* Mirroring the database into the scheduler (per-owner policies): the
 * same functions apply a change and, after a rollback, restore the old
 * state, since they always copy what the connection sees.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_policy_get(skv__mgr_admin_ctx *ctx, skv_sched_policy *out,
                              skv_slots **limit, uint32_t *max_cluster,
                              uint64_t *max_lifetime, const char *name,
                              skv_error *err)
{
    static const skv_sched_policy init = SKV_SCHED_POLICY_INIT;
    *out = init;
    *limit = NULL;
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT max_slots, max_concurrent_sessions, max_pending_sessions,"
        " max_cluster_size, max_session_lifetime_ms FROM resource_policies"
        " WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        const void *b = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        rc = b && n > 0 ? skv_slots_decode(limit, b, (size_t)n, NULL, err) : 0;
        out->limit = *limit;
        out->max_concurrent = (uint32_t)sqlite3_column_int64(st, 1);
        out->max_pending = (uint32_t)sqlite3_column_int64(st, 2);
        if (max_cluster)
            *max_cluster = (uint32_t)sqlite3_column_int64(st, 3);
        if (max_lifetime)
            *max_lifetime = (uint64_t)sqlite3_column_int64(st, 4);
        if (!rc)
            rc = 1;
    } else if (s != SQLITE_DONE) {
        rc = skv__mgr_admin_dberr(ctx, err, "read resource policy");
    }
    sqlite3_finalize(st);
    return rc;
}

int skv__mgr_admin_user_policy_name(skv__mgr_admin_ctx *ctx, char *buf,
                                    size_t bufsz, const char *user,
                                    skv_error *err)
{
    buf[0] = '\0';
    int rc = skv__mgr_admin_lookup(ctx, buf, bufsz,
        "SELECT resource_policy FROM users WHERE name=?1"
        " AND resource_policy IS NOT NULL AND resource_policy<>''",
        user, NULL, err);
    if (rc)
        return rc < 0 ? rc : 0;
    /* No policy of its own: the user's oldest active key pair's. */
    rc = skv__mgr_admin_lookup(ctx, buf, bufsz,
        "SELECT resource_policy FROM keypairs WHERE user=?1 AND active=1"
        " AND resource_policy IS NOT NULL AND resource_policy<>''"
        " ORDER BY created_ms, access_key LIMIT 1", user, NULL, err);
    return rc < 0 ? rc : 0;
}

static int sync_owner(skv__mgr_admin_ctx *ctx, skv_sched_scope scope,
                      const char *owner, const char *policy, skv_error *err)
{
    if (!policy[0])
        return skv_sched_policy_set(ctx->sched, scope, owner, NULL, err);
    skv_sched_policy sp;
    skv_slots *limit = NULL;
    int rc = skv__mgr_admin_policy_get(ctx, &sp, &limit, NULL, NULL, policy,
                                       err);
    if (rc == 0)    /* dangling reference: treat as no policy */
        rc = skv_sched_policy_set(ctx->sched, scope, owner, NULL, err);
    else if (rc > 0)
        rc = skv_sched_policy_set(ctx->sched, scope, owner, &sp, err);
    skv_slots_free(limit);
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
    int rc = skv__mgr_admin_lookup(ctx, pol, sizeof pol,
        "SELECT resource_policy FROM projects WHERE name=?1"
        " AND resource_policy IS NOT NULL", project, NULL, err);
    if (rc < 0)
        return rc;
    if (!rc)
        pol[0] = '\0';
    return sync_owner(ctx, SKV_SCHED_SCOPE_PROJECT, project, pol, err);
}

/* Every name of one table, as a vector (owners to mirror). */
static int all_names(skv__mgr_admin_ctx *ctx, char ***v, size_t *n,
                     const char *sql, skv_error *err)
{
    *v = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, sql, err);
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        char **slot = skv__mgr_admin_grow((void **)v, n, sizeof(char *));
        if (!slot || !(*slot = skv__mgr_admin_col_dup(st, 0)))
            rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "list names");
    sqlite3_finalize(st);
    if (rc) {
        skv__mgr_admin_strv_free(*v, *n);
        *v = NULL;
        *n = 0;
    }
    return rc;
}

int skv__mgr_admin_sync_all_policies(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    char **v;
    size_t n;
    int rc = all_names(ctx, &v, &n, "SELECT name FROM users ORDER BY name",
                       err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_admin_sync_user_policy(ctx, v[i], err);
    skv__mgr_admin_strv_free(v, n);
    if (rc)
        return rc;
    rc = all_names(ctx, &v, &n, "SELECT name FROM projects ORDER BY name",
                   err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_admin_sync_project_policy(ctx, v[i], err);
    skv__mgr_admin_strv_free(v, n);
    return rc;
}
