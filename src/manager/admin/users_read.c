/* Reading users back into reply structures.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

static int user_projects(skv__mgr_admin_ctx *ctx, skv_proto_user *u,
                         skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT project FROM"
        " user_projects WHERE user=?1 ORDER BY project", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, u->name);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        char **slot = skv__mgr_admin_grow((void **)&u->projects,
                                          &u->n_projects, sizeof(char *));
        if (!slot || !(*slot = skv__mgr_admin_col_dup(st, 0)))
            rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read user projects");
    sqlite3_finalize(st);
    return rc;
}

static int user_row(skv__mgr_admin_ctx *ctx, skv_proto_admin_user_reply *rp,
                    sqlite3_stmt *st, skv_error *err)
{
    skv_proto_user *u = skv__mgr_admin_grow((void **)&rp->users, &rp->n_users,
                                            sizeof *u);
    if (!u)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    u->name = skv__mgr_admin_col_dup(st, 0);
    u->email = skv__mgr_admin_col_dup(st, 1);
    u->role = skv__mgr_admin_col_dup(st, 2);
    u->domain = skv__mgr_admin_col_dup(st, 3);
    u->resource_policy = skv__mgr_admin_col_dup(st, 4);
    u->description = skv__mgr_admin_col_dup(st, 5);
    u->active = sqlite3_column_int(st, 6) != 0;
    if (!u->name || !u->role || !u->domain)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return user_projects(ctx, u, err);
}

int skv__mgr_admin_read_users(skv__mgr_admin_ctx *ctx,
                              skv_proto_admin_user_reply *rp, const char *name,
                              const char *domain, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT name, email, role, domain, resource_policy, description,"
        " active FROM users WHERE (?1 IS NULL OR name=?1)"
        " AND (?2 IS NULL OR domain=?2) ORDER BY name", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    skv__mgr_admin_bind(st, 2, domain);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = user_row(ctx, rp, st, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read users");
    sqlite3_finalize(st);
    return rc;
}
