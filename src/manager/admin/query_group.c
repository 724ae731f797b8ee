/* Resource-group and limit queries of the manager core.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

/* Whether the comma list csv ("" = everything) contains item. */
static bool csv_has(const char *csv, const char *item)
{
    if (!csv[0])
        return true;
    size_t n = strlen(item);
    for (const char *s = csv; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, item, n) == 0)
            return true;
        s = e ? e + 1 : s + len;
    }
    return false;
}

static int group_row(skv__mgr_admin_ctx *ctx, bool *active, char *types,
                     size_t tsz, const char *group, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT active, session_types"
                                    " FROM resource_groups WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, group);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        *active = sqlite3_column_int(st, 0) != 0;
        const unsigned char *t = sqlite3_column_text(st, 1);
        snprintf(types, tsz, "%s", t ? (const char *)t : "");
    } else if (s == SQLITE_DONE) {
        rc = skv__err(err, SKV_ENOENT, "resource group '%s' does not exist",
                      group);
    } else {
        rc = skv__mgr_admin_dberr(ctx, err, "read resource group");
    }
    sqlite3_finalize(st);
    return rc;
}

int skv__mgr_admin_group_allows(skv__mgr_admin_ctx *ctx, const char *user,
                                const char *group, const char *session_type,
                                skv_error *err)
{
    if (!ctx || !ctx->db || !user || !group || !session_type)
        return skv__err(err, SKV_EINVAL, "admin group_allows: NULL argument");
    skv__mgr_user_info u;
    bool active = false;
    char types[256];
    int rc = skv__mgr_admin_user(ctx, &u, user, err);
    if (!rc && !u.active)
        rc = skv__err(err, SKV_EPERM, "user '%s' is deactivated", user);
    if (!rc)
        rc = group_row(ctx, &active, types, sizeof types, group, err);
    if (rc)
        return rc;
    if (!active)
        return skv__err(err, SKV_EPERM, "resource group '%s' is deactivated",
                        group);
    char dactive[8] = "";
    rc = skv__mgr_admin_lookup(ctx, dactive, sizeof dactive,
        "SELECT active FROM domains WHERE name=?1", u.domain, NULL, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || strcmp(dactive, "0") == 0)
        return skv__err(err, SKV_EPERM, "domain '%s' of user '%s' is %s",
                        u.domain, user, rc ? "deactivated" : "missing");
    rc = skv__mgr_admin_lookup(ctx, NULL, 0, "SELECT 1 FROM domain_groups"
        " WHERE domain=?1 AND resource_group=?2", u.domain, group, err);
    if (rc == 0)
        return skv__err(err, SKV_EPERM, "domain '%s' (user '%s') may not use "
                        "resource group '%s'", u.domain, user, group);
    if (rc < 0)
        return rc;
    if (!csv_has(types, session_type))
        return skv__err(err, SKV_EPERM, "resource group '%s' does not allow "
                        "%s sessions (allowed: %s)", group, session_type,
                        types);
    return 0;
}

int skv__mgr_admin_group(skv__mgr_admin_ctx *ctx, skv__mgr_group_info *out,
                         const char *group, skv_error *err)
{
    if (!ctx || !ctx->db || !out || !group)
        return skv__err(err, SKV_EINVAL, "admin group: NULL argument");
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT lost_batch_policy,"
        " pending_timeout_ms FROM resource_groups WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, group);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        const unsigned char *p = sqlite3_column_text(st, 0);
        snprintf(out->lost_batch_policy, sizeof out->lost_batch_policy, "%s",
                 p ? (const char *)p : "requeue");
        int64_t t = sqlite3_column_int64(st, 1);
        out->pending_timeout_ms = t > 0 ? (uint64_t)t : 0;
    } else if (s == SQLITE_DONE) {
        rc = skv__err(err, SKV_ENOENT, "resource group '%s' does not exist",
                      group);
    } else {
        rc = skv__mgr_admin_dberr(ctx, err, "read resource group");
    }
    sqlite3_finalize(st);
    return rc;
}

int skv__mgr_admin_user_limits(skv__mgr_admin_ctx *ctx,
                               skv__mgr_user_limits *out, const char *user,
                               skv_error *err)
{
    if (!ctx || !ctx->db || !out || !user)
        return skv__err(err, SKV_EINVAL, "admin user_limits: NULL argument");
    memset(out, 0, sizeof *out);
    int rc = skv__mgr_admin_need(ctx, "users", "user", user, err);
    char pol[SKV__ADM_NAME_MAX];
    if (!rc)
        rc = skv__mgr_admin_user_policy_name(ctx, pol, sizeof pol, user, err);
    if (rc || !pol[0])
        return rc;
    skv_sched_policy sp;
    skv_slots *limit = NULL;
    rc = skv__mgr_admin_policy_get(ctx, &sp, &limit, &out->max_cluster_size,
                                   &out->max_session_lifetime_ms, pol, err);
    skv_slots_free(limit);
    return rc < 0 ? rc : 0;
}
