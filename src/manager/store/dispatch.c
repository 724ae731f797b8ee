/* What kernel.create is built from: a session's hosts (its kernels with
 * their agents' addresses), one kernel's row, and the sessions with
 * placed kernels not yet started on an agent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "store_int.h"

int skv__mgr_store_session_hosts(skv__db *db, const char *sid,
                                 skv__mgr_store_host **out, size_t *n,
                                 skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, "SELECT k.idx, a.address, k.agent_id, k.id FROM "
                             "kernels k LEFT JOIN agents a ON a.id=k.agent_id"
                             " WHERE k.session_id=? ORDER BY k.idx", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_host *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        const char *addr = skv__db_column_text(st, 1);
        const char *agent = skv__db_column_text(st, 2);
        v->idx = (uint32_t)skv__db_column_int64(st, 0);
        snprintf(v->kid, sizeof v->kid, "%s", skv__db_column_text(st, 3));
        v->has_address = addr != NULL;
        v->placed = agent != NULL;
        snprintf(v->address, sizeof v->address, "%s", addr ? addr : "");
        snprintf(v->agent, sizeof v->agent, "%s", agent ? agent : "");
    }
    skv__db_done(st);
    if (rc < 0) {
        skv__free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}

void skv__mgr_store_kernel_row_free(skv__mgr_store_kernel_row *k)
{
    skv__free(k->image);
    skv_slots_free(k->slots);
    memset(k, 0, sizeof *k);
}

/* 1 with the row, 0 when kid does not exist. */
int skv__mgr_store_kernel_get(skv__db *db, const char *kid,
                              skv__mgr_store_kernel_row *out, skv_error *err)
{
    skv__db_stmt *st;
    memset(out, 0, sizeof *out);
    int rc = skv__db_prepare(db, "SELECT idx, image, slots, agent_id FROM "
                             "kernels WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *agent = skv__db_column_text(st, 3);
        out->idx = (uint32_t)skv__db_column_int64(st, 0);
        out->image = skv__mgr_store_col_dup(st, 1);
        snprintf(out->agent, sizeof out->agent, "%s", agent ? agent : "");
        if (skv__mgr_store_col_slots(&out->slots, st, 2, err))
            rc = SKV_ENOMEM;
    }
    skv__db_done(st);
    if (rc < 0)
        skv__mgr_store_kernel_row_free(out);
    return rc;
}

/* Live sessions with kernels placed on agent and not yet running. */
int skv__mgr_store_sessions_to_create(skv__db *db, const char *agent,
                                      char ***out, size_t *n,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT DISTINCT k.session_id FROM kernels "
                             "k JOIN sessions s ON s.id=k.session_id WHERE "
                             "k.agent_id=? AND k.status IN ('SCHEDULED',"
                             "'PREPARING') AND s.status IN ('SCHEDULED',"
                             "'PREPARING','RUNNING')", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}
