/* What the manager core asks before accepting a submission.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

static int check_args(skv__mgr_admin_ctx *ctx, const void *out,
                      const char *name, const char *what, skv_error *err)
{
    if (!ctx || !ctx->db || !out || !name)
        return skv__err(err, SKV_EINVAL, "admin %s: NULL argument", what);
    return 0;
}

int skv__mgr_admin_user(skv__mgr_admin_ctx *ctx, skv__mgr_user_info *out,
                        const char *user, skv_error *err)
{
    int rc = check_args(ctx, out, user, "user", err);
    if (rc || skv__mgr_admin_cached(ctx, 'u', user, NULL, NULL, out,
                                    sizeof *out))
        return rc;
    skv__mgr_store_admin_user_row row;
    rc = skv__mgr_store_admin_user_get(ctx->db, user, &row, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "user '%s' does not exist", user);
    if (rc < 0)
        return rc;
    memset(out, 0, sizeof *out);
    snprintf(out->domain, sizeof out->domain, "%s", row.domain);
    snprintf(out->role, sizeof out->role, "%s", row.role);
    out->active = row.active;
    skv__mgr_admin_remember(ctx, 'u', user, NULL, NULL, out, sizeof *out);
    return 0;
}

/* The user, which must be active. */
static int active_user(skv__mgr_admin_ctx *ctx, skv__mgr_user_info *u,
                       const char *user, skv_error *err)
{
    int rc = skv__mgr_admin_user(ctx, u, user, err);
    if (!rc && !u->active)
        rc = skv__err(err, SKV_EPERM, "user '%s' is deactivated", user);
    return rc;
}

static int in_project(skv__mgr_admin_ctx *ctx, const char *user,
                      const char *project, skv_error *err)
{
    skv__mgr_user_info u;
    int rc = active_user(ctx, &u, user, err);
    if (rc)
        return rc;
    bool active;
    rc = skv__mgr_store_admin_project_active(ctx->db, project, &active, err);
    if (rc <= 0)
        return rc < 0 ? rc : skv__err(err, SKV_ENOENT, "project '%s' does "
                                      "not exist", project);
    if (!active)
        return skv__err(err, SKV_EPERM, "project '%s' is deactivated",
                        project);
    /* The default project is open to every user. */
    if (strcmp(project, "default") == 0)
        return 0;
    rc = skv__mgr_store_admin_user_member(ctx->db, user, project, err);
    if (rc < 0)
        return rc;
    return rc ? 0 : skv__err(err, SKV_EPERM, "user '%s' is not a member of "
                             "project '%s'", user, project);
}

int skv__mgr_admin_user_in_project(skv__mgr_admin_ctx *ctx, const char *user,
                                   const char *project, skv_error *err)
{
    char ok = 1;
    int rc = check_args(ctx, project, user, "user_in_project", err);
    if (rc || skv__mgr_admin_cached(ctx, 'p', user, project, NULL, &ok, 1))
        return rc;
    rc = in_project(ctx, user, project, err);
    if (!rc)
        skv__mgr_admin_remember(ctx, 'p', user, project, NULL, &ok, 1);
    return rc;
}
