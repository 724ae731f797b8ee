/* The replay window across restarts. The verifier remembers the nonces of
 * accepted requests in memory only; a request captured before a restart
 * would be accepted again after it. So each accepted request's nonce is
 * also written to auth_nonces, in the transaction that persists the
 * request's effect (no extra commit or fsync on the submit path):
 * skv__mgr_begin writes the pending nonces, a commit settles them, a
 * rollback keeps them pending. Requests without a durable effect (reads,
 * heartbeats) are settled by the next tick. On open the rows inside the
 * skew window are fed back to the verifier; older rows are pruned.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

#define PRUNE_EVERY_MS 10000

int skv__mgr_nonce_note(skv_manager *m, const skv_auth_block *b,
                        skv_error *err)
{
    if (m->n_nonces == m->cap_nonces) {
        size_t cap = m->cap_nonces ? m->cap_nonces * 2 : 16;
        skv__mgr_nonce *n = skv__reallocarray(m->nonces, cap, sizeof *n);
        if (!n)
            return skv__err(err, SKV_ENOMEM, "manager: out of memory");
        m->nonces = n;
        m->cap_nonces = cap;
    }
    skv__mgr_nonce *n = &m->nonces[m->n_nonces++];
    snprintf(n->access_key, sizeof n->access_key, "%s", b->access_key);
    memcpy(n->nonce, b->nonce, sizeof n->nonce);
    n->ts_ms = b->timestamp_ms;
    return 0;
}

/* Inside the open transaction: write every pending nonce. */
int skv__mgr_nonce_flush(skv_manager *m, skv_error *err)
{
    m->n_nonces_written = 0;
    if (!m->n_nonces)
        return 0;
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "INSERT OR IGNORE INTO auth_nonces"
                                 " (ts_ms, access_key, nonce) VALUES"
                                 " (?1, ?2, ?3)", err);
    for (size_t i = 0; !rc && i < m->n_nonces; i++) {
        const skv__mgr_nonce *n = &m->nonces[i];
        sqlite3_bind_int64(st, 1, n->ts_ms);
        sqlite3_bind_text(st, 2, n->access_key, -1, SQLITE_STATIC);
        sqlite3_bind_blob(st, 3, n->nonce, sizeof n->nonce, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = skv__mgr_db_err(m, err, "remember nonce");
        sqlite3_reset(st);
    }
    skv__mgr_db_done(m, st);
    if (!rc)
        m->n_nonces_written = m->n_nonces;
    return rc;
}

/* After COMMIT: the written nonces are durable. Requests verified while
 * the transaction was open (none today: one thread) stay pending. */
void skv__mgr_nonce_settle(skv_manager *m, bool committed)
{
    size_t w = committed ? m->n_nonces_written : 0;
    m->n_nonces_written = 0;
    if (!w)
        return;
    memmove(m->nonces, m->nonces + w, (m->n_nonces - w) * sizeof *m->nonces);
    m->n_nonces -= w;
}

/* The admin plane's hooks (skv__mgr_admin_ctx.tx_begin / tx_end). */
static int admin_tx_begin(void *arg, skv_error *err)
{
    return skv__mgr_nonce_flush(arg, err);
}

static void admin_tx_end(void *arg, bool committed)
{
    skv__mgr_nonce_settle(arg, committed);
}

void skv__mgr_nonce_hook_admin(skv_manager *m)
{
    m->admin.tx_begin = admin_tx_begin;
    m->admin.tx_end = admin_tx_end;
    m->admin.tx_arg = m;
}

static int prune(skv_manager *m, int64_t now_ms, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "DELETE FROM auth_nonces WHERE"
                                 " ts_ms < ?1", err);
    if (rc)
        return rc;
    /* Twice the window: a clock stepping back a little keeps its rows. */
    sqlite3_bind_int64(st, 1, now_ms - 2 * m->skew_ms);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = skv__mgr_db_err(m, err, "prune nonces");
    skv__mgr_db_done(m, st);
    return rc;
}

void skv__mgr_nonce_tick(skv_manager *m, int64_t now_ms)
{
    bool due = now_ms - m->nonce_prune_ms >= PRUNE_EVERY_MS;
    if (!m->n_nonces && !due)
        return;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__mgr_begin(m, &e);    /* writes the pending nonces */
    if (!rc && due)
        rc = prune(m, now_ms, &e);
    if (!rc)
        rc = skv__mgr_commit(m, &e);
    else
        skv__mgr_rollback(m);
    if (rc)
        skv__log(SKV_LOG_ERROR, "manager", "cannot persist request nonces:"
                 " %s", e.message);
    else if (due)
        m->nonce_prune_ms = now_ms;
}

/* On open: refuse again what was accepted before the restart. */
int skv__mgr_nonce_restore(skv_manager *m, int64_t now_ms, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT access_key, nonce, ts_ms"
                                 " FROM auth_nonces WHERE ts_ms >= ?1", err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, now_ms - m->skew_ms);
    size_t n = 0;
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *ak = (const char *)sqlite3_column_text(st, 0);
        const void *nonce = sqlite3_column_blob(st, 1);
        if (!ak || !nonce || sqlite3_column_bytes(st, 1) !=
                                 SKV_AUTH_NONCE_BYTES)
            continue;
        skv_error e = SKV_ERROR_INIT;
        int r = skv_auth_verifier_remember(m->verifier, ak, nonce,
                                           sqlite3_column_int64(st, 2),
                                           now_ms, &e);
        if (r == SKV_ENOMEM)
            rc = skv__err(err, r, "%s", e.message);
        n += r == 0;    /* keys removed since are skipped */
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_db_err(m, err, "load nonces");
    skv__mgr_db_done(m, st);
    if (!rc && n)
        skv__log(SKV_LOG_INFO, "manager", "%zu request nonces of the last "
                 "%lld ms restored", n, (long long)m->skew_ms);
    return rc;
}
