/* Session-level transitions: stop (terminate request, failed start, lost
 * agent), finish (every kernel ended) and requeue (preemption, lost agent
 * with the "requeue" policy). The database changes commit first; the
 * scheduler follows; messages to agents go out last.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* Kernel ids of sid whose status is in statuses ("A,B"; idx order). */
int skv__mgr_kernel_ids(skv_manager *m, const char *sid, const char *in,
                        char ***out, size_t *n, skv_error *err)
{
    return skv__mgr_store_kernel_ids(m->store, sid, in, out, n, err);
}

void skv__mgr_ids_free(char **v, size_t n)
{
    skv__mgr_store_ids_free(v, n);
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
        rc = skv__mgr_store_kernels_move(m->store, sid, "PENDING,SCHEDULED,"
                                         "PREPARING,RUNNING,TERMINATING,"
                                         "TERMINATED,CANCELLED,ERROR",
                                         "CANCELLED", err);
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
    int rc = skv__mgr_store_session_end(m->store, sid,
                                        skv_manager_session_state_name(fin),
                                        reason, err);
    if (!rc)
        rc = skv__mgr_store_kernels_move(m->store, sid, "PENDING,SCHEDULED",
                                         "CANCELLED", err);
    if (!rc && lost_agent)
        rc = skv__mgr_store_kernels_lost(m->store, sid, lost_agent,
                                         "lost with its agent", err);
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
        rc = skv__mgr_kernel_ids(m, sid, "PREPARING,RUNNING", &ids, &n, err);
    if (!rc)
        rc = skv__mgr_store_kernels_move(m->store, sid, "PREPARING,RUNNING",
                                         "TERMINATING", err);
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
        rc = skv__mgr_kernel_ids(m, sid, "PREPARING,RUNNING,TERMINATING",
                           &ids, &live, err);
    if (!rc)
        skv__mgr_ids_free(ids, live);
    return rc || live ? rc : skv__mgr_session_finish(m, sid, now_ms, err);
}

static skv_manager_session_state final_state(const skv__mgr_store_finish *fi)
{
    skv_manager_session_state s = SKV_SESSION_TERMINATED;
    if (fi->end_status[0])
        skv_manager_session_state_parse(&s, fi->end_status, NULL);
    if (s == SKV_SESSION_TERMINATED && fi->main_error)
        s = SKV_SESSION_ERROR;
    return s;
}

/* sid's final row in the open transaction or unit. The end's row comes
 * from the kernel cache when it knows it (store/sessions.c finish_row). */
static int finish_tx(skv_manager *m, const char *sid, int64_t now_ms,
                     bool *failed, skv_error *err)
{
    skv__mgr_store_finish fi;
    int rc = skv__mgr_store_session_finish_row(m->store, sid, &fi, err);
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
    *failed = fin != SKV_SESSION_TERMINATED || fi.exit_code != 0;
    return skv__mgr_session_set_ended(m, sid, fin, reason, fi.exit_code,
                                      now_ms, err);
}

/* Once committed (mgr_units.c): the scheduler frees its capacity. */
void skv__mgr_session_ended(skv_manager *m, const char *sid, bool failed,
                            int64_t now_ms)
{
    skv__mgr_after(m, SKV__AFTER_FINISHED, sid, failed, now_ms);
    m->dirty = true;
}

int skv__mgr_session_finish(skv_manager *m, const char *sid, int64_t now_ms,
                            skv_error *err)
{
    skv_manager_session_state cur;
    bool failed = false;
    int rc = skv__mgr_session_get_state(m, sid, &cur, err);
    if (rc || cur >= SKV_SESSION_TERMINATED)
        return rc;
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = finish_tx(m, sid, now_ms, &failed, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    if (!rc)
        skv__mgr_session_ended(m, sid, failed, now_ms);
    m->dirty = true;
    return rc;
}

/* A kernel's exit and its session's end in one unit: with the kernel
 * just ended (in the caller's open unit) and none of sid's left live, the
 * session's final row goes in here too (*done), so a failure undoes both
 * and the agent's repeated exit finds both as they were. Any other case
 * (a stop to ask for, nothing to do) is the settle after the commit. */
int skv__mgr_session_end_in(skv_manager *m, const char *sid, int64_t now_ms,
                            bool *done, bool *failed, skv_error *err)
{
    skv_manager_session_state s;
    int live = 0;
    *done = false;
    int rc = skv__mgr_session_get_state(m, sid, &s, err);
    if (rc || s == SKV_SESSION_PENDING || s >= SKV_SESSION_TERMINATED)
        return rc;
    rc = skv__mgr_store_kernel_count(m->store, sid, SKV__MGR_KERNEL_FINAL,
                                     false, false, &live, err);
    if (rc || live)
        return rc;
    rc = finish_tx(m, sid, now_ms, failed, err);
    *done = rc == 0;
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
        rc = skv__mgr_store_session_unplace(m->store, sid, err);
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

static int requeue(skv_manager *m, const char *sid, const char *lost_agent,
                   const char *key, const char *reason, int64_t now_ms,
                   skv_error *err);

int skv__mgr_session_requeue_lost(skv_manager *m, const char *sid,
                                  const char *lost_agent, const char *reason,
                                  int64_t now_ms, skv_error *err)
{
    return requeue(m, sid, lost_agent, NULL, reason, now_ms, err);
}

int skv__mgr_session_requeue_for(skv_manager *m, const char *sid,
                                 const char *preemptor, const char *reason,
                                 int64_t now_ms, skv_error *err)
{
    return requeue(m, sid, NULL, preemptor, reason, now_ms, err);
}

static int requeue(skv_manager *m, const char *sid, const char *lost_agent,
                   const char *key, const char *reason, int64_t now_ms,
                   skv_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = skv__mgr_kernel_ids(m, sid, "PREPARING,RUNNING,TERMINATING",
                           &ids, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        skv__mgr_send_destroy(m, ids[i], reason);
        skv__mgr_metrics_kernel_gone(m, ids[i]);
    }
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = requeue_tx(m, sid, reason, lost_agent, now_ms, err);
    if (rc) {
        skv__mgr_rollback(m);
        skv__mgr_ids_free(ids, n);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    if (rc)
        skv__mgr_ids_free(ids, n);
    else     /* the scheduler frees its capacity once the agents did */
        skv__mgr_drain_add(m, sid, key, ids, n, now_ms);
    m->dirty = true;
    return rc;
}
