/* Session rows: status (with its history entry and timestamps), the end a
 * stop asked for, exit codes, times. Callers hold the transaction.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "history_buf.h"
#include "kernel_cache.h"
#include "row_buf.h"
#include "state_cache.h"
#include "store_int.h"

/* Buffered until COMMIT or a read of the table (history_buf.c). */
int skv__mgr_store_history_add(skv__db *db, const char *sid,
                               const char *status, const char *reason,
                               int64_t now_ms, skv_error *err)
{
    return skv__history_buf_add(db, sid, status, reason, now_ms, err);
}

static bool final_name(const char *s)
{
    return !strcmp(s, "TERMINATED") || !strcmp(s, "CANCELLED") ||
           !strcmp(s, "ERROR");
}

/* The row now says status: what the cache returns until it is undone. */
static void note_state(skv__db *db, const char *sid, const char *status)
{
    skv_manager_session_state s;
    if (!skv_manager_session_state_parse(&s, status, NULL))
        skv__mgr_store_state_note(db, sid, s);
}

/* The live marker (schema.c, core step 3) is written only when it
 * changes: a final status clears it, and a status that is not final sets
 * it unless the state cache knows the session was live already, which on
 * the hot path it does. An UPDATE that does not name live leaves the
 * index sessions_live alone. */
static int live_change(skv__db *db, const char *sid, const char *status)
{
    if (final_name(status))
        return SKV__ROW_LIVE_CLEAR;
    return skv__mgr_store_state_live(db, sid) ? SKV__ROW_LIVE_KEEP
                                              : SKV__ROW_LIVE_SET;
}

/* started_ms is set once, at the first RUNNING; finished_ms at every
 * final state, exit_code with it when the caller has one (unset fields
 * keep the column as it is): a session's end is one statement, and a
 * status the same transaction writes again later is no statement of its
 * own when row_buf.c may hold it.
 * The row count says whether the session exists; a session the state
 * cache holds exists on this connection (its row was read or written
 * here, and no session row is ever deleted), so the count is asked only
 * on a miss. On PostgreSQL asking is a round trip (it syncs the batch's
 * pipeline): three per session, most of what a session waited for. */
static int status_row(skv__db *db, const char *sid, const char *status,
                      const char *reason, const int *exit_code,
                      int64_t now_ms, skv_error *err)
{
    bool known = skv__mgr_store_state_known(db, sid);
    skv__row_write w = {.id = sid, .status = status, .reason = reason};
    int64_t changes = 1;
    w.has_started = !strcmp(status, "RUNNING");
    w.has_finished = final_name(status);
    w.started_ms = w.finished_ms = now_ms;
    w.has_exit = exit_code != NULL;
    w.exit_code = exit_code ? *exit_code : 0;
    w.live = live_change(db, sid, status);
    int rc = skv__row_buf_add(db, &w, known ? NULL : &changes, err);
    if (!rc && changes == 0)
        rc = skv__err(err, SKV_ENOENT, "no session '%s'", sid);
    if (!rc)
        note_state(db, sid, status);
    if (!rc)
        rc = skv__mgr_store_history_add(db, sid, status, reason, now_ms, err);
    return rc;
}

int skv__mgr_store_session_status(skv__db *db, const char *sid,
                                  const char *status, const char *reason,
                                  int64_t now_ms, skv_error *err)
{
    return status_row(db, sid, status, reason, NULL, now_ms, err);
}

int skv__mgr_store_session_ended(skv__db *db, const char *sid,
                                 const char *status, const char *reason,
                                 int exit_code, int64_t now_ms,
                                 skv_error *err)
{
    return status_row(db, sid, status, reason, &exit_code, now_ms, err);
}

int skv__mgr_store_session_state(skv__db *db, const char *sid,
                                 skv_manager_session_state *out,
                                 skv_error *err)
{
    if (skv__mgr_store_state_cached(db, sid, out))
        return 0;
    char name[32];
    int rc = skv__mgr_store_text1(db, "SELECT status FROM sessions WHERE "
                                  "id=?", SKV__ARGS(sid), name, sizeof name,
                                  err);
    if (rc == SKV__DB_ROW && !(rc = skv_manager_session_state_parse(out, name,
                                                                   err))) {
        skv__mgr_store_state_note(db, sid, *out);
        return 0;
    }
    return rc < 0 ? rc : skv__err(err, SKV_ENOENT, "no session '%s'", sid);
}

/* The first stop decides how the session ends; later ones do not. */
int skv__mgr_store_session_end(skv__db *db, const char *sid,
                               const char *end_status, const char *reason,
                               skv_error *err)
{
    int rc = skv__mgr_store_exec_text(db, "UPDATE sessions SET end_status=?, "
                                      "end_reason=? WHERE id=? AND end_status"
                                      " IS NULL", SKV__ARGS(end_status, reason,
                                                            sid), NULL, err);
    if (!rc)
        skv__mgr_store_kc_fin_end(db, sid, end_status, reason);
    return rc;
}

/* started: 0 binds NULL (never started). */
int skv__mgr_store_session_started(skv__db *db, const char *sid,
                                   int64_t started, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE sessions SET started_ms=? WHERE "
                             "id=?", &st, err);
    if (rc)
        return rc;
    if (started)
        skv__db_bind_int64(st, 1, started);
    else
        skv__db_bind_null(st, 1);
    skv__db_bind_text(st, 2, sid);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_session_times(skv__db *db, const char *sid,
                                 int64_t *created, int64_t *started,
                                 skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT created_ms, started_ms FROM "
                             "sessions WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        *created = skv__db_column_int64(st, 0);
        *started = skv__db_column_int64(st, 1);
    }
    skv__db_done(st);
    return rc < 0 ? rc : rc == SKV__DB_ROW ? 0
                  : skv__err(err, SKV_ENOENT, "no session '%s'", sid);
}

void skv__mgr_store_finish_fill(skv__mgr_store_finish *out, const char *es,
                                const char *er, bool has_code, int code,
                                const char *ks, const char *kr)
{
    skv__strlcpy(out->end_status, es ? es : "", sizeof out->end_status);
    skv__strlcpy(out->reason, er ? er : kr ? kr : "", sizeof out->reason);
    out->stop_reason = er != NULL;
    out->exit_code = has_code ? code : -1;
    out->main_error = ks && strcmp(ks, "ERROR") == 0;
}

int skv__mgr_store_session_finish_row(skv__db *db, const char *sid,
                                      skv__mgr_store_finish *out,
                                      skv_error *err)
{
    if (skv__mgr_store_kc_finish(db, sid, out))
        return 0;       /* a session inserted here: no SELECT (a wait on
                         * PostgreSQL, one per session) */
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT s.end_status, s.end_reason, "
        "k.exit_code, k.status, k.reason FROM sessions s LEFT JOIN kernels k"
        " ON k.session_id=s.id AND k.idx=0 WHERE s.id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        skv__mgr_store_finish_fill(out, skv__db_column_text(st, 0),
                                   skv__db_column_text(st, 1),
                                   !skv__db_column_is_null(st, 2),
                                   (int)skv__db_column_int64(st, 2),
                                   skv__db_column_text(st, 3),
                                   skv__db_column_text(st, 4));
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}
