/* auth_nonces: the replay window across restarts (mgr_nonces.c says why).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "history_buf.h"
#include "store_int.h"

/* One multi-row INSERT per chunk (multirow.c): a batch's nonces used to
 * be one statement each, about 3.6 a session. */
static int put_chunk(skv__db *db, const skv__mgr_store_nonce *v, size_t n,
                     skv_error *err)
{
    char sql[1024];
    skv__db_stmt *st;
    int rc = skv__db_values_sql(sql, sizeof sql, "INSERT INTO auth_nonces "
                                "(ts_ms, access_key, nonce) VALUES", 3, n,
                                " ON CONFLICT (ts_ms, access_key, nonce) DO "
                                "NOTHING", err);
    if (rc || (rc = skv__db_prepare(db, sql, &st, err)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        int p = (int)i * 3;
        skv__db_bind_int64(st, p + 1, v[i].ts_ms);
        skv__db_bind_text(st, p + 2, v[i].access_key);
        skv__db_bind_blob(st, p + 3, v[i].nonce, v[i].nonce_len);
    }
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_nonces_put(skv__db *db, const skv__mgr_store_nonce *v,
                              size_t n, skv_error *err)
{
    int rc = 0;
    for (size_t k = 0; !rc && n; v += k, n -= k)
        rc = put_chunk(db, v, k = skv__db_chunk(n), err);
    return rc;
}

int skv__mgr_store_nonces_prune(skv__db *db, int64_t before_ms,
                                skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "DELETE FROM auth_nonces WHERE ts_ms < ?",
                             &st, err);
    if (rc)
        return rc;
    skv__db_bind_int64(st, 1, before_ms);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

/* Rows from since_ms on, to fn (stops at != 0). */
int skv__mgr_store_nonces_each(skv__db *db, int64_t since_ms,
                               int (*fn)(void *arg,
                                         const skv__mgr_store_nonce *n),
                               void *arg, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT access_key, nonce, ts_ms FROM "
                             "auth_nonces WHERE ts_ms >= ?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_int64(st, 1, since_ms);
    int step = 0;
    while (!rc && (step = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_nonce x = {0};
        x.access_key = skv__db_column_text(st, 0);
        x.nonce = skv__db_column_blob(st, 1, &x.nonce_len);
        x.ts_ms = skv__db_column_int64(st, 2);
        if (x.access_key && x.nonce)
            rc = fn(arg, &x);
    }
    skv__db_done(st);
    return rc ? rc : step < 0 ? step : 0;
}
