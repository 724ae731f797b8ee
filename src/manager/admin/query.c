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
    if (rc)
        return rc;
    sqlite3_stmt *st;
    rc = skv__mgr_admin_prepare(ctx, &st, "SELECT domain, role, active FROM"
                                " users WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, user);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        const unsigned char *d = sqlite3_column_text(st, 0);
        const unsigned char *r = sqlite3_column_text(st, 1);
        snprintf(out->domain, sizeof out->domain, "%s", d ? (const char *)d
                                                          : "");
        snprintf(out->role, sizeof out->role, "%s", r ? (const char *)r : "");
        out->active = sqlite3_column_int(st, 2) != 0;
    } else if (s == SQLITE_DONE) {
        rc = skv__err(err, SKV_ENOENT, "user '%s' does not exist", user);
    } else {
        rc = skv__mgr_admin_dberr(ctx, err, "read user");
    }
    sqlite3_finalize(st);
    return rc;
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

int skv__mgr_admin_user_in_project(skv__mgr_admin_ctx *ctx, const char *user,
                                   const char *project, skv_error *err)
{
    skv__mgr_user_info u;
    int rc = check_args(ctx, project, user, "user_in_project", err);
    if (!rc)
        rc = active_user(ctx, &u, user, err);
    if (rc)
        return rc;
    char active[8] = "";
    rc = skv__mgr_admin_lookup(ctx, active, sizeof active,
        "SELECT active FROM projects WHERE name=?1", project, NULL, err);
    if (rc <= 0)
        return rc < 0 ? rc : skv__err(err, SKV_ENOENT, "project '%s' does "
                                      "not exist", project);
    if (strcmp(active, "0") == 0)
        return skv__err(err, SKV_EPERM, "project '%s' is deactivated",
                        project);
    /* The default project is open to every user. */
    if (strcmp(project, "default") == 0)
        return 0;
    rc = skv__mgr_admin_lookup(ctx, NULL, 0, "SELECT 1 FROM user_projects"
                               " WHERE user=?1 AND project=?2", user, project,
                               err);
    if (rc < 0)
        return rc;
    return rc ? 0 : skv__err(err, SKV_EPERM, "user '%s' is not a member of "
                             "project '%s'", user, project);
}
