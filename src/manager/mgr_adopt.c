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

typedef struct suspect {
    char kid[SKV__MGR_ID_MAX];
    char agent[SKV__MGR_ID_MAX];
    char container[SKV__MGR_ID_MAX];
    int idx;
    int64_t started_ms;      /* the session's first start; 0 none */
} suspect;

static bool reported(const skv_proto_agent_register *r, const char *kid)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].kernel_id && !strcmp(r->kernels[i].kernel_id, kid))
            return true;
    return false;
}

/* sid's suspects (all agents). */
static int suspects_of(skv_manager *m, const char *sid, suspect **out,
                       size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT kernel_id, agent_id, "
                                 "container_id, idx, started_ms FROM "
                                 "kernel_suspects WHERE session_id=? ORDER "
                                 "BY idx", NULL);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    while (sqlite3_step(st) == SQLITE_ROW) {
        suspect *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = SKV_ENOMEM;
            break;
        }
        *out = v;
        suspect *x = &v[(*n)++];
        const unsigned char *c = sqlite3_column_text(st, 2);
        snprintf(x->kid, sizeof x->kid, "%s", sqlite3_column_text(st, 0));
        snprintf(x->agent, sizeof x->agent, "%s", sqlite3_column_text(st, 1));
        snprintf(x->container, sizeof x->container, "%s",
                 c ? (const char *)c : x->kid);
        x->idx = sqlite3_column_int(st, 3);
        x->started_ms = sqlite3_column_int64(st, 4);
    }
    skv__mgr_db_done(m, st);
    return rc;
}

static int count_kernels(skv_manager *m, const char *sid, int *n)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT count(*) FROM kernels "
                                 "WHERE session_id=?", NULL);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    *n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    skv__mgr_db_done(m, st);
    return 0;
}

/* Why sid cannot be adopted back from agent a, or NULL when it can. */
static const char *refusal(skv_manager *m, const skv__mgr_agent *a,
                           const skv_proto_agent_register *r, const char *sid,
                           const suspect *s, size_t n)
{
    skv_manager_session_state st;
    int nk = 0;
    if (skv__mgr_session_get_state(m, sid, &st, NULL) ||
        count_kernels(m, sid, &nk))
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

static int exec_kid(skv_manager *m, const char *sql, const char *kid,
                    skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, sql, err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, kid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, sql);
    skv__mgr_db_done(m, st);
    return rc;
}

/* The kernel row of s->idx becomes the suspect again: its old id (the
 * row's newer id was never sent: the session was pending), agent,
 * container and allocation. */
static int restore_kernel(skv_manager *m, const char *sid, const suspect *s,
                          skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "UPDATE kernels SET id=?1, "
                                 "agent_id=?2, container_id=?3, status="
                                 "'RUNNING', exit_code=NULL, reason=NULL "
                                 "WHERE session_id=?4 AND idx=?5", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, s->kid);
    skv__mgr_bind_text(st, 2, s->agent);
    skv__mgr_bind_text(st, 3, s->container);
    skv__mgr_bind_text(st, 4, sid);
    sqlite3_bind_int(st, 5, s->idx);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "kernel");
    skv__mgr_db_done(m, st);
    if (!rc)
        rc = exec_kid(m, "INSERT INTO kernel_alloc(kernel_id,device_id,slot,"
                      "amount,whole) SELECT kernel_id, device_id, slot, "
                      "amount, whole FROM kernel_suspect_alloc WHERE "
                      "kernel_id=?", s->kid, err);
    return rc;
}

static int started_back(skv_manager *m, const char *sid, int64_t started,
                        skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "UPDATE sessions SET started_ms=? "
                                 "WHERE id=?", err);
    if (rc)
        return rc;
    if (started)
        sqlite3_bind_int64(st, 1, started);
    else
        sqlite3_bind_null(st, 1);
    skv__mgr_bind_text(st, 2, sid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "session");
    skv__mgr_db_done(m, st);
    return rc;
}

static int adopt_tx(skv_manager *m, const skv__mgr_agent *a, const char *sid,
                    const suspect *s, size_t n, int64_t now, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = restore_kernel(m, sid, &s[i], err);
    if (!rc)
        rc = started_back(m, sid, n ? s[0].started_ms : 0, err);
    if (!rc)
        rc = exec_kid(m, "DELETE FROM kernel_suspects WHERE session_id=?",
                      sid, err);
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
    sqlite3_stmt *st;
    int64_t created = now, started = now;
    if (skv__mgr_db_prepare(m, &st, "SELECT created_ms, started_ms FROM "
                            "sessions WHERE id=?", NULL) == 0) {
        skv__mgr_bind_text(st, 1, sid);
        if (sqlite3_step(st) == SQLITE_ROW) {
            created = sqlite3_column_int64(st, 0);
            started = sqlite3_column_int64(st, 1);
        }
        skv__mgr_db_done(m, st);
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
        rc = exec_kid(m, "DELETE FROM kernel_suspects WHERE kernel_id=?",
                      k->kernel_id, &e);
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
    sqlite3_stmt *st;
    bool found = false;
    if (!kid || skv__mgr_db_prepare(m, &st, "SELECT session_id FROM "
                                    "kernel_suspects WHERE kernel_id=? AND "
                                    "agent_id=?", NULL))
        return false;
    skv__mgr_bind_text(st, 1, kid);
    skv__mgr_bind_text(st, 2, a->id);
    if ((found = sqlite3_step(st) == SQLITE_ROW))
        snprintf(sid, SKV__MGR_ID_MAX, "%s", sqlite3_column_text(st, 0));
    skv__mgr_db_done(m, st);
    return found;
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
    if (suspects_of(m, sid, &s, &n)) {
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
    sqlite3_stmt *st;
    char **ids = NULL;
    size_t n = 0;
    if (skv__mgr_db_prepare(m, &st, "SELECT kernel_id FROM kernel_suspects "
                            "WHERE agent_id=?", NULL))
        return;
    skv__mgr_bind_text(st, 1, a->id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *kid = (const char *)sqlite3_column_text(st, 0);
        char **v = reported(r, kid) ? NULL
                                    : skv__reallocarray(ids, n + 1, sizeof *v);
        if (v && (v[n] = skv__strdup(kid)))
            n++;
        if (v)
            ids = v;
    }
    skv__mgr_db_done(m, st);
    for (size_t i = 0; i < n; i++) {
        skv__log(SKV_LOG_WARN, "manager", "suspect kernel %s is not on agent "
                 "%s any more; forgotten", ids[i], a->id);
        exec_kid(m, "DELETE FROM kernel_suspects WHERE kernel_id=?", ids[i],
                 NULL);
    }
    skv__mgr_ids_free(ids, n);
}
