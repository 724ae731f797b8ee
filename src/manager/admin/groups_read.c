/* Reading resource groups back into replies.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_int.h"

static int group_row(skv_proto_admin_resource_group_reply *rp,
                     sqlite3_stmt *st, skv_error *err)
{
    skv_proto_resource_group *g = skv__mgr_admin_grow(
        (void **)&rp->groups, &rp->n_groups, sizeof *g);
    if (!g || !(g->name = skv__mgr_admin_col_dup(st, 0)))
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    g->description = skv__mgr_admin_col_dup(st, 1);
    g->scheduler = skv__mgr_admin_col_dup(st, 2);
    g->lost_batch_policy = skv__mgr_admin_col_dup(st, 3);
    int64_t t = sqlite3_column_int64(st, 4);
    g->pending_timeout_ms = t > 0 ? (uint64_t)t : 0;
    g->active = sqlite3_column_int(st, 6) != 0;
    g->selector = skv__mgr_admin_col_dup(st, 7);
    const unsigned char *types = sqlite3_column_text(st, 5);
    return skv__mgr_admin_split(&g->session_types, &g->n_session_types,
                                types ? (const char *)types : "", err);
}

int skv__mgr_admin_read_groups(skv__mgr_admin_ctx *ctx,
                               skv_proto_admin_resource_group_reply *rp,
                               const char *name, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT name, description,"
        " scheduler, lost_batch_policy, pending_timeout_ms, session_types,"
        " active, selector FROM resource_groups WHERE (?1 IS NULL OR name=?1)"
        " ORDER BY name", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = group_row(rp, st, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read resource groups");
    sqlite3_finalize(st);
    return rc;
}
