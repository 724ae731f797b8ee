/* The admin plane's transactions: its own, or a savepoint nested in the
 * core's when the core already holds one; the core's hooks run around its
 * own transactions only.
 * SPDX-License-Identifier: Apache-2.0 */
#include "../store/admin_cache.h"
#include "admin_int.h"

int skv__mgr_admin_begin(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                         skv_error *err)
{
    tx->open = false;
    /* The submit path's admin answers (store/admin_cache.h) are held
     * from here to the commit or rollback: the rows change under them. */
    int rc = skv__mgr_store_admin_cache_hold(ctx->db, err);
    if (rc)
        return rc;
    /* The core may call us inside its own transaction: nest then. */
    tx->savepoint = skv__db_in_transaction(ctx->db);
    rc = tx->savepoint ? skv__mgr_store_admin_savepoint(ctx->db, err)
                       : skv__db_begin(ctx->db, err);
    if (!rc)
        tx->open = true;
    else
        skv__mgr_store_admin_cache_end(ctx->db);
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
    skv__mgr_store_admin_cache_end(ctx->db);
    if (tx->savepoint)
        skv__mgr_store_admin_rollback_to(ctx->db);
    else if (skv__db_in_transaction(ctx->db))
        skv__db_rollback(ctx->db);
    if (!tx->savepoint && ctx->tx_end)
        ctx->tx_end(ctx->tx_arg, false);
}

int skv__mgr_admin_commit(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                          skv_error *err)
{
    if (!tx->open)
        return skv__err(err, SKV_ESTATE, "admin database: no transaction");
    int rc = tx->savepoint ? skv__mgr_store_admin_release(ctx->db, err)
                           : skv__db_commit(ctx->db, err);
    if (rc) {
        skv__mgr_admin_rollback(ctx, tx);
        return rc;
    }
    tx->open = false;
    skv__mgr_store_admin_cache_end(ctx->db);
    if (!tx->savepoint && ctx->tx_end)
        ctx->tx_end(ctx->tx_arg, true);
    return 0;
}

int skv__mgr_admin_need(skv__mgr_admin_ctx *ctx,
                        skv__mgr_store_admin_table table, const char *what,
                        const char *name, skv_error *err)
{
    int rc = skv__mgr_store_admin_exists(ctx->db, table, name, err);
    if (rc < 0)
        return rc;
    return rc ? 0 : skv__err(err, SKV_ENOENT, "%s '%s' does not exist", what,
                             name);
}
