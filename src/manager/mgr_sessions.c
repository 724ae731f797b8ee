/* Session-level transitions: stop (terminate request, failed start, lost
 * agent), finish (every kernel ended) and requeue (preemption, lost agent
 * with the "requeue" policy). The database changes commit first; the
 * scheduler follows; messages to agents go out last.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

static int exec_sid(skv_manager *m, const char *sql, const char *sid,
                    const char *a2, const char *a3, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, sql, err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    if (sqlite3_bind_parameter_count(st) >= 2)
        skv__mgr_bind_text(st, 2, a2);
    if (sqlite3_bind_parameter_count(st) >= 3)
        skv__mgr_bind_text(st, 3, a3);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, sql);
    skv__mgr_db_done(m, st);
    return rc;
}

/* Kernel ids of sid whose status is in the SQL list `in`. */
int skv__mgr_kernel_ids(skv_manager *m, const char *sid, const char *in,
                        char ***out, size_t *n, skv_error *err)
{
    char *sql = skv__asprintf("SELECT id FROM kernels WHERE session_id=? AND "
                              "status IN (%s) ORDER BY idx", in);
    sqlite3_stmt *st;
    int rc = sql ? skv__mgr_db_prepare(m, &st, sql, err)
                 : skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(sql);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    *out = NULL;
    *n = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char **v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v || !(v[*n] = skv__mgr_col_dup(st, 0))) {
            if (v)
                *out = v;
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        (*n)++;
    }
    skv__mgr_db_done(m, st);
    return rc;
}

void skv__mgr_ids_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv__free(v[i]);
    skv__free(v);
}

static int cancel_pending(skv_manager *m, const char *sid,
                          skv_manager_session_state fin, const char *reason,
                          int64_t now, skv_error *err)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv_sched_cancel(m->sched, sid, now, &e))
        skv__log(SKV_LOG_WARN, "manager", "cancel %s: %s", sid, e.message);
    int rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE kernels SET status='CANCELLED' WHERE "
                      "session_id=?", sid, NULL, NULL, err);
    if (!rc)
        rc = skv__mgr_session_set(m, sid, fin == SKV_SESSION_TERMINATED
                                              ? SKV_SESSION_CANCELLED : fin,
                                  reason, now, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    m->dirty = true;
    rc = skv__mgr_commit(m, err);
    if (!rc)
        skv__mgr_sched_forget(m, sid);
    return rc;
}

static int stop_tx(skv_manager *m, const char *sid, skv_manager_session_state fin,
                   const char *reason, const char *lost_agent,
                   skv_manager_session_state cur, int64_t now, skv_error *err)
{
    int rc = exec_sid(m, "UPDATE sessions SET end_status=?2, end_reason=?3 "
                      "WHERE id=?1 AND end_status IS NULL", sid,
                      skv_manager_session_state_name(fin), reason, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE kernels SET status='CANCELLED' WHERE "
                      "session_id=? AND status IN ('PENDING','SCHEDULED')",
                      sid, NULL, NULL, err);
    if (!rc && lost_agent)
        rc = exec_sid(m, "UPDATE kernels SET status='ERROR', exit_code=-1, "
                      "reason=?3 WHERE session_id=?1 AND agent_id=?2 AND "
                      "status NOT IN ('TERMINATED','CANCELLED','ERROR')",
                      sid, lost_agent, "lost with its agent", err);
    if (!rc && cur != SKV_SESSION_TERMINATING)
        rc = skv__mgr_session_set(m, sid, SKV_SESSION_TERMINATING, reason,
                                  now, err);
    return rc;
}

int skv__mgr_session_stop(skv_manager *m, const char *sid,
                          skv_manager_session_state fin, const char *reason,
                          const char *lost_agent, int64_t now_ms,
                          skv_error *err)
{
    skv_manager_session_state cur;
    int rc = skv__mgr_session_get_state(m, sid, &cur, err);
    if (rc || cur >= SKV_SESSION_TERMINATED)
        return rc;
    if (cur == SKV_SESSION_PENDING)
        return cancel_pending(m, sid, fin, reason, now_ms, err);
    if (cur == SKV_SESSION_SCHEDULED && fin == SKV_SESSION_TERMINATED)
        fin = SKV_SESSION_CANCELLED;   /* nothing was started yet */
    char **ids = NULL;
    size_t n = 0;
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = stop_tx(m, sid, fin, reason, lost_agent, cur, now_ms, err);
    if (!rc)
        rc = skv__mgr_kernel_ids(m, sid, "'PREPARING','RUNNING'", &ids, &n, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE kernels SET status='TERMINATING' WHERE "
                      "session_id=? AND status IN ('PREPARING','RUNNING')",
                      sid, NULL, NULL, err);
    if (rc) {
        skv__mgr_rollback(m);
        skv__mgr_ids_free(ids, n);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    for (size_t i = 0; !rc && i < n; i++)
        skv__mgr_send_destroy(m, ids[i], reason);
    skv__mgr_ids_free(ids, n);
    size_t live = 0;
    if (!rc)
        rc = skv__mgr_kernel_ids(m, sid, "'PREPARING','RUNNING','TERMINATING'",
                           &ids, &live, err);
    if (!rc)
        skv__mgr_ids_free(ids, live);
    return rc || live ? rc : skv__mgr_session_finish(m, sid, now_ms, err);
}

typedef struct finish_info {
    char end_status[32];
    char reason[256];
    bool stop_reason;    /* reason is why the session was stopped */
    int exit_code;
    bool main_error;
} finish_info;

static int finish_read(skv_manager *m, const char *sid, finish_info *fi,
                       skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "SELECT s.end_status, s.end_reason, k.exit_code, k.status, k.reason"
        " FROM sessions s LEFT JOIN kernels k ON k.session_id=s.id"
        " AND k.idx=0 WHERE s.id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    memset(fi, 0, sizeof *fi);
    fi->exit_code = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *es = (const char *)sqlite3_column_text(st, 0);
        const char *er = (const char *)sqlite3_column_text(st, 1);
        const char *kr = (const char *)sqlite3_column_text(st, 4);
        const char *ks = (const char *)sqlite3_column_text(st, 3);
        snprintf(fi->end_status, sizeof fi->end_status, "%s", es ? es : "");
        snprintf(fi->reason, sizeof fi->reason, "%s", er ? er : kr ? kr : "");
        fi->stop_reason = er != NULL;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL)
            fi->exit_code = sqlite3_column_int(st, 2);
        fi->main_error = ks && strcmp(ks, "ERROR") == 0;
    }
    skv__mgr_db_done(m, st);
    return 0;
}

static skv_manager_session_state final_state(const finish_info *fi)
{
    skv_manager_session_state s = SKV_SESSION_TERMINATED;
    if (fi->end_status[0])
        skv_manager_session_state_parse(&s, fi->end_status, NULL);
    if (s == SKV_SESSION_TERMINATED && fi->main_error)
        s = SKV_SESSION_ERROR;
    return s;
}

int skv__mgr_session_finish(skv_manager *m, const char *sid, int64_t now_ms,
                            skv_error *err)
{
    finish_info fi;
    skv_manager_session_state cur;
    int rc = skv__mgr_session_get_state(m, sid, &cur, err);
    if (rc || cur >= SKV_SESSION_TERMINATED)
        return rc;
    rc = finish_read(m, sid, &fi, err);
    if (rc)
        return rc;
    skv_manager_session_state fin = final_state(&fi);
    char reason[300];
    if (fi.reason[0] && fi.stop_reason)
        snprintf(reason, sizeof reason, "%s (exit code %d)", fi.reason,
                 fi.exit_code);
    else if (fi.reason[0])
        snprintf(reason, sizeof reason, "%s", fi.reason);
    else
        snprintf(reason, sizeof reason, "exit code %d", fi.exit_code);
    char code[16];
    snprintf(code, sizeof code, "%d", fi.exit_code);
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE sessions SET exit_code=CAST(?2 AS INTEGER) "
                      "WHERE id=?1", sid, code, NULL, err);
    if (!rc)
        rc = skv__mgr_session_set(m, sid, fin, reason, now_ms, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    skv_sched_state ss;
    if (!rc && skv_sched_session_state(&ss, m->sched, sid, NULL) == 0 &&
        (ss == SKV_SCHED_SCHEDULED || ss == SKV_SCHED_RUNNING))
        skv_sched_mark_finished(m->sched, sid,
                                fin != SKV_SESSION_TERMINATED ||
                                    fi.exit_code != 0, now_ms, NULL);
    if (!rc)
        skv__mgr_sched_forget(m, sid);
    m->dirty = true;
    return rc;
}

/* A lost agent's kernels are kept as suspects before their allocation
 * rows go; then every kernel gets a new id for its next placement. */
static int requeue_tx(skv_manager *m, const char *sid, const char *reason,
                      const char *lost_agent, int64_t now, skv_error *err)
{
    int rc = lost_agent ? skv__mgr_suspect_keep(m, sid, lost_agent, now, err)
                        : 0;
    if (!rc)
        rc = exec_sid(m, "DELETE FROM kernel_alloc WHERE kernel_id IN "
                      "(SELECT id FROM kernels WHERE session_id=?)", sid,
                      NULL, NULL, err);
    if (!rc)
        rc = skv__mgr_kernel_ids_renew(m, sid, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE kernels SET agent_id=NULL, container_id="
                      "NULL, status='PENDING', exit_code=NULL, reason=NULL "
                      "WHERE session_id=?", sid, NULL, NULL, err);
    if (!rc)
        rc = exec_sid(m, "UPDATE sessions SET end_status=NULL, end_reason="
                      "NULL, started_ms=NULL WHERE id=?", sid, NULL, NULL,
                      err);
    if (!rc)
        rc = skv__mgr_session_set(m, sid, SKV_SESSION_PENDING, reason, now,
                                  err);
    return rc;
}

int skv__mgr_session_requeue(skv_manager *m, const char *sid,
                             const char *reason, int64_t now_ms,
                             skv_error *err)
{
    return skv__mgr_session_requeue_lost(m, sid, NULL, reason, now_ms, err);
}

int skv__mgr_session_requeue_lost(skv_manager *m, const char *sid,
                                  const char *lost_agent, const char *reason,
                                  int64_t now_ms, skv_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = skv__mgr_kernel_ids(m, sid, "'PREPARING','RUNNING','TERMINATING'",
                           &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        skv__mgr_send_destroy(m, ids[i], reason);
        skv__mgr_metrics_kernel_gone(m, ids[i]);
    }
    skv__mgr_ids_free(ids, n);
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = requeue_tx(m, sid, reason, lost_agent, now_ms, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    skv_error e = SKV_ERROR_INIT;
    if (!rc && skv_sched_requeue(m->sched, sid, now_ms, &e))
        skv__log(SKV_LOG_WARN, "manager", "requeue %s: %s", sid, e.message);
    m->dirty = true;
    return rc;
}
