/* Session and kernel status rows and the status history. Callers wrap these
 * in their own transaction so that a state change is all or nothing.
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
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "INSERT INTO session_history(session_id,status,ts_ms,reason)"
        " VALUES(?,?,?,?)", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    skv__mgr_bind_text(st, 2, status);
    sqlite3_bind_int64(st, 3, now_ms);
    skv__mgr_bind_text(st, 4, reason);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0
                                         : skv__mgr_db_err(m, err, "history");
    skv__mgr_db_done(m, st);
    return rc;
}

/* Set status, reason and the timestamp columns that go with the state. */
int skv__mgr_session_set(skv_manager *m, const char *sid,
                         skv_manager_session_state s, const char *reason,
                         int64_t now_ms, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "UPDATE sessions SET status=?1, status_reason=?2,"
        " started_ms=CASE WHEN ?1='RUNNING' AND started_ms IS NULL"
        "  THEN ?3 ELSE started_ms END,"
        " finished_ms=CASE WHEN ?1 IN ('TERMINATED','CANCELLED','ERROR')"
        "  THEN ?3 ELSE finished_ms END WHERE id=?4", err);
    if (rc)
        return rc;
    const char *name = skv_manager_session_state_name(s);
    skv__mgr_bind_text(st, 1, name);
    skv__mgr_bind_text(st, 2, reason);
    sqlite3_bind_int64(st, 3, now_ms);
    skv__mgr_bind_text(st, 4, sid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0
                                         : skv__mgr_db_err(m, err, "session");
    skv__mgr_db_done(m, st);
    if (!rc && sqlite3_changes(m->db) == 0)
        rc = skv__err(err, SKV_ENOENT, "no session '%s'", sid);
    if (!rc)
        rc = skv__mgr_history_add(m, sid, name, reason, now_ms, err);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "session %s -> %s%s%s", sid, name,
                 reason ? ": " : "", reason ? reason : "");
    return rc;
}

int skv__mgr_session_get_state(skv_manager *m, const char *sid,
                               skv_manager_session_state *out,
                               skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
                                 "SELECT status FROM sessions WHERE id=?",
                                 err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    if (sqlite3_step(st) == SQLITE_ROW)
        rc = skv_manager_session_state_parse(
            out, (const char *)sqlite3_column_text(st, 0), err);
    else
        rc = skv__err(err, SKV_ENOENT, "no session '%s'", sid);
    skv__mgr_db_done(m, st);
    return rc;
}

int skv__mgr_kernel_set(skv_manager *m, const char *kid, const char *status,
                        skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
                                 "UPDATE kernels SET status=? WHERE id=?",
                                 err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, status);
    skv__mgr_bind_text(st, 2, kid);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0
                                         : skv__mgr_db_err(m, err, "kernel");
    skv__mgr_db_done(m, st);
    if (!rc)
        skv__log(SKV_LOG_DEBUG, "manager", "kernel %s -> %s", kid, status);
    return rc;
}
