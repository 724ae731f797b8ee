/* Kernel-level transitions: started (create reply, status "running",
 * adopted at reconciliation) and ended (exit, lost, failed start). Each is one
 * transaction; the session follows (RUNNING when all kernels run, TERMINATING
 * when the main kernel ends, its final state when all have ended).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

static bool kernel_final(const char *s)
{
    return s && (!strcmp(s, "TERMINATED") || !strcmp(s, "CANCELLED") ||
                 !strcmp(s, "ERROR"));
}

/* session id, index and status of a kernel. */
static int kernel_info(skv_manager *m, const char *kid, char *sid, int *idx,
                       char *status, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT session_id, idx, status "
                                 "FROM kernels WHERE id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, kid);
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(sid, SKV__MGR_ID_MAX, "%s", sqlite3_column_text(st, 0));
        *idx = sqlite3_column_int(st, 1);
        snprintf(status, 32, "%s", sqlite3_column_text(st, 2));
    } else {
        rc = skv__err(err, SKV_ENOENT, "no kernel '%s'", kid);
    }
    skv__mgr_db_done(m, st);
    return rc;
}

static int count_kernels(skv_manager *m, const char *sid, const char *where,
                         int *out, skv_error *err)
{
    char *sql = skv__asprintf("SELECT count(*) FROM kernels WHERE "
                              "session_id=? AND %s", where);
    sqlite3_stmt *st;
    int rc = sql ? skv__mgr_db_prepare(m, &st, sql, err)
                 : skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(sql);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    *out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    skv__mgr_db_done(m, st);
    return 0;
}

static int set_running(skv_manager *m, const char *kid, const char *sid,
                       const char *container, int64_t now, bool *all,
                       skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "UPDATE kernels SET status='RUNNING',"
                                 " container_id=? WHERE id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, container ? container : kid);
    skv__mgr_bind_text(st, 2, kid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "kernel");
    skv__mgr_db_done(m, st);
    int left = 0;
    if (!rc)
        rc = count_kernels(m, sid, "status<>'RUNNING'", &left, err);
    skv_manager_session_state ss;
    if (!rc)
        rc = skv__mgr_session_get_state(m, sid, &ss, err);
    *all = !rc && left == 0 && (ss == SKV_SESSION_SCHEDULED ||
                                ss == SKV_SESSION_PREPARING);
    if (*all)
        rc = skv__mgr_session_set(m, sid, SKV_SESSION_RUNNING,
                                  "all kernels running", now, err);
    return rc;
}

int skv__mgr_kernel_running(skv_manager *m, const char *kid,
                            const char *container_id, int64_t now_ms,
                            skv_error *err)
{
    char sid[SKV__MGR_ID_MAX], status[32];
    int idx;
    int rc = kernel_info(m, kid, sid, &idx, status, err);
    if (rc)
        return rc;
    if (strcmp(status, "SCHEDULED") && strcmp(status, "PREPARING"))
        return 0;   /* already running, ending or ended: nothing to do */
    bool all = false;
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = set_running(m, kid, sid, container_id, now_ms, &all, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    if (!rc)
        skv__mgr_metrics_kernel_running(m, kid, now_ms);
    if (!rc && all) {
        skv_error e = SKV_ERROR_INIT;
        if (skv_sched_mark_started(m->sched, sid, now_ms, &e))
            skv__log(SKV_LOG_WARN, "manager", "mark_started %s: %s", sid,
                     e.message);
    }
    return rc;
}

static int set_ended(skv_manager *m, const char *kid, const char *status,
                     int exit_code, const char *reason, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "UPDATE kernels SET status=?,"
                                 " exit_code=?, reason=? WHERE id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, status);
    sqlite3_bind_int(st, 2, exit_code);
    skv__mgr_bind_text(st, 3, reason);
    skv__mgr_bind_text(st, 4, kid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "kernel");
    skv__mgr_db_done(m, st);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "kernel %s -> %s (exit %d)%s%s",
                 kid, status, exit_code, reason ? ": " : "",
                 reason ? reason : "");
    return rc;
}

/* Move the session on from its kernels' states: finished when none is
 * live, stopping when its main kernel has ended. Idempotent, so it also
 * repairs a crash between a kernel's exit and the session's transition. */
int skv__mgr_session_settle(skv_manager *m, const char *sid, int64_t now_ms,
                            skv_error *err)
{
    skv_manager_session_state s;
    int live = 0, main_done = 0;
    int rc = skv__mgr_session_get_state(m, sid, &s, err);
    if (rc || s == SKV_SESSION_PENDING || s >= SKV_SESSION_TERMINATED)
        return rc;
    rc = count_kernels(m, sid, "status NOT IN ('TERMINATED','CANCELLED',"
                       "'ERROR')", &live, err);
    if (!rc)
        rc = count_kernels(m, sid, "idx=0 AND status IN ('TERMINATED',"
                           "'CANCELLED','ERROR')", &main_done, err);
    if (rc)
        return rc;
    if (live == 0)
        return skv__mgr_session_finish(m, sid, now_ms, err);
    if (main_done && s != SKV_SESSION_TERMINATING)
        return skv__mgr_session_stop(m, sid, SKV_SESSION_TERMINATED,
                                     "main kernel exited", NULL, now_ms, err);
    return 0;
}

int skv__mgr_kernel_ended(skv_manager *m, const char *kid, const char *status,
                          int exit_code, const char *reason, int64_t now_ms,
                          skv_error *err)
{
    char sid[SKV__MGR_ID_MAX], old[32];
    int idx;
    int rc = kernel_info(m, kid, sid, &idx, old, err);
    if (rc)
        return rc;
    if (!kernel_final(old)) {
        rc = skv__mgr_begin(m, err);
        if (!rc)
            rc = set_ended(m, kid, status, exit_code, reason, err);
        if (rc) {
            skv__mgr_rollback(m);
            return rc;
        }
        rc = skv__mgr_commit(m, err);
        skv__mgr_metrics_kernel_gone(m, kid);
    }
    return rc ? rc : skv__mgr_session_settle(m, sid, now_ms, err);
}

void skv__mgr_send_destroy(skv_manager *m, const char *kid, const char *reason)
{
    skv__mgr_send_destroy_grace(m, kid, reason, 5000);
}

void skv__mgr_send_destroy_grace(skv_manager *m, const char *kid,
                                 const char *reason, uint32_t grace_ms)
{
    sqlite3_stmt *st;
    if (skv__mgr_db_prepare(m, &st, "SELECT session_id, agent_id FROM kernels"
                            " WHERE id=?", NULL))
        return;
    skv__mgr_bind_text(st, 1, kid);
    if (sqlite3_step(st) == SQLITE_ROW) {
        skv__mgr_agent *a = skv__mgr_agent_find(
            m, (const char *)sqlite3_column_text(st, 1));
        skv_proto_kernel_destroy d = {0};
        d.session_id = (char *)sqlite3_column_text(st, 0);
        d.kernel_id = (char *)kid;
        d.reason = (char *)reason;
        d.grace_ms = grace_ms;
        if (a && a->conn && a->state == SKV__AGENT_ALIVE)
            skv__mgr_request(m, a->conn, SKV__REQ_DESTROY,
                             SKV_PROTO_KERNEL_DESTROY, &d, kid, 0, 0);
    }
    skv__mgr_db_done(m, st);
}
