/* Periodic work: dead connections, heartbeat timeouts (agent lost, its
 * sessions follow the resource group's lost_batch_policy), pending
 * timeouts, and the scheduling pass (when something changed, and every
 * second).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

#define SWEEP_MS 1000

static int lost_sessions(skv_manager *m, const char *agent, char ***ids,
                         size_t *n)
{
    return skv__mgr_store_sessions_on(m->store, agent, ids, n, NULL);
}

/* batch + "requeue" goes back to PENDING; everything else fails. */
static bool requeue_policy(skv_manager *m, const char *sid)
{
    skv_proto_session_submit s = {0};
    char dom[SKV__MGR_ID_MAX], proj[SKV__MGR_ID_MAX], own[SKV__MGR_ID_MAX];
    if (skv__mgr_load_submit(m, sid, &s, dom, proj, own, NULL))
        return false;
    skv__mgr_group_info gi;
    bool rq = s.session_type && !strcmp(s.session_type, "batch") &&
              skv__mgr_admin_group(&m->admin, &gi, s.resource_group,
                                   NULL) == 0 &&
              !strcmp(gi.lost_batch_policy, "requeue");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    return rq;
}

static void lose_session(skv_manager *m, const char *sid, const char *agent,
                         int64_t now)
{
    char why[SKV__MGR_ID_MAX + 32];
    snprintf(why, sizeof why, "agent %s lost", agent);
    skv_error e = SKV_ERROR_INIT;
    int rc = requeue_policy(m, sid)
                 ? skv__mgr_session_requeue_lost(m, sid, agent, why, now, &e)
                 : skv__mgr_session_stop(m, sid, SKV_SESSION_ERROR, why, agent,
                                         now, &e);
    if (rc)
        skv__log(SKV_LOG_ERROR, "manager", "%s after %s: %s", sid, why,
                 e.message);
}

void skv__mgr_agent_lost(skv_manager *m, skv__mgr_agent *a, int64_t now_ms)
{
    skv__log(SKV_LOG_WARN, "manager", "agent %s lost (no heartbeat for %lld "
             "ms)", a->id, (long long)(now_ms - a->last_hb_ms));
    a->state = SKV__AGENT_LOST;
    skv__mgr_conn *c = a->conn ? skv__mgr_conn_find(m, a->conn) : NULL;
    if (c)
        c->agent_id[0] = 0;
    a->conn = 0;
    skv__mgr_store_agent_status(m->store, a->id, "lost", now_ms, NULL);
    skv__mgr_routes_lost(m, a);
    char **ids = NULL;
    size_t n = 0;
    if (lost_sessions(m, a->id, &ids, &n) == 0)
        for (size_t i = 0; i < n; i++)
            lose_session(m, ids[i], a->id, now_ms);
    skv__mgr_ids_free(ids, n);
    size_t n_lost = 0;
    if (a->in_sched && skv_sched_agent_lost(m->sched, &n_lost, a->id, now_ms,
                                            NULL) == 0)
        a->in_sched = false;
    if (n_lost)
        skv__log(SKV_LOG_WARN, "manager", "agent %s: %zu more sessions lost "
                 "in the scheduler", a->id, n_lost);
    m->dirty = true;
}

static void close_dead(skv_manager *m, int64_t now)
{
    for (size_t i = 0; i < m->n_conns;) {
        if (m->conns[i].dead)
            skv_manager_conn_close(m, m->conns[i].id, now);
        else
            i++;
    }
}

/* hb_due_ms is at most the earliest deadline (last heartbeat + timeout
 * + 1) of an agent not lost: every write of a last_hb_ms lowers it when
 * needed, a heartbeat's later deadline leaves it low. So the ticks (one
 * per loop iteration) scan the agents only once it has passed, and the
 * scan sets it exactly again: at a thousand agents three scans of the
 * array per iteration were the ticks' cost. */
void skv__mgr_hb_note(skv_manager *m, const skv__mgr_agent *a)
{
    int64_t due = a->last_hb_ms + (int64_t)m->hb_timeout_ms + 1;
    if (due < m->hb_due_ms)
        m->hb_due_ms = due;
}

static void lose_silent(skv_manager *m, int64_t now_ms)
{
    if (now_ms < m->hb_due_ms)
        return;
    int64_t due = INT64_MAX;
    m->hb_due_ms = INT64_MAX;       /* lowered by what the losses note */
    for (size_t i = 0; i < m->n_agents; i++) {
        skv__mgr_agent *a = &m->agents[i];
        int64_t d = a->last_hb_ms + (int64_t)m->hb_timeout_ms + 1;
        if (a->state == SKV__AGENT_LOST)
            continue;
        if (now_ms >= d)
            skv__mgr_agent_lost(m, a, now_ms);
        else if (d < due)
            due = d;
    }
    if (due < m->hb_due_ms)
        m->hb_due_ms = due;
}

SKV_EXTERN int skv_manager_tick(skv_manager *m, int64_t now_ms,
                                skv_error *err)
{
    if (!m)
        return skv__err(err, SKV_EINVAL, "manager_tick: NULL manager");
    close_dead(m, now_ms);
    lose_silent(m, now_ms);
    skv__mgr_routes_flush(m);
    if (now_ms - m->last_sweep_ms >= SWEEP_MS) {
        m->last_sweep_ms = now_ms;
        skv__mgr_sweep(m, now_ms);
        skv__mgr_reqs_expire(m, now_ms);
        m->dirty = true;
    }
    skv__mgr_ops_tick(m, now_ms);
    if (m->n_drains)
        skv__mgr_drain_check(m, now_ms);
    /* The pass joins the batch of this loop iteration's submissions and
     * events (mgr_units.c): one commit for all of it. */
    int rc = m->dirty ? skv__mgr_pass(m, now_ms, err) : 0;
    skv_error be = SKV_ERROR_INIT;
    if (skv__mgr_batch_commit(m, now_ms, &be))
        skv__log(SKV_LOG_ERROR, "manager", "batch of submissions, events "
                 "and placements: %s", be.message);
    /* After it: the batch's commit wrote the nonces of its requests, so
     * only those of an iteration without one (heartbeats) and the prune
     * take a transaction of their own. */
    skv__mgr_nonce_tick(m, now_ms);
    return rc;
}

SKV_EXTERN int64_t skv_manager_next_tick_ms(const skv_manager *m,
                                            int64_t now_ms)
{
    if (!m || m->dirty || m->n_nonces || m->batch.open)
        return 0;
    int64_t t = m->last_sweep_ms + SWEEP_MS - now_ms;
    if (m->hb_due_ms < now_ms + t)      /* early at worst: see lose_silent */
        t = m->hb_due_ms - now_ms;
    return t > 0 ? t : 0;
}
