/* Reading key pairs back into replies: never the secret (only the reply to
 * CREATE carries it, filled by the handler).
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_int.h"

static int key_row(skv_proto_admin_keypair_reply *rp, sqlite3_stmt *st,
                   skv_error *err)
{
    skv_proto_keypair *k = skv__mgr_admin_grow((void **)&rp->keypairs,
                                               &rp->n_keypairs, sizeof *k);
    if (!k)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    k->access_key = skv__mgr_admin_col_dup(st, 0);
    k->user = skv__mgr_admin_col_dup(st, 1);
    k->resource_policy = skv__mgr_admin_col_dup(st, 2);
    k->active = sqlite3_column_int(st, 3) != 0;
    k->created_ms = sqlite3_column_int64(st, 4);
    if (!k->access_key || !k->user)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return 0;
}

int skv__mgr_admin_read_keys(skv__mgr_admin_ctx *ctx,
                             skv_proto_admin_keypair_reply *rp,
                             const char *access_key, const char *user,
                             skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT access_key, user, resource_policy, active, created_ms"
        " FROM keypairs WHERE (?1 IS NULL OR access_key=?1)"
        " AND (?2 IS NULL OR user=?2) ORDER BY user, created_ms, access_key",
        err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, access_key);
    skv__mgr_admin_bind(st, 2, user);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = key_row(rp, st, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read key pairs");
    sqlite3_finalize(st);
    return rc;
}
