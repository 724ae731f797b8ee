/* A lost agent comes back: suspect -> adopt -> reconcile.
 *
 * Its registration reports the kernels it holds, running or exited. One
 * that the kernels table no longer places there but kernel_suspects does
 * (mgr_suspect.c) is judged by its session:
 * - still PENDING (nobody placed it again) and every kernel of the session
 *   is a suspect on this agent that it reported: the session is adopted
 *   back whole. The kernel rows take their old ids, agent, container and
 *   allocation again, the session is RUNNING with its first start time,
 *   and the scheduler holds it as running on the same devices. A running
 *   kernel just keeps running; an exited one is ended by the kernel.exit
 *   the agent sends after the registration reply, with its real exit code,
 *   and its logs are the only run's.
 * - placed again, ended, or not adoptable whole (e.g. its kernels on other
 *   agents were stopped at the requeue): the container is destroyed and the
 *   session's history says why.
 * Suspects the agent did not report are forgotten (their containers are
 * gone). Decide, persist, then act: the database commits before the
 * scheduler is told and before anything is sent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

typedef skv__mgr_store_suspect suspect;

static bool reported(const skv_proto_agent_register *r, const char *kid)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].kernel_id && !strcmp(r->kernels[i].kernel_id, kid))
            return true;
    return false;
}

/* Why sid cannot be adopted back from agent a, or NULL when it can. */
static const char *refusal(skv_manager *m, const skv__mgr_agent *a,
                           const skv_proto_agent_register *r, const char *sid,
                           const suspect *s, size_t n)
{
    skv_manager_session_state st;
    int nk = 0;
    if (skv__mgr_session_get_state(m, sid, &st, NULL) ||
        skv__mgr_store_kernel_total(m->store, sid, &nk, NULL))
        return "its session is unknown";
    if (st >= SKV_SESSION_TERMINATED)
        return "its session has ended";
    if (st != SKV_SESSION_PENDING)
        return "its session was placed again";
    /* A multi-agent session had its kernels on the healthy agents stopped
     * at the requeue; a session lost twice has suspects on two agents. */
    bool whole = (size_t)nk == n;
    for (size_t i = 0; whole && i < n; i++)
        whole = !strcmp(s[i].agent, a->id) && reported(r, s[i].kid);
    if (!whole)
        return "not all kernels of its session came back with it";
    return NULL;
}

static int adopt_tx(skv_manager *m, const skv__mgr_agent *a, const char *sid,
                    const suspect *s, size_t n, int64_t now, skv_error *err)
{
    int rc = skv__mgr_store_suspects_adopt(m->store, sid, s, n, err);
    char why[SKV__MGR_ID_MAX + 64];
    snprintf(why, sizeof why, "agent %s came back: its kernels adopted",
             a->id);
    if (!rc)
        rc = skv__mgr_session_set(m, sid, SKV_SESSION_RUNNING, why, now, err);
    return rc;
}

/* The scheduler had sid pending again: it holds it as running on the
 * recorded devices instead. Refused (it no longer fits): requeued again,
 * which now stops the adopted kernels on the connected agent. */
static void sched_adopt(skv_manager *m, const char *sid, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    int64_t created = now, started = now;
    if (skv__mgr_store_session_times(m->store, sid, &created, &started,
                                     NULL)) {
        created = started = now;
    }
    skv_sched_cancel(m->sched, sid, now, NULL);
    skv_sched_session_remove(m->sched, sid, NULL);
    if (skv__mgr_readmit(m, sid, "RUNNING", created, started, &e) == 0)
        return;
    char why[SKV_ERROR_MESSAGE_MAX + 64];
    snprintf(why, sizeof why, "adoption refused by the scheduler: %s",
             e.message);
    skv__log(SKV_LOG_ERROR, "manager", "%s: %s", sid, why);
    skv_error e2 = SKV_ERROR_INIT;
    if (skv__mgr_session_requeue(m, sid, why, now, &e2) ||
        skv__mgr_readmit(m, sid, "PENDING", created, 0, &e2))
        skv__log(SKV_LOG_ERROR, "manager", "%s: %s", sid, e2.message);
}

static void adopt_session(skv_manager *m, skv__mgr_agent *a, const char *sid,
                          const suspect *s, size_t n, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__mgr_begin(m, &e);
    if (!rc)
        rc = adopt_tx(m, a, sid, s, n, now, &e);
    if (!rc)
        rc = skv__mgr_commit(m, &e);
    if (rc) {
        skv__mgr_rollback(m);
        skv__log(SKV_LOG_ERROR, "manager", "adopting %s from %s: %s", sid,
                 a->id, e.message);
        return;
    }
    skv__log(SKV_LOG_WARN, "manager", "agent %s came back with session %s "
             "(%zu kernels): adopted", a->id, sid, n);
    for (size_t i = 0; i < n; i++)
        skv__mgr_metrics_kernel_running(m, s[i].kid, now);
    sched_adopt(m, sid, now);
}

/* The suspect kid cannot come back: its container goes, the session's
 * history says why, and the record is dropped. */
static void reject(skv_manager *m, skv__mgr_agent *a,
                   const skv_proto_kernel_report *k, const char *sid,
                   const char *why, int64_t now)
{
    char msg[SKV__MGR_ID_MAX * 2 + 128];
    snprintf(msg, sizeof msg, "kernel %s came back on agent %s but %s: "
             "destroyed", k->kernel_id, a->id, why);
    skv__log(SKV_LOG_WARN, "manager", "%s", msg);
    skv_manager_session_state st = SKV_SESSION_PENDING;
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_session_get_state(m, sid, &st, NULL);
    int rc = skv__mgr_begin(m, &e);
    if (!rc)
        rc = skv__mgr_store_suspect_drop(m->store, k->kernel_id, &e);
    if (!rc)
        rc = skv__mgr_history_add(m, sid, skv_manager_session_state_name(st),
                                  msg, now, &e);
    if (!rc)
        rc = skv__mgr_commit(m, &e);
    if (rc) {
        skv__mgr_rollback(m);
        skv__log(SKV_LOG_ERROR, "manager", "%s: %s", sid, e.message);
    }
    skv_proto_kernel_destroy d = {0};
    d.session_id = (char *)sid;
    d.kernel_id = k->kernel_id;
    d.reason = msg;
    d.grace_ms = 1000;
    skv__mgr_request(m, a->conn, SKV__REQ_DESTROY, SKV_PROTO_KERNEL_DESTROY,
                     &d, k->kernel_id, 0, 0);
}

static bool suspect_session(skv_manager *m, const skv__mgr_agent *a,
                            const char *kid, char *sid)
{
    return kid && skv__mgr_store_suspect_session(m->store, kid, a->id, sid,
                                                 SKV__MGR_ID_MAX, NULL) == 1;
}

bool skv__mgr_adopt_suspect(skv_manager *m, skv__mgr_agent *a,
                            const skv_proto_agent_register *r,
                            const skv_proto_kernel_report *k, int64_t now_ms)
{
    char sid[SKV__MGR_ID_MAX];
    if (!suspect_session(m, a, k->kernel_id, sid))
        return false;
    suspect *s = NULL;
    size_t n = 0;
    if (skv__mgr_store_suspects_of(m->store, sid, &s, &n, NULL)) {
        /* Undecided: the container stays, the next registration retries. */
        skv__log(SKV_LOG_ERROR, "manager", "suspect kernel %s on %s: cannot "
                 "read its session's suspects", k->kernel_id, a->id);
        skv__free(s);
        return true;
    }
    const char *why = refusal(m, a, r, sid, s, n);
    if (why)
        reject(m, a, k, sid, why, now_ms);
    else
        adopt_session(m, a, sid, s, n, now_ms);
    skv__free(s);
    return true;
}

/* Suspects of a that it did not report: their containers are gone, there
 * is nothing to adopt or destroy. */
void skv__mgr_suspects_forget(skv_manager *m, const skv__mgr_agent *a,
                              const skv_proto_agent_register *r)
{
    char **all = NULL;
    size_t n_all = 0;
    if (skv__mgr_store_suspects_on(m->store, a->id, &all, &n_all, NULL))
        return;
    for (size_t i = 0; i < n_all; i++) {
        if (reported(r, all[i]))
            continue;
        skv__log(SKV_LOG_WARN, "manager", "suspect kernel %s is not on agent "
                 "%s any more; forgotten", all[i], a->id);
        skv__mgr_store_suspect_drop(m->store, all[i], NULL);
    }
    skv__mgr_ids_free(all, n_all);
}
