/* Suspected kernels (kernel_suspects, kernel_suspect_alloc) and fresh
 * kernel ids at a requeue; why they exist is told in mgr_suspect.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "create_cache.h"
#include "kernel_cache.h"
#include "store_int.h"

/* sid's kernels sent to the lost agent (a container may exist) become
 * suspects with their allocation; *kept says how many. */
int skv__mgr_store_suspect_keep(skv__db *db, const char *sid,
                                const char *agent, int64_t now_ms,
                                int64_t *kept, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO kernel_suspects(kernel_id,"
        "session_id,idx,agent_id,container_id,status,started_ms,lost_ms)"
        " SELECT k.id, k.session_id, k.idx, k.agent_id, k.container_id,"
        " k.status, s.started_ms, ? FROM kernels k JOIN sessions s"
        " ON s.id=k.session_id WHERE k.session_id=? AND k.agent_id=? AND"
        " k.live=1 AND"
        " k.status IN ('PREPARING','RUNNING','TERMINATING')"
        " ON CONFLICT (kernel_id) DO UPDATE SET session_id=excluded.session_id,"
        " idx=excluded.idx, agent_id=excluded.agent_id,"
        " container_id=excluded.container_id, status=excluded.status,"
        " started_ms=excluded.started_ms, lost_ms=excluded.lost_ms", &st, err);
    if (rc)
        return rc;
    skv__db_bind_int64(st, 1, now_ms);
    skv__db_bind_text(st, 2, sid);
    skv__db_bind_text(st, 3, agent);
    rc = skv__mgr_store_run(st, err);
    *kept = rc ? 0 : skv__db_changes(st);
    skv__db_done(st);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "INSERT INTO kernel_suspect_alloc"
            "(kernel_id, device_id, slot, amount, whole)"
            " SELECT a.kernel_id, a.device_id, a.slot, a.amount, a.whole"
            " FROM kernel_alloc a JOIN kernel_suspects x"
            " ON x.kernel_id=a.kernel_id WHERE x.session_id=? AND"
            " x.agent_id=? ON CONFLICT (kernel_id, device_id, slot) DO UPDATE"
            " SET amount=excluded.amount, whole=excluded.whole",
            SKV__ARGS(sid, agent), NULL, err);
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

typedef struct kid_row {
    char id[256];
    int idx;
} kid_row;

static int kernels_of(skv__db *db, const char *sid, kid_row **out,
                      size_t *n, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT id, idx FROM kernels WHERE "
                             "session_id=? ORDER BY idx", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        kid_row *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        snprintf(v[*n].id, sizeof v[*n].id, "%s", skv__db_column_text(st, 0));
        v[(*n)++].idx = (int)skv__db_column_int64(st, 1);
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* Every kernel of sid gets its next id (after its allocation went). */
int skv__mgr_store_kernel_ids_renew(skv__db *db, const char *sid,
                                    skv_error *err)
{
    kid_row *k = NULL;
    size_t n = 0;
    skv__db_stmt *st = NULL;
    skv__mgr_store_kc_drop(db, sid);    /* the cache follows no renames */
    skv__mgr_store_cc_alloc_forget(db);
    int rc = kernels_of(db, sid, &k, &n, err);
    if (!rc)
        rc = skv__db_prepare(db, "UPDATE kernels SET id=? WHERE id=?", &st,
                             err);
    for (size_t i = 0; !rc && i < n; i++) {
        char nid[256];
        if (next_id(nid, sizeof nid, sid, k[i].idx, k[i].id)) {
            rc = skv__err(err, SKV_ERANGE, "kernel id of %s too long",
                          k[i].id);
            break;
        }
        skv__db_reset(st);
        skv__db_bind_text(st, 1, nid);
        skv__db_bind_text(st, 2, k[i].id);
        rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    skv__free(k);
    return rc;
}

int skv__mgr_store_suspects_of(skv__db *db, const char *sid,
                               skv__mgr_store_suspect **out, size_t *n,
                               skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, "SELECT kernel_id, agent_id, container_id, "
                             "idx, started_ms FROM kernel_suspects WHERE "
                             "session_id=? ORDER BY idx", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_suspect *v = skv__reallocarray(*out, *n + 1,
                                                      sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        skv__mgr_store_suspect *x = &v[(*n)++];
        const char *c = skv__db_column_text(st, 2);
        snprintf(x->kid, sizeof x->kid, "%s", skv__db_column_text(st, 0));
        snprintf(x->agent, sizeof x->agent, "%s", skv__db_column_text(st, 1));
        snprintf(x->container, sizeof x->container, "%s", c ? c : x->kid);
        x->idx = (int)skv__db_column_int64(st, 3);
        x->started_ms = skv__db_column_int64(st, 4);
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* 1 (sid filled) when kid is a suspect on agent, 0 when not. */
int skv__mgr_store_suspect_session(skv__db *db, const char *kid,
                                   const char *agent, char *sid, size_t cap,
                                   skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT session_id FROM kernel_suspects"
                                  " WHERE kernel_id=? AND agent_id=?",
                                  SKV__ARGS(kid, agent), sid, cap, err);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}

int skv__mgr_store_suspects_on(skv__db *db, const char *agent, char ***out,
                               size_t *n, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT kernel_id FROM kernel_suspects "
                             "WHERE agent_id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_suspect_drop(skv__db *db, const char *kid, skv_error *err)
{
    return skv__mgr_store_exec_text(db, "DELETE FROM kernel_suspects WHERE "
                                    "kernel_id=?", SKV__ARGS(kid), NULL, err);
}

/* The kernel row of s->idx becomes the suspect again: its old id (the
 * row's newer id was never sent: the session was pending), agent,
 * container and allocation. */
static int restore_kernel(skv__db *db, const char *sid,
                          const skv__mgr_store_suspect *s, skv_error *err)
{
    skv__db_stmt *st;
    skv__mgr_store_kc_drop(db, sid);    /* an old id back: read afresh */
    skv__mgr_store_cc_alloc_forget(db); /* and its rows (INSERT below) */
    int rc = skv__db_prepare(db, "UPDATE kernels SET id=?, agent_id=?, "
                             "container_id=?, status='RUNNING', exit_code="
                             "NULL, reason=NULL, live=1 WHERE session_id=? "
                             "AND idx=?",
                             &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, s->kid);
    skv__db_bind_text(st, 2, s->agent);
    skv__db_bind_text(st, 3, s->container);
    skv__db_bind_text(st, 4, sid);
    skv__db_bind_int64(st, 5, s->idx);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "INSERT INTO kernel_alloc(kernel_id,"
            "device_id,slot,amount,whole) SELECT kernel_id, device_id, slot, "
            "amount, whole FROM kernel_suspect_alloc WHERE kernel_id=?",
            SKV__ARGS(s->kid), NULL, err);
    return rc;
}

/* The session takes its suspects back whole (adoption). */
int skv__mgr_store_suspects_adopt(skv__db *db, const char *sid,
                                  const skv__mgr_store_suspect *s, size_t n,
                                  skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = restore_kernel(db, sid, &s[i], err);
    if (!rc)
        rc = skv__mgr_store_session_started(db, sid, n ? s[0].started_ms : 0,
                                            err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "DELETE FROM kernel_suspects WHERE "
                                      "session_id=?", SKV__ARGS(sid), NULL,
                                      err);
    return rc;
}
