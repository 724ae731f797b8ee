/* Mirroring key pairs into the request verifier. Keys are touched only
 * when their state changes: re-adding a key would wipe its nonce cache and
 * reopen the replay window.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_user_keys(skv__mgr_admin_ctx *ctx, char ***keys,
                             size_t *n, const char *user, skv_error *err)
{
    *keys = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT access_key FROM keypairs WHERE user=?1 ORDER BY access_key",
        err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, user);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        char **slot = skv__mgr_admin_grow((void **)keys, n, sizeof(char *));
        if (!slot || !(*slot = skv__mgr_admin_col_dup(st, 0)))
            rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "list keys");
    sqlite3_finalize(st);
    if (rc) {
        skv__mgr_admin_strv_free(*keys, *n);
        *keys = NULL;
        *n = 0;
    }
    return rc;
}

void skv__mgr_admin_forget_keys(skv__mgr_admin_ctx *ctx, char **keys,
                                size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv_auth_verifier_remove_key(ctx->verifier, keys[i], NULL);
}

/* Make the verifier know the row's key (when wanted) or not. */
static int sync_one(skv__mgr_admin_ctx *ctx, sqlite3_stmt *st, bool reset,
                    skv_error *err)
{
    const char *ak = (const char *)sqlite3_column_text(st, 0);
    const char *sk = (const char *)sqlite3_column_text(st, 1);
    const char *user = (const char *)sqlite3_column_text(st, 2);
    const char *role = (const char *)sqlite3_column_text(st, 3);
    bool want = sqlite3_column_int(st, 4) != 0;
    if (!ak || !sk || !user || !role)
        return skv__err(err, SKV_EIO, "admin database: key pair row with "
                        "missing fields");
    if (!want || reset)
        skv_auth_verifier_remove_key(ctx->verifier, ak, NULL);
    if (!want)
        return 0;
    skv_auth_principal p;
    memset(&p, 0, sizeof p);
    snprintf(p.user, sizeof p.user, "%s", user);
    int rc = skv_auth_role_parse(&p.role, role, err);
    if (!rc)
        rc = skv_auth_verifier_add_key(ctx->verifier, ak, sk, &p, NULL);
    if (rc == SKV_EEXIST)   /* known already: keep its nonce cache */
        return 0;
    if (rc)
        return skv__err(err, rc, "key '%s' of user '%s' cannot be "
                        "registered with the verifier (%s)", ak, user,
                        skv_strerror(rc));
    return 0;
}

int skv__mgr_admin_sync_user_keys(skv__mgr_admin_ctx *ctx, const char *user,
                                  bool reset, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st,
        "SELECT k.access_key, k.secret_key, k.user, u.role,"
        " k.active AND u.active FROM keypairs k JOIN users u"
        " ON u.name=k.user WHERE k.user=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, user);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = sync_one(ctx, st, reset, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "list keys");
    sqlite3_finalize(st);
    return rc;
}
