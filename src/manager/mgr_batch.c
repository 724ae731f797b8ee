/* Submissions batched into one transaction per tick (agents' kernel
 * events join it too, mgr_units.c). Each accepted
 * session.submit is one unit (a savepoint) of a transaction that stays
 * open until the next tick (or any other request, or skv_manager_flush):
 * one commit, one fsync, for every submission that arrived in between.
 * Its reply waits in the outbox for that commit, so a submission is
 * acknowledged only once it is durable (a kill -9 loses only submissions
 * nobody was told about). A failed commit turns the waiting replies into
 * errors and takes the sessions out of the scheduler again.
 *
 * Optimistic units (PostgreSQL): a unit's RELEASE is queued without
 * waiting for the writes under it (db.h skv__db_defer_releases), which
 * saves one round trip per unit that wrote (about six per session). An
 * error in any unit then fails the whole batch at its next read or at
 * COMMIT, through the failed-commit path above: replies become errors,
 * the batch's sessions leave the scheduler, the pass's placements go back
 * to pending, agents whose events it held reconnect (mgr_units.c), and
 * the state caches are forgotten (db.c). To keep one bad request from
 * failing batch after batch, the batches after such a failure run in
 * careful mode (each release waits, so a failing unit is refused alone).
 * Which unit failures remain possible at all: the manager checks what the
 * schema's constraints check before it writes (ids it makes itself, a
 * client_token looked up first, agents' subnets it allocates), so a
 * failing write means the server refused it for its own reasons (lost
 * connection, disk full, a statement timeout: the whole batch fails in
 * careful mode too) or a value PostgreSQL rejects and SQLite takes (text
 * that is not valid UTF-8 or holds a NUL byte, if a request can carry
 * one): the poisoned request careful mode isolates.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

/* ~0.5 s of batches at full load: long enough that a client resending
 * the same bad request meets careful mode again, short enough that one
 * failure costs little throughput. */
#define SKV__MGR_CAREFUL_BATCHES 128

static int remember(skv_manager *m, const char *sid, skv_error *err)
{
    if (m->batch.n == m->batch.cap) {
        size_t cap = m->batch.cap ? 2 * m->batch.cap : 32;
        char (*v)[32] = skv__reallocarray(m->batch.sids, cap, sizeof *v);
        if (!v)
            return skv__err(err, SKV_ENOMEM, "manager: out of memory");
        m->batch.sids = v;
        m->batch.cap = cap;
    }
    skv__strlcpy(m->batch.sids[m->batch.n++], sid, sizeof m->batch.sids[0]);
    return 0;
}

/* Open the batch (when needed) and a unit inside it. */
int skv__mgr_batch_unit(skv_manager *m, int64_t now_ms, skv_error *err)
{
    int rc = 0;
    m->batch.now_ms = now_ms;
    /* A failed unit or commit undoes everything it did, so its writes may
     * report errors late (db.h): PostgreSQL pipelines them. */
    if (!m->batch.open) {
        skv__db_defer_errors(m->store);
        m->batch.optimistic = !m->batch.careful;
        if (m->batch.optimistic)
            skv__db_defer_releases(m->store);
    }
    if (!m->batch.open && !(rc = skv__mgr_tx_open(m, err)))
        m->batch.open = true;
    if (!rc)
        m->batch.mark = skv__mgr_outbox_mark(m);
    return rc ? rc : skv__mgr_store_savepoint(m->store, err);
}

/* Close the unit: kept (sid joins the batch) or undone alone. */
int skv__mgr_batch_unit_end(skv_manager *m, const char *sid, int rc,
                            skv_error *err)
{
    if (!rc && (rc = skv__mgr_store_release(m->store, err)))
        skv__mgr_batch_refused(m);
    if (!rc && !(rc = remember(m, sid, err)))
        return 0;
    skv__mgr_store_rollback_to(m->store);
    skv__mgr_outbox_drop(m, m->batch.mark, "not recorded");
    return rc;
}

/* A unit the database refused: careful mode lasts a while longer. */
void skv__mgr_batch_refused(skv_manager *m)
{
    if (!m->batch.optimistic)
        m->batch.careful = SKV__MGR_CAREFUL_BATCHES;
}

/* After the commit: a failed optimistic batch turns careful mode on; a
 * careful batch that committed counts it down. */
static void careful_next(skv_manager *m, int rc)
{
    if (rc && m->batch.optimistic)
        m->batch.careful = SKV__MGR_CAREFUL_BATCHES;
    else if (!rc && !m->batch.optimistic && m->batch.careful)
        m->batch.careful--;
}

static void forget_sessions(skv_manager *m, int64_t now)
{
    for (size_t i = 0; i < m->batch.n; i++) {
        skv_sched_cancel(m->sched, m->batch.sids[i], now, NULL);
        skv_sched_session_remove(m->sched, m->batch.sids[i], NULL);
    }
}

/* Commit the batch; the waiting replies go out (or, failed, as errors).
 * The nonces of the requests in it are written first: a request's nonce
 * is durable no later than its effect. */
int skv__mgr_batch_commit(skv_manager *m, int64_t now_ms, skv_error *err)
{
    if (!m->batch.open)
        return 0;
    m->batch.open = false;
    int rc = skv__mgr_nonce_flush(m, err);
    if (!rc)
        rc = skv__mgr_commit(m, err);
    else
        skv__mgr_rollback(m);
    if (rc) {
        skv__log(SKV_LOG_ERROR, "manager", "%zu submissions not recorded: "
                 "%s", m->batch.n, err ? err->message : "commit failed");
        forget_sessions(m, now_ms);
    }
    careful_next(m, rc);
    m->batch.n = 0;
    skv__mgr_units_settle(m, rc == 0);
    return rc;
}

/* skv_manager_free: what was accepted is kept, nothing is sent. */
void skv__mgr_batch_close(skv_manager *m)
{
    if (m->batch.open)
        skv__db_commit(m->store, NULL);
    m->batch.open = false;
    skv__mgr_units_free(m);
    skv__free(m->batch.sids);
    memset(&m->batch, 0, sizeof m->batch);
}

SKV_EXTERN int skv_manager_flush(skv_manager *m, int64_t now_ms,
                                 skv_error *err)
{
    if (!m)
        return skv__err(err, SKV_EINVAL, "manager_flush: NULL manager");
    return skv__mgr_batch_commit(m, now_ms, err);
}
