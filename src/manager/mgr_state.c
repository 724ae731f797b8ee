/* Session state names, and the status changes the manager logs (the rows
 * are the store's, store/sessions.c). Callers wrap these in their own
 * transaction so that a state change is all or nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static const char *const state_names[] = {
    "PENDING",    "SCHEDULED",  "PREPARING", "RUNNING",
    "TERMINATING", "TERMINATED", "CANCELLED", "ERROR"};

SKV_EXTERN const char *skv_manager_session_state_name(
    skv_manager_session_state s)
{
    if ((int)s < 0 || (size_t)s >= SKV__ARRAY_LEN(state_names))
        return "?";
    return state_names[s];
}

SKV_EXTERN int skv_manager_session_state_parse(skv_manager_session_state *out,
                                               const char *name,
                                               skv_error *err)
{
    if (!out || !name)
        return skv__err(err, SKV_EINVAL, "session state: NULL argument");
    for (size_t i = 0; i < SKV__ARRAY_LEN(state_names); i++)
        if (strcmp(name, state_names[i]) == 0) {
            *out = (skv_manager_session_state)i;
            return 0;
        }
    return skv__err(err, SKV_EINVAL, "unknown session state '%s'", name);
}

int skv__mgr_history_add(skv_manager *m, const char *sid, const char *status,
                         const char *reason, int64_t now_ms, skv_error *err)
{
    return skv__mgr_store_history_add(m->store, sid, status, reason, now_ms,
                                      err);
}

static void log_set(const char *sid, const char *name, const char *reason)
{
    skv__log(SKV_LOG_INFO, "manager", "session %s -> %s%s%s", sid, name,
             reason ? ": " : "", reason ? reason : "");
}

/* Set status, reason and the timestamp columns that go with the state. */
int skv__mgr_session_set(skv_manager *m, const char *sid,
                         skv_manager_session_state s, const char *reason,
                         int64_t now_ms, skv_error *err)
{
    const char *name = skv_manager_session_state_name(s);
    int rc = skv__mgr_store_session_status(m->store, sid, name, reason,
                                           now_ms, err);
    if (!rc)
        log_set(sid, name, reason);
    return rc;
}

/* The final state s with the session's exit code, in one row update. */
int skv__mgr_session_set_ended(skv_manager *m, const char *sid,
                               skv_manager_session_state s,
                               const char *reason, int exit_code,
                               int64_t now_ms, skv_error *err)
{
    const char *name = skv_manager_session_state_name(s);
    int rc = skv__mgr_store_session_ended(m->store, sid, name, reason,
                                          exit_code, now_ms, err);
    if (!rc)
        log_set(sid, name, reason);
    return rc;
}

int skv__mgr_session_get_state(skv_manager *m, const char *sid,
                               skv_manager_session_state *out,
                               skv_error *err)
{
    return skv__mgr_store_session_state(m->store, sid, out, err);
}

int skv__mgr_kernel_set(skv_manager *m, const char *kid, const char *status,
                        skv_error *err)
{
    int rc = skv__mgr_store_kernel_set(m->store, kid, status, err);
    if (!rc)
        skv__log(SKV_LOG_DEBUG, "manager", "kernel %s -> %s", kid, status);
    return rc;
}
