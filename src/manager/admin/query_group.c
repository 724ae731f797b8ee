/* Resource-group and limit queries of the manager core.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"
#include "sokovan/node.h"

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
    int rc = skv__mgr_store_admin_group_admits(ctx->db, group, active, types,
                                               tsz, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "resource group '%s' does not "
                        "exist", group);
    return rc < 0 ? rc : 0;
}

static int allows(skv__mgr_admin_ctx *ctx, const char *user,
                  const char *group, const char *session_type, skv_error *err)
{
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
    bool dactive;
    rc = skv__mgr_store_admin_domain_active(ctx->db, u.domain, &dactive, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || !dactive)
        return skv__err(err, SKV_EPERM, "domain '%s' of user '%s' is %s",
                        u.domain, user, rc ? "deactivated" : "missing");
    rc = skv__mgr_store_admin_domain_has_group(ctx->db, u.domain, group, err);
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

int skv__mgr_admin_group_allows(skv__mgr_admin_ctx *ctx, const char *user,
                                const char *group, const char *session_type,
                                skv_error *err)
{
    if (!ctx || !ctx->db || !user || !group || !session_type)
        return skv__err(err, SKV_EINVAL, "admin group_allows: NULL argument");
    char ok = 1;
    if (skv__mgr_admin_cached(ctx, 'g', user, group, session_type, &ok, 1))
        return 0;
    int rc = allows(ctx, user, group, session_type, err);
    if (!rc)
        skv__mgr_admin_remember(ctx, 'g', user, group, session_type, &ok, 1);
    return rc;
}

int skv__mgr_admin_group(skv__mgr_admin_ctx *ctx, skv__mgr_group_info *out,
                         const char *group, skv_error *err)
{
    if (!ctx || !ctx->db || !out || !group)
        return skv__err(err, SKV_EINVAL, "admin group: NULL argument");
    if (skv__mgr_admin_cached(ctx, 'G', group, NULL, NULL, out, sizeof *out))
        return 0;
    skv__mgr_group_info gi;
    memset(&gi, 0, sizeof gi);
    int rc = skv__mgr_store_admin_group_info(ctx->db, group,
        gi.lost_batch_policy, sizeof gi.lost_batch_policy,
        &gi.pending_timeout_ms, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "resource group '%s' does not "
                        "exist", group);
    if (rc < 0)
        return rc;
    if (!gi.lost_batch_policy[0])
        snprintf(gi.lost_batch_policy, sizeof gi.lost_batch_policy,
                 "requeue");
    skv__mgr_store_preempt p;
    rc = skv__mgr_store_admin_group_preempt(ctx->db, group, &p, err);
    if (rc < 0)
        return rc;
    snprintf(gi.preempt_mode, sizeof gi.preempt_mode, "%s",
             p.mode[0] ? p.mode : "requeue");
    skv__mgr_store_glimits l;
    rc = skv__mgr_store_admin_group_limits(ctx->db, group, &l, err);
    if (rc < 0)
        return rc;
    gi.idle_timeout_ms = l.idle_timeout_ms > 0 ? (uint64_t)l.idle_timeout_ms
                                               : 0;
    gi.max_lifetime_ms = l.max_lifetime_ms > 0 ? (uint64_t)l.max_lifetime_ms
                                               : 0;
    *out = gi;
    skv__mgr_admin_remember(ctx, 'G', group, NULL, NULL, &gi, sizeof gi);
    return 0;
}

int skv__mgr_admin_group_numa(skv__mgr_admin_ctx *ctx, char *out,
                              size_t outsz, const char *group,
                              skv_error *err)
{
    if (!ctx || !ctx->db || !out || !outsz || !group)
        return skv__err(err, SKV_EINVAL, "admin group_numa: NULL argument");
    char pol[24];      /* the longest policy name fits */
    if (skv__mgr_admin_cached(ctx, 'n', group, NULL, NULL, pol, sizeof pol)) {
        snprintf(out, outsz, "%s", pol);
        return 0;
    }
    int rc = skv__mgr_store_admin_group_numa(ctx->db, group, out, outsz, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "resource group '%s' does not "
                        "exist", group);
    if (rc < 0)
        return rc;
    if (!out[0])            /* a blank row: the policy before step 6 */
        snprintf(out, outsz, "%s", skv_node_policy_name(SKV_NODE_PREFER_SINGLE));
    skv_node_policy np;
    if (skv_node_policy_parse(&np, out, NULL))
        return skv__err(err, SKV_ESTATE, "resource group '%s': stored "
                        "numa_policy '%s' is not 'prefer-single-node' or "
                        "'interleaved'", group, out);
    /* Only a whole name is kept: a caller's short buffer clipped it. */
    if (strlen(out) < sizeof pol && strlen(out) + 1 < outsz) {
        snprintf(pol, sizeof pol, "%s", out);
        skv__mgr_admin_remember(ctx, 'n', group, NULL, NULL, pol, sizeof pol);
    }
    return 0;
}

static int limits(skv__mgr_admin_ctx *ctx, skv__mgr_user_limits *out,
                  const char *user, skv_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_USERS, "user",
                                 user, err);
    char pol[SKV__ADM_NAME_MAX];
    if (!rc)
        rc = skv__mgr_admin_user_policy_name(ctx, pol, sizeof pol, user, err);
    if (rc || !pol[0])
        return rc;
    skv__mgr_store_admin_limits l;
    rc = skv__mgr_store_admin_policy_get(ctx->db, pol, &l, err);
    skv_slots_free(l.max_slots);
    if (rc > 0) {
        out->max_cluster_size = l.max_cluster_size;
        out->max_session_lifetime_ms = l.max_session_lifetime_ms;
        out->idle_timeout_ms = l.idle_timeout_ms;
        snprintf(out->policy, sizeof out->policy, "%s", pol);
    }
    return rc < 0 ? rc : 0;
}

int skv__mgr_admin_user_limits(skv__mgr_admin_ctx *ctx,
                               skv__mgr_user_limits *out, const char *user,
                               skv_error *err)
{
    if (!ctx || !ctx->db || !out || !user)
        return skv__err(err, SKV_EINVAL, "admin user_limits: NULL argument");
    if (skv__mgr_admin_cached(ctx, 'l', user, NULL, NULL, out, sizeof *out))
        return 0;
    int rc = limits(ctx, out, user, err);
    if (!rc)
        skv__mgr_admin_remember(ctx, 'l', user, NULL, NULL, out, sizeof *out);
    return rc;
}
