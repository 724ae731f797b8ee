/* Kernel-level transitions: started (create reply, status "running",
 * adopted at reconciliation) and ended (exit, lost, failed start). Each is one
 * transaction, or one unit of the tick's batch when an agent's event
 * caused it (mgr_units.c); the session follows (RUNNING when all kernels run, TERMINATING
 * when the main kernel ends, its final state when all have ended).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

#define FINAL SKV__MGR_KERNEL_FINAL

static bool kernel_final(const char *s)
{
    return s && (!strcmp(s, "TERMINATED") || !strcmp(s, "CANCELLED") ||
                 !strcmp(s, "ERROR"));
}

/* session id, index and status of a kernel. */
static int kernel_info(skv_manager *m, const char *kid, char *sid, int *idx,
                       char *status, skv_error *err)
{
    skv__mgr_store_kernel k;
    int rc = skv__mgr_store_kernel_info(m->store, kid, &k, err);
    if (rc)
        return rc;
    snprintf(sid, SKV__MGR_ID_MAX, "%s", k.sid);
    *idx = k.idx;
    snprintf(status, 32, "%s", k.status);
    return 0;
}

static int set_running(skv_manager *m, const char *kid, const char *sid,
                       const char *container, int64_t now, bool *all,
                       skv_error *err)
{
    int rc = skv__mgr_store_kernel_running(m->store, kid,
                                           container ? container : kid, err);
    int left = 0;
    if (!rc)
        rc = skv__mgr_store_kernel_count(m->store, sid, "RUNNING", false,
                                         false, &left, err);
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
    if (!rc && all)    /* once committed (mgr_units.c) */
        skv__mgr_after(m, SKV__AFTER_STARTED, sid, false, now_ms);
    return rc;
}

static int set_ended(skv_manager *m, const char *kid, const char *status,
                     int exit_code, const char *reason, skv_error *err)
{
    int rc = skv__mgr_store_kernel_ended(m->store, kid, status, exit_code,
                                         reason, err);
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
    rc = skv__mgr_store_kernel_count(m->store, sid, FINAL, false, false,
                                     &live, err);
    if (!rc)
        rc = skv__mgr_store_kernel_count(m->store, sid, FINAL, true, true,
                                         &main_done, err);
    if (rc)
        return rc;
    if (live == 0)
        return skv__mgr_session_finish(m, sid, now_ms, err);
    if (main_done && s != SKV_SESSION_TERMINATING)
        return skv__mgr_session_stop(m, sid, SKV_SESSION_TERMINATED,
                                     "main kernel exited", NULL, now_ms, err);
    return 0;
}

/* The exit and, when it was the last live kernel, the session's end: one
 * unit (mgr_sessions.c skv__mgr_session_end_in). */
int skv__mgr_kernel_ended(skv_manager *m, const char *kid, const char *status,
                          int exit_code, const char *reason, int64_t now_ms,
                          skv_error *err)
{
    char sid[SKV__MGR_ID_MAX], old[32];
    int idx;
    bool done = false, failed = false;
    int rc = kernel_info(m, kid, sid, &idx, old, err);
    if (rc || kernel_final(old))
        return rc ? rc : skv__mgr_session_settle(m, sid, now_ms, err);
    rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = set_ended(m, kid, status, exit_code, reason, err);
    if (!rc)
        rc = skv__mgr_session_end_in(m, sid, now_ms, &done, &failed, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    skv__mgr_metrics_kernel_gone(m, kid);
    if (!rc && done)
        skv__mgr_session_ended(m, sid, failed, now_ms);
    return rc || done ? rc : skv__mgr_session_settle(m, sid, now_ms, err);
}

void skv__mgr_send_destroy(skv_manager *m, const char *kid, const char *reason)
{
    skv__mgr_send_destroy_grace(m, kid, reason, 5000);
}

void skv__mgr_send_destroy_grace(skv_manager *m, const char *kid,
                                 const char *reason, uint32_t grace_ms)
{
    skv__mgr_store_kernel k;
    if (skv__mgr_store_kernel_info(m->store, kid, &k, NULL))
        return;
    skv__mgr_agent *a = skv__mgr_agent_find(m, k.agent);
    skv_proto_kernel_destroy d = {0};
    d.session_id = k.sid;
    d.kernel_id = (char *)kid;
    d.reason = (char *)reason;
    d.grace_ms = grace_ms;
    if (a && a->conn && a->state == SKV__AGENT_ALIVE)
        skv__mgr_request(m, a->conn, SKV__REQ_DESTROY,
                         SKV_PROTO_KERNEL_DESTROY, &d, kid, 0, 0);
}
