/* Rows of keypairs. Secrets are read only to feed the verifier and to
 * rewrite a missing key file; replies never carry them.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

int skv__mgr_store_admin_key_insert(skv__db *db, const char *access_key,
                                    const char *secret_key, const char *user,
                                    const char *policy, int64_t now_ms,
                                    skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO keypairs (access_key,"
        " secret_key, \"user\", resource_policy, active, created_ms)"
        " VALUES (?, ?, ?, ?, 1, ?)", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, access_key);
    skv__db_bind_text(st, 2, secret_key);
    skv__db_bind_text(st, 3, user);
    skv__db_bind_text(st, 4, policy && policy[0] ? policy : NULL);
    skv__db_bind_int64(st, 5, now_ms);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_key_update(skv__db *db, const char *access_key,
                                    const char *policy, bool active,
                                    skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE keypairs SET resource_policy="
        "CASE WHEN CAST(? AS TEXT) IS NULL THEN resource_policy"
        " ELSE NULLIF(?, '') END, active=? WHERE access_key=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, policy);
    skv__db_bind_text(st, 2, policy);
    skv__db_bind_int64(st, 3, active ? 1 : 0);
    skv__db_bind_text(st, 4, access_key);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_key_delete(skv__db *db, const char *access_key,
                                    skv_error *err)
{
    return skv__mgr_store_admin_put(db, "DELETE FROM keypairs WHERE"
                                    " access_key=?", 1, access_key, NULL, err);
}

static int key_row(skv_proto_admin_keypair_reply *rp, skv__db_stmt *st,
                   skv_error *err)
{
    skv_proto_keypair *k = skv__mgr_store_admin_grow((void **)&rp->keypairs,
                                                     &rp->n_keypairs,
                                                     sizeof *k);
    if (!k)
        return skv__mgr_store_admin_nomem(err);
    k->access_key = skv__mgr_store_admin_col_dup(st, 0);
    k->user = skv__mgr_store_admin_col_dup(st, 1);
    k->resource_policy = skv__mgr_store_admin_col_dup(st, 2);
    k->active = skv__db_column_int64(st, 3) != 0;
    k->created_ms = skv__db_column_int64(st, 4);
    return k->access_key && k->user ? 0 : skv__mgr_store_admin_nomem(err);
}

int skv__mgr_store_admin_key_read(skv__db *db,
                                  skv_proto_admin_keypair_reply *rp,
                                  const char *access_key, const char *user,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT access_key, \"user\","
        " resource_policy, active, created_ms FROM keypairs"
        " WHERE (CAST(? AS TEXT) IS NULL OR access_key=?)"
        " AND (CAST(? AS TEXT) IS NULL OR \"user\"=?)"
        " ORDER BY \"user\", created_ms, access_key", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, access_key);
    skv__db_bind_text(st, 2, access_key);
    skv__db_bind_text(st, 3, user);
    skv__db_bind_text(st, 4, user);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = key_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_key_owner(skv__db *db, const char *access_key,
                                   char *buf, size_t bufsz, skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT \"user\" FROM"
        " keypairs WHERE access_key=?", 1, access_key, NULL, err);
}

int skv__mgr_store_admin_key_other_active(skv__db *db, const char *user,
                                          const char *access_key,
                                          skv_error *err)
{
    return skv__mgr_store_admin_get(db, NULL, 0, "SELECT 1 FROM keypairs"
        " WHERE \"user\"=? AND active=1 AND access_key<>?", 2, user,
        access_key, err);
}

int skv__mgr_store_admin_key_list(skv__db *db, const char *user, char ***v,
                                  size_t *n, skv_error *err)
{
    return skv__mgr_store_admin_texts(db, v, n, "SELECT access_key FROM"
        " keypairs WHERE \"user\"=? ORDER BY access_key", 1, user, err);
}

int skv__mgr_store_admin_key_users(skv__db *db, char ***v, size_t *n,
                                   skv_error *err)
{
    return skv__mgr_store_admin_texts(db, v, n, "SELECT DISTINCT \"user\""
        " FROM keypairs ORDER BY \"user\"", 0, NULL, err);
}

int skv__mgr_store_admin_key_policy(skv__db *db, const char *user,
                                    char *buf, size_t bufsz, skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT resource_policy"
        " FROM keypairs WHERE \"user\"=? AND active=1"
        " AND resource_policy IS NOT NULL AND resource_policy<>''"
        " ORDER BY created_ms, access_key LIMIT 1", 1, user, NULL, err);
}

int skv__mgr_store_admin_key_first(skv__db *db, const char *user, char *ak,
                                   size_t aksz, char *sk, size_t sksz,
                                   skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT access_key, secret_key FROM"
        " keypairs WHERE \"user\"=? AND active=1"
        " ORDER BY created_ms, access_key LIMIT 1", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, user);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        skv__mgr_store_admin_col_copy(st, 0, ak, aksz);
        skv__mgr_store_admin_col_copy(st, 1, sk, sksz);
    }
    skv__db_done(st);
    return rc;
}

static int key_each_row(skv__db_stmt *st, skv__mgr_store_admin_key_fn fn,
                        void *arg, skv_error *err)
{
    skv__mgr_store_admin_key k = {
        skv__db_column_text(st, 0), skv__db_column_text(st, 1),
        skv__db_column_text(st, 2), skv__db_column_text(st, 3),
        skv__db_column_int64(st, 4) != 0};
    if (!k.access_key || !k.secret_key || !k.user || !k.role)
        return skv__err(err, SKV_EIO, "admin store: key pair row with "
                        "missing fields");
    return fn(arg, &k, err);
}

int skv__mgr_store_admin_key_each(skv__db *db, const char *user,
                                  skv__mgr_store_admin_key_fn fn, void *arg,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT k.access_key, k.secret_key,"
        " k.\"user\", u.role,"
        " CASE WHEN k.active<>0 AND u.active<>0 THEN 1 ELSE 0 END"
        " FROM keypairs k JOIN users u ON u.name=k.\"user\""
        " WHERE k.\"user\"=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, user);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = key_each_row(st, fn, arg, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}
