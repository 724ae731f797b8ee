/* SQLite helpers of the admin plane: transactions (nested as savepoints
 * when the core already holds one), statements, error mapping.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_dberr(skv__mgr_admin_ctx *ctx, skv_error *err,
                         const char *what)
{
    int code = sqlite3_errcode(ctx->db);
    int rc = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? SKV_EBUSY
             : (code == SQLITE_CONSTRAINT)                 ? SKV_EEXIST
             : (code == SQLITE_NOMEM)                      ? SKV_ENOMEM
                                                           : SKV_EIO;
    return skv__err(err, rc, "admin database: %s: %s", what,
                    sqlite3_errmsg(ctx->db));
}

int skv__mgr_admin_exec(skv__mgr_admin_ctx *ctx, const char *sql,
                        skv_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(ctx->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    int rc = skv__err(err, SKV_EIO, "admin database: %.60s: %s", sql,
                      msg ? msg : sqlite3_errmsg(ctx->db));
    sqlite3_free(msg);
    return rc;
}

int skv__mgr_admin_begin(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                         skv_error *err)
{
    tx->open = false;
    /* The core may call us inside its own transaction: nest then. */
    tx->savepoint = !sqlite3_get_autocommit(ctx->db);
    int rc = skv__mgr_admin_exec(ctx, tx->savepoint ? "SAVEPOINT skv_admin"
                                                    : "BEGIN IMMEDIATE", err);
    if (!rc)
        tx->open = true;
    if (!rc && !tx->savepoint && ctx->tx_begin &&
        (rc = ctx->tx_begin(ctx->tx_arg, err)))
        skv__mgr_admin_rollback(ctx, tx);
    return rc;
}

void skv__mgr_admin_rollback(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx)
{
    if (!tx->open)
        return;
    tx->open = false;
    if (tx->savepoint)
        sqlite3_exec(ctx->db, "ROLLBACK TO skv_admin; RELEASE skv_admin",
                     NULL, NULL, NULL);
    else if (!sqlite3_get_autocommit(ctx->db))
        sqlite3_exec(ctx->db, "ROLLBACK", NULL, NULL, NULL);
    if (!tx->savepoint && ctx->tx_end)
        ctx->tx_end(ctx->tx_arg, false);
}

int skv__mgr_admin_commit(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                          skv_error *err)
{
    if (!tx->open)
        return skv__err(err, SKV_ESTATE, "admin database: no transaction");
    int rc = skv__mgr_admin_exec(ctx, tx->savepoint ? "RELEASE skv_admin"
                                                    : "COMMIT", err);
    if (rc) {
        skv__mgr_admin_rollback(ctx, tx);
        return rc;
    }
    tx->open = false;
    if (!tx->savepoint && ctx->tx_end)
        ctx->tx_end(ctx->tx_arg, true);
    return 0;
}

int skv__mgr_admin_prepare(skv__mgr_admin_ctx *ctx, sqlite3_stmt **st,
                           const char *sql, skv_error *err)
{
    if (sqlite3_prepare_v2(ctx->db, sql, -1, st, NULL) == SQLITE_OK)
        return 0;
    *st = NULL;
    return skv__mgr_admin_dberr(ctx, err, "prepare");
}

int skv__mgr_admin_done(skv__mgr_admin_ctx *ctx, sqlite3_stmt *st,
                        const char *what, skv_error *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE
                 ? 0 : skv__mgr_admin_dberr(ctx, err, what);
    sqlite3_finalize(st);
    return rc;
}

void skv__mgr_admin_bind(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

char *skv__mgr_admin_col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? skv__strdup((const char *)t) : NULL;
}

int skv__mgr_admin_dup(char **dst, const char *src, skv_error *err)
{
    *dst = NULL;
    if (!src)
        return 0;
    if (!(*dst = skv__strdup(src)))
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return 0;
}

int skv__mgr_admin_lookup(skv__mgr_admin_ctx *ctx, char *buf, size_t bufsz,
                          const char *sql, const char *a, const char *b,
                          skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, sql, err);
    if (rc)
        return rc;
    if (sqlite3_bind_parameter_count(st) >= 1)
        skv__mgr_admin_bind(st, 1, a);
    if (sqlite3_bind_parameter_count(st) >= 2)
        skv__mgr_admin_bind(st, 2, b);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) {
        rc = 1;
        if (buf && bufsz) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            snprintf(buf, bufsz, "%s", t ? (const char *)t : "");
        }
    } else if (s != SQLITE_DONE) {
        rc = skv__mgr_admin_dberr(ctx, err, "query");
    }
    sqlite3_finalize(st);
    return rc;
}

int skv__mgr_admin_write(skv__mgr_admin_ctx *ctx, const char *sql,
                         const char *a, const char *b, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, sql, err);
    if (rc)
        return rc;
    if (sqlite3_bind_parameter_count(st) >= 1)
        skv__mgr_admin_bind(st, 1, a);
    if (sqlite3_bind_parameter_count(st) >= 2)
        skv__mgr_admin_bind(st, 2, b);
    return skv__mgr_admin_done(ctx, st, "write", err);
}

int skv__mgr_admin_exists(skv__mgr_admin_ctx *ctx, const char *table,
                          const char *name, skv_error *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT 1 FROM %s WHERE name=?1", table);
    return skv__mgr_admin_lookup(ctx, NULL, 0, sql, name, NULL, err);
}

int skv__mgr_admin_need(skv__mgr_admin_ctx *ctx, const char *table,
                        const char *what, const char *name, skv_error *err)
{
    int rc = skv__mgr_admin_exists(ctx, table, name, err);
    if (rc < 0)
        return rc;
    return rc ? 0 : skv__err(err, SKV_ENOENT, "%s '%s' does not exist", what,
                             name);
}
