/* Agents' kernel events in the tick's batch. kernel.status "running",
 * kernel.exit, agent.stats, a kernel.create reply and a kernel.destroy ack
 * each used to commit their own transaction (two or three per session);
 * now every transaction such an event opens is a unit (a savepoint) of the
 * batch the submissions use (mgr_batch.c), committed once per tick. The
 * direction stays decide -> persist -> send: what the event makes the
 * manager send (the kernel.destroy after an exit, errors) waits in the
 * outbox for the batch's commit, and the scheduler steps that follow a
 * state change (started, finished) wait in the after queue here, so
 * memory never runs ahead of the database. The tick's scheduling pass
 * records its placements (and their kernel.create) in the same batch,
 * so one commit per loop iteration covers everything. A failed batch
 * drops the frames and steps, puts the pass's placements back to pending,
 * and disconnects the agents whose events it held: they connect and
 * register again, and their kernel reports repair the database
 * (mgr_reconcile.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

typedef struct skv__mgr_step {
    skv__mgr_after_kind kind;
    bool failed;
    int64_t now_ms;
    char sid[SKV__MGR_ID_MAX];
} skv__mgr_step;

/* Each connection at most once in the list, found through the connection
 * index and its stamp (the batch that listed it) rather than a scan of
 * the list: a tick at a thousand agents holds events of hundreds. A
 * connection already closed has nothing left to disconnect. */
static void note_conn(skv_manager *m, uint64_t conn)
{
    skv__mgr_conn *c = conn ? skv__mgr_conn_find(m, conn) : NULL;
    uint64_t batch = m->batch.settled + 1;
    if (!c || c->in_batch == batch)
        return;     /* the pass's units (conn 0): no agent behind them */
    if (m->batch.n_conns == m->batch.cap_conns) {
        size_t cap = m->batch.cap_conns ? 2 * m->batch.cap_conns : 16;
        uint64_t *v = skv__reallocarray(m->batch.conns, cap, sizeof *v);
        if (!v)
            return;   /* only the disconnect on a failed batch is lost */
        m->batch.conns = v;
        m->batch.cap_conns = cap;
    }
    m->batch.conns[m->batch.n_conns++] = conn;
    c->in_batch = batch;
}

void skv__mgr_units_join(skv_manager *m, uint64_t conn, int64_t now_ms)
{
    m->batch.now_ms = now_ms;
    m->batch.join = true;
    m->batch.join_conn = conn;
}

void skv__mgr_units_leave(skv_manager *m)
{
    m->batch.join = false;
    m->batch.join_conn = 0;
}

int skv__mgr_unit_begin(skv_manager *m, skv_error *err)
{
    if (m->batch.in_unit)
        return skv__err(err, SKV_ESTATE, "manager: a unit of the batch is "
                        "already open");
    int rc = skv__mgr_batch_unit(m, m->batch.now_ms, err);
    if (rc)
        return rc;
    m->batch.in_unit = true;
    m->batch.after_mark = m->batch.n_after;
    note_conn(m, m->batch.join_conn);
    return 0;
}

int skv__mgr_unit_commit(skv_manager *m, skv_error *err)
{
    int rc = skv__mgr_store_release(m->store, err);
    if (rc) {
        skv__mgr_batch_refused(m);
        skv__mgr_unit_rollback(m);
        return rc;
    }
    m->batch.in_unit = false;
    return 0;
}

void skv__mgr_unit_rollback(skv_manager *m)
{
    skv__mgr_store_rollback_to(m->store);
    skv__mgr_outbox_drop(m, m->batch.mark, "not recorded");
    m->batch.n_after = m->batch.after_mark;
    m->batch.in_unit = false;
}

static void run_after(skv_manager *m, const skv__mgr_step *a)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_state ss;
    if (a->kind == SKV__AFTER_PLACED)
        return;     /* its placement is durable: nothing to undo */
    if (a->kind == SKV__AFTER_STARTED) {
        if (skv_sched_mark_started(m->sched, a->sid, a->now_ms, &e))
            skv__log(SKV_LOG_WARN, "manager", "mark_started %s: %s", a->sid,
                     e.message);
        return;
    }
    if (skv_sched_session_state(&ss, m->sched, a->sid, NULL) == 0 &&
        (ss == SKV_SCHED_SCHEDULED || ss == SKV_SCHED_RUNNING))
        skv_sched_mark_finished(m->sched, a->sid, a->failed, a->now_ms,
                                NULL);
    skv__mgr_sched_forget(m, a->sid);
    m->dirty = true;
}

/* Out of memory: the step runs at once (the scheduler then frees the
 * capacity a little early; dropping it would leak the capacity; a
 * placement's undo is lost, and its session waits for a restart). */
void skv__mgr_after(skv_manager *m, skv__mgr_after_kind kind,
                    const char *sid, bool failed, int64_t now_ms)
{
    skv__mgr_step a = {kind, failed, now_ms, ""};
    snprintf(a.sid, sizeof a.sid, "%s", sid);
    if (!m->batch.open && kind == SKV__AFTER_PLACED)
        return;
    if (!m->batch.open) {
        run_after(m, &a);
        return;
    }
    if (m->batch.n_after == m->batch.cap_after) {
        size_t cap = m->batch.cap_after ? 2 * m->batch.cap_after : 32;
        skv__mgr_step *v = skv__reallocarray(m->batch.after, cap, sizeof *v);
        if (!v) {
            run_after(m, &a);
            return;
        }
        m->batch.after = v;
        m->batch.cap_after = cap;
    }
    m->batch.after[m->batch.n_after++] = a;
}

static void disconnect(skv_manager *m, uint64_t conn)
{
    skv__mgr_conn *c = skv__mgr_conn_find(m, conn);
    if (!c || c->dead)
        return;
    skv__log(SKV_LOG_WARN, "manager", "connection %llu (agent %s): its "
             "events were not recorded; closing it so that the agent "
             "registers again", (unsigned long long)conn, c->agent_id);
    c->dead = true;
}

/* A failed batch: the pass's placements in it go back to pending. */
static void undo_after(skv_manager *m, const skv__mgr_step *a)
{
    if (a->kind == SKV__AFTER_PLACED) {
        skv_sched_requeue(m->sched, a->sid, a->now_ms, NULL);
        m->dirty = true;
    }
}

void skv__mgr_units_settle(skv_manager *m, bool ok)
{
    for (size_t i = 0; i < m->batch.n_after; i++)
        (ok ? run_after : undo_after)(m, &m->batch.after[i]);
    for (size_t i = 0; !ok && i < m->batch.n_conns; i++)
        disconnect(m, m->batch.conns[i]);
    m->batch.n_after = m->batch.after_mark = 0;
    m->batch.n_conns = 0;
    m->batch.settled++;     /* every stamp of this batch goes stale */
}

void skv__mgr_units_free(skv_manager *m)
{
    skv__free(m->batch.after);
    skv__free(m->batch.conns);
    m->batch.after = NULL;
    m->batch.conns = NULL;
    m->batch.n_after = m->batch.cap_after = 0;
    m->batch.n_conns = m->batch.cap_conns = 0;
}
