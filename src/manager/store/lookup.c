/* Single-row reads about a session: by client token, its stored submit
 * body, owner, status with exit code, whether a pending session names it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "create_cache.h"
#include "store_int.h"

/* sid and status of owner's earlier submission with token ("" none). */
int skv__mgr_store_session_by_token(skv__db *db, const char *owner,
                                    const char *token, char *sid,
                                    size_t sid_cap, char *status,
                                    size_t status_cap, skv_error *err)
{
    skv__db_stmt *st;
    sid[0] = status[0] = 0;
    int rc = skv__db_prepare(db, "SELECT id, status FROM sessions WHERE "
                             "owner=? AND client_token=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, owner);
    skv__db_bind_text(st, 2, token);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        snprintf(sid, sid_cap, "%s", skv__db_column_text(st, 0));
        snprintf(status, status_cap, "%s", skv__db_column_text(st, 1));
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* The submit body as accepted and the session's resolved owners; each
 * buffer SKV__STORE_ID_MAX. From memory while the insert's note holds
 * (create_cache.h). */
int skv__mgr_store_session_submit(skv__db *db, const char *sid,
                                  skv_proto_session_submit *out,
                                  char *domain, char *project, char *owner,
                                  skv_error *err)
{
    skv__db_stmt *st;
    const void *body = NULL;
    size_t blen = 0;
    if (skv__mgr_store_cc_submit(db, sid, &body, &blen, domain, project,
                                 owner))
        return skv_proto_body_decode(out, SKV_PROTO_SESSION_SUBMIT, body,
                                     blen, err);
    int rc = skv__db_prepare(db, "SELECT spec, domain, project, owner FROM "
                             "sessions WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    rc = skv__db_step(st, err);
    if (rc != SKV__DB_ROW) {
        skv__db_done(st);
        return rc < 0 ? rc : skv__err(err, SKV_ENOENT, "no session '%s'",
                                      sid);
    }
    size_t len = 0;
    const void *blob = skv__db_column_blob(st, 0, &len);
    rc = skv_proto_body_decode(out, SKV_PROTO_SESSION_SUBMIT, blob, len, err);
    snprintf(domain, SKV__STORE_ID_MAX, "%s", skv__db_column_text(st, 1));
    snprintf(project, SKV__STORE_ID_MAX, "%s", skv__db_column_text(st, 2));
    snprintf(owner, SKV__STORE_ID_MAX, "%s", skv__db_column_text(st, 3));
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_session_owner(skv__db *db, const char *sid, char *owner,
                                 size_t cap, skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT owner FROM sessions WHERE id=?",
                                  SKV__ARGS(sid), owner, cap, err);
    if (rc < 0)
        return rc;
    return rc == SKV__DB_ROW ? 0 : skv__err(err, SKV_ENOENT, "no session "
                                            "'%s'", sid);
}

int skv__mgr_store_session_group(skv__db *db, const char *sid, char *group,
                                 size_t cap, skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT resource_group FROM sessions "
                                  "WHERE id=?", SKV__ARGS(sid), group, cap,
                                  err);
    if (rc < 0)
        return rc;
    return rc == SKV__DB_ROW ? 0 : skv__err(err, SKV_ENOENT, "no session "
                                            "'%s'", sid);
}

/* Status name and exit code (0 when none) of sid; SKV_ENOENT. */
int skv__mgr_store_session_result(skv__db *db, const char *sid,
                                  char *status, size_t cap, int *exit_code,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT status, exit_code FROM sessions "
                             "WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        snprintf(status, cap, "%s", skv__db_column_text(st, 0));
        *exit_code = skv__db_column_is_null(st, 1)
                         ? 0 : (int)skv__db_column_int64(st, 1);
    }
    skv__db_done(st);
    if (rc < 0)
        return rc;
    return rc == SKV__DB_ROW ? 0 : skv__err(err, SKV_ENOENT, "no session "
                                            "'%s'", sid);
}

/* Whether a pending session's stored spec mentions sid (it may depend on
 * it). The spec is an encoded blob: searched here, not by the engine, so
 * the statement stays in the common subset. */
bool skv__mgr_store_pending_mentions(skv__db *db, const char *sid)
{
    skv__db_stmt *st;
    if (skv__db_prepare(db, "SELECT spec FROM sessions WHERE live=1 AND"
                        " status='PENDING'", &st, NULL))
        return true;    /* unsure: keep it */
    size_t n = strlen(sid);
    bool found = false;
    int rc;
    while (!found && (rc = skv__db_step(st, NULL)) == SKV__DB_ROW) {
        size_t len = 0;
        const void *b = skv__db_column_blob(st, 0, &len);
        found = b && memmem(b, len, sid, n) != NULL;
    }
    skv__db_done(st);
    return found || rc < 0;
}

/* 1 with the agent of kernel kid of session sid ("" when unplaced), 0
 * when sid has no such kernel. */
int skv__mgr_store_kernel_agent(skv__db *db, const char *sid, const char *kid,
                                char *agent, size_t cap, skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT agent_id FROM kernels WHERE "
                                  "id=? AND session_id=?", SKV__ARGS(kid, sid),
                                  agent, cap, err);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}
