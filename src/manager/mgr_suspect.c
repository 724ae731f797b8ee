/* Suspected kernels and fresh kernel ids.
 *
 * An agent silent past the heartbeat timeout may be dead or only away (a
 * restart, a partition): its containers may still run or may have exited
 * with a real code. So when its session is requeued (lost_batch_policy
 * "requeue"), the kernels that had been sent to it are not forgotten but
 * kept as suspects (kernel_suspects, with their per-device allocation),
 * to be adopted if the agent comes back before the session is placed again
 * (mgr_adopt.c). The session's own kernel rows get new ids at every
 * requeue: the kernel id is the container id on the agent, and an agent
 * answers a create for an id it already has with that container, so a
 * reused id would either revive a stale container or run the command a
 * second time under the first one's name (and over its logs).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "mgr_int.h"

/* One statement with ?1 session, ?2 agent, ?3 time. */
static int exec_lost(skv_manager *m, const char *sql, const char *sid,
                     const char *agent, int64_t now, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, sql, err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    skv__mgr_bind_text(st, 2, agent);
    if (sqlite3_bind_parameter_count(st) >= 3)
        sqlite3_bind_int64(st, 3, now);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, sql);
    skv__mgr_db_done(m, st);
    return rc;
}

/* Inside the requeue transaction, before the allocation rows go: sid's
 * kernels that were sent to the lost agent (a container may exist). A
 * SCHEDULED kernel was never sent, so nothing of it can come back. */
int skv__mgr_suspect_keep(skv_manager *m, const char *sid, const char *agent,
                          int64_t now_ms, skv_error *err)
{
    int rc = exec_lost(m, "INSERT OR REPLACE INTO kernel_suspects(kernel_id,"
        "session_id,idx,agent_id,container_id,status,started_ms,lost_ms)"
        " SELECT k.id, k.session_id, k.idx, k.agent_id, k.container_id,"
        " k.status, s.started_ms, ?3 FROM kernels k JOIN sessions s"
        " ON s.id=k.session_id WHERE k.session_id=?1 AND k.agent_id=?2 AND"
        " k.status IN ('PREPARING','RUNNING','TERMINATING')", sid, agent,
        now_ms, err);
    int kept = rc ? 0 : sqlite3_changes(m->db);
    if (!rc)
        rc = exec_lost(m, "INSERT OR REPLACE INTO kernel_suspect_alloc"
            " SELECT a.kernel_id, a.device_id, a.slot, a.amount, a.whole"
            " FROM kernel_alloc a JOIN kernel_suspects x"
            " ON x.kernel_id=a.kernel_id WHERE x.session_id=?1 AND"
            " x.agent_id=?2", sid, agent, 0, err);
    if (!rc && kept)
        skv__log(SKV_LOG_INFO, "manager", "session %s: %d kernels on lost "
                 "agent %s kept as suspects", sid, kept, agent);
    return rc;
}

/* "<sid>-<idx>" -> "<sid>-<idx>.1", "<sid>-<idx>.<n>" -> ".<n+1>". The
 * generation only grows, except that an adoption puts a suspect's older id
 * back over one that was never sent (the session was still pending), so
 * no id ever names two containers. */
static int next_id(char *out, size_t cap, const char *sid, int idx,
                   const char *cur)
{
    size_t ls = strlen(sid);
    long gen = 0;
    const char *dot = strchr(cur + (strncmp(cur, sid, ls) ? 0 : ls), '.');
    if (dot)
        gen = strtol(dot + 1, NULL, 10);
    int n = snprintf(out, cap, "%s-%d.%ld", sid, idx, gen + 1);
    return n > 0 && (size_t)n < cap ? 0 : SKV_ERANGE;
}

/* sid's kernels as (id, idx), in idx order. */
static int kernels_of(skv_manager *m, const char *sid, char ***ids,
                      int **idx, size_t *n, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT id, idx FROM kernels WHERE "
                                 "session_id=? ORDER BY idx", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char **v = skv__reallocarray(*ids, *n + 1, sizeof *v);
        int *w = v ? skv__reallocarray(*idx, *n + 1, sizeof *w) : NULL;
        if (v)
            *ids = v;
        if (w)
            *idx = w;
        if (!w || !(v[*n] = skv__mgr_col_dup(st, 0))) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        w[(*n)++] = sqlite3_column_int(st, 1);
    }
    skv__mgr_db_done(m, st);
    return rc;
}

/* Inside the requeue transaction, after the allocation rows went: every
 * kernel of sid gets its next id. */
int skv__mgr_kernel_ids_renew(skv_manager *m, const char *sid, skv_error *err)
{
    char **ids = NULL;
    int *idx = NULL;
    size_t n = 0;
    sqlite3_stmt *st = NULL;
    int rc = kernels_of(m, sid, &ids, &idx, &n, err);
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st, "UPDATE kernels SET id=? WHERE id=?",
                                 err);
    for (size_t i = 0; !rc && i < n; i++) {
        char nid[SKV__MGR_ID_MAX];
        if (next_id(nid, sizeof nid, sid, idx[i], ids[i])) {
            rc = skv__err(err, SKV_ERANGE, "kernel id of %s too long", ids[i]);
            break;
        }
        sqlite3_reset(st);
        skv__mgr_bind_text(st, 1, nid);
        skv__mgr_bind_text(st, 2, ids[i]);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = skv__mgr_db_err(m, err, "kernel id");
    }
    if (st)
        skv__mgr_db_done(m, st);
    skv__mgr_ids_free(ids, n);
    skv__free(idx);
    return rc;
}

/* The current id of sid's kernel idx (ids change at requeue). */
int skv__mgr_kernel_id_at(skv_manager *m, const char *sid, uint32_t idx,
                          char *kid, size_t cap, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT id FROM kernels WHERE "
                                 "session_id=? AND idx=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    sqlite3_bind_int64(st, 2, idx);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(kid, cap, "%s", sqlite3_column_text(st, 0));
    else
        rc = skv__err(err, SKV_ENOENT, "session '%s' has no kernel %u", sid,
                      idx);
    skv__mgr_db_done(m, st);
    return rc;
}
