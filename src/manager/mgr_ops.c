/* admin.agent: cordon, drain, uncordon. The state is decided, persisted
 * (store/ops.c, so a restarted manager keeps an agent out), then applied:
 * a cordoned or draining agent is not schedulable (it keeps what runs on
 * it); once a drain's grace period (its group's drain_grace_ms) is over,
 * the tick ends its sessions per the group's drain_action: batch sessions
 * are requeued (their capacity comes back only when the agent confirmed
 * the destroys, mgr_drain.c) or terminated; interactive ones are
 * terminated (nobody can resume them elsewhere). Uncordon makes it
 * schedulable again.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

const char *skv__mgr_ops_name(skv__mgr_ops_state s)
{
    return s == SKV__OPS_CORDONED ? "cordoned"
           : s == SKV__OPS_DRAINING ? "draining" : "schedulable";
}

static skv__mgr_ops_state ops_parse(const char *s)
{
    return !strcmp(s, "cordoned") ? SKV__OPS_CORDONED
           : !strcmp(s, "draining") ? SKV__OPS_DRAINING : SKV__OPS_NONE;
}

static int action_state(const char *action, skv__mgr_ops_state *out,
                        skv_error *err)
{
    if (!strcmp(action, "cordon"))
        *out = SKV__OPS_CORDONED;
    else if (!strcmp(action, "drain"))
        *out = SKV__OPS_DRAINING;
    else if (!strcmp(action, "uncordon"))
        *out = SKV__OPS_NONE;
    else
        return skv__err(err, SKV_EINVAL, "admin.agent: action '%s' is not "
                        "'cordon', 'drain' or 'uncordon'", action);
    return 0;
}

static int persist(skv_manager *m, const char *id, skv__mgr_ops_state st,
                   int64_t deadline, skv_error *err)
{
    int rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = skv__mgr_store_agent_ops_set(m->store, id, st == SKV__OPS_NONE
                                          ? NULL : skv__mgr_ops_name(st),
                                          deadline, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    return skv__mgr_commit(m, err);
}

/* The scheduler follows a's state (an agent not described yet follows
 * when it registers: skv__mgr_ops_registered). */
static void apply(skv_manager *m, skv__mgr_agent *a)
{
    if (a->in_sched)
        skv_sched_agent_set_schedulable(m->sched, a->id,
                                        a->ops == SKV__OPS_NONE, NULL);
    m->dirty = true;
}

static int reply_agent(skv_manager *m, const skv__mgr_call *c,
                       const skv__mgr_agent *a, skv_error *err)
{
    skv_proto_agent_list_reply rep = {0};
    rep.agents = skv__calloc(1, sizeof *rep.agents);
    int rc = rep.agents ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc) {
        rep.n_agents = 1;
        rc = skv__mgr_agent_info(m, a, rep.agents, err);
    }
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_AGENT_LIST_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    return rc;
}

/* ops_due_ms is at most the earliest grace deadline of a draining agent
 * not drained yet, so the ticks scan the agents only once it has passed
 * (skv__mgr_ops_tick). A drain_done flag is cleared when the agent leaves
 * the draining state (the scan did that at every tick): draining it again
 * later drains again, draining it twice keeps the first deadline. */
static void ops_note(skv_manager *m, skv__mgr_agent *a)
{
    if (a->ops != SKV__OPS_DRAINING)
        a->drain_done = false;
    else if (!a->drain_done && a->drain_deadline_ms < m->ops_due_ms)
        m->ops_due_ms = a->drain_deadline_ms;
}

int skv__mgr_on_admin_agent(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err)
{
    const skv_proto_admin_agent *q = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_ADMIN, NULL, err);
    skv__mgr_ops_state st = SKV__OPS_NONE;
    if (!rc)
        rc = action_state(q->action, &st, err);
    if (rc)
        return rc;
    skv__mgr_agent *a = skv__mgr_agent_find(m, q->agent_id);
    if (!a)
        return skv__err(err, SKV_ENOENT, "agent '%s' is not known",
                        q->agent_id);
    int64_t deadline = 0;
    if (st == SKV__OPS_DRAINING) {
        skv__mgr_store_gops o;
        if ((rc = skv__mgr_store_group_ops(m->store, a->group, &o, err)))
            return rc;
        /* draining again keeps the first deadline */
        deadline = a->ops == SKV__OPS_DRAINING ? a->drain_deadline_ms
                                               : c->now_ms + o.drain_grace_ms;
    }
    if ((rc = persist(m, a->id, st, deadline, err)))
        return rc;
    if (a->ops != st)
        skv__log(SKV_LOG_INFO, "manager", "agent %s: %s (by %s)", a->id,
                 skv__mgr_ops_name(st), c->who->user);
    a->ops = st;
    a->drain_deadline_ms = deadline;
    ops_note(m, a);
    apply(m, a);
    return reply_agent(m, c, a, err);
}

/* After a registration described a to the scheduler: its stored state. */
void skv__mgr_ops_registered(skv_manager *m, skv__mgr_agent *a)
{
    char st[32];
    int64_t deadline = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv__mgr_store_agent_ops(m->store, a->id, st, sizeof st, &deadline,
                                 &e) < 0) {
        skv__log(SKV_LOG_ERROR, "manager", "agent %s: operations state: %s; "
                 "kept out of scheduling", a->id, e.message);
        snprintf(st, sizeof st, "cordoned");
    }
    a->ops = ops_parse(st);
    a->drain_deadline_ms = deadline;
    ops_note(m, a);
    apply(m, a);
    skv__mgr_health_reapply(m, a);
}

static bool is_batch(skv_manager *m, const char *sid)
{
    skv_proto_session_submit s = {0};
    char dom[SKV__MGR_ID_MAX], proj[SKV__MGR_ID_MAX], own[SKV__MGR_ID_MAX];
    if (skv__mgr_load_submit(m, sid, &s, dom, proj, own, NULL))
        return false;
    bool b = s.session_type && !strcmp(s.session_type, "batch");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    return b;
}

static void drain_session(skv_manager *m, const skv__mgr_agent *a,
                          const char *sid, const char *action, int64_t now)
{
    char why[SKV__MGR_ID_MAX + 32];
    snprintf(why, sizeof why, "agent %s drained", a->id);
    skv_error e = SKV_ERROR_INIT;
    int rc = !strcmp(action, "requeue") && is_batch(m, sid)
                 ? skv__mgr_session_requeue(m, sid, why, now, &e)
                 : skv__mgr_session_stop(m, sid, SKV_SESSION_TERMINATED, why,
                                         NULL, now, &e);
    if (rc)
        skv__log(SKV_LOG_ERROR, "manager", "draining %s from %s: %s", sid,
                 a->id, e.message);
}

/* The grace period is over: every session still on a goes, once. */
static void drain_now(skv_manager *m, skv__mgr_agent *a, int64_t now)
{
    skv__mgr_store_gops o;
    char **ids = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv__mgr_store_group_ops(m->store, a->group, &o, &e) ||
        skv__mgr_store_sessions_on(m->store, a->id, &ids, &n, &e)) {
        skv__log(SKV_LOG_ERROR, "manager", "draining %s: %s (tried again "
                 "at the next tick)", a->id, e.message);
        return;
    }
    a->drain_done = true;
    for (size_t i = 0; i < n; i++)
        drain_session(m, a, ids[i], o.drain_action, now);
    skv__mgr_ids_free(ids, n);
    if (n)
        skv__log(SKV_LOG_INFO, "manager", "agent %s drained: %zu sessions "
                 "(%s)", a->id, n, o.drain_action);
}

/* A drain that failed stays due: tried again at the next tick. */
void skv__mgr_ops_tick(skv_manager *m, int64_t now_ms)
{
    if (now_ms < m->ops_due_ms)
        return;
    int64_t due = INT64_MAX;
    m->ops_due_ms = INT64_MAX;      /* lowered by what the drains note */
    for (size_t i = 0; i < m->n_agents; i++) {
        skv__mgr_agent *a = &m->agents[i];
        if (a->ops != SKV__OPS_DRAINING || a->drain_done)
            continue;
        if (now_ms >= a->drain_deadline_ms)
            drain_now(m, a, now_ms);
        if (!a->drain_done && a->drain_deadline_ms < due)
            due = a->drain_deadline_ms;
    }
    if (due < m->ops_due_ms)
        m->ops_due_ms = due;
}
