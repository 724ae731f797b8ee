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
    skv__mgr_store_nonce *v = skv__calloc(m->n_nonces, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    for (size_t i = 0; i < m->n_nonces; i++) {
        v[i].access_key = m->nonces[i].access_key;
        v[i].nonce = m->nonces[i].nonce;
        v[i].nonce_len = sizeof m->nonces[i].nonce;
        v[i].ts_ms = m->nonces[i].ts_ms;
    }
    int rc = skv__mgr_store_nonces_put(m->store, v, m->n_nonces, err);
    skv__free(v);
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
    if (committed)
        skv__mgr_outbox_release(arg);
    else
        skv__mgr_outbox_drop(arg, 0, "not recorded: the admin change was "
                             "rolled back");
}

void skv__mgr_nonce_hook_admin(skv_manager *m)
{
    m->admin.tx_begin = admin_tx_begin;
    m->admin.tx_end = admin_tx_end;
    m->admin.tx_arg = m;
}

/* Twice the window: a clock stepping back a little keeps its rows. */
static int prune(skv_manager *m, int64_t now_ms, skv_error *err)
{
    return skv__mgr_store_nonces_prune(m->store, now_ms - 2 * m->skew_ms,
                                       err);
}

void skv__mgr_nonce_tick(skv_manager *m, int64_t now_ms)
{
    bool due = now_ms - m->nonce_prune_ms >= PRUNE_EVERY_MS;
    if (!m->n_nonces && !due)
        return;
    skv_error e = SKV_ERROR_INIT;
    if (!m->batch.open)     /* all or nothing: its writes may wait (db.h) */
        skv__db_defer_errors(m->store);
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

typedef struct restore_arg {
    skv_manager *m;
    int64_t now_ms;
    size_t n;
    skv_error *err;
} restore_arg;

static int restore_one(void *arg, const skv__mgr_store_nonce *x)
{
    restore_arg *r = arg;
    if (x->nonce_len != SKV_AUTH_NONCE_BYTES)
        return 0;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_auth_verifier_remember(r->m->verifier, x->access_key,
                                        x->nonce, x->ts_ms, r->now_ms, &e);
    if (rc == SKV_ENOMEM)
        return skv__err(r->err, rc, "%s", e.message);
    r->n += rc == 0;    /* keys removed since are skipped */
    return 0;
}

/* On open: refuse again what was accepted before the restart. */
int skv__mgr_nonce_restore(skv_manager *m, int64_t now_ms, skv_error *err)
{
    restore_arg a = {m, now_ms, 0, err};
    int rc = skv__mgr_store_nonces_each(m->store, now_ms - m->skew_ms,
                                        restore_one, &a, err);
    if (!rc && a.n)
        skv__log(SKV_LOG_INFO, "manager", "%zu request nonces of the last "
                 "%lld ms restored", a.n, (long long)m->skew_ms);
    return rc;
}
