/* Reads for session.list / session.show and the manager's own views:
 * session rows as protocol infos, history, kernels, counts.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernel_cache.h"
#include "history_buf.h"
#include "store_int.h"

#define LIST_MAX 10000
#define STATUSES_MAX 32

#define SESSION_COLS                                                         \
    "id,name,owner,project,resource_group,session_type,status,"              \
    "status_reason,priority,cluster_mode,cluster_size,image,created_ms,"     \
    "started_ms,finished_ms,exit_code,slots"

static int info_from_row(skv_proto_session_info *i, skv__db_stmt *st,
                         skv_error *err)
{
    i->session_id = skv__mgr_store_col_dup(st, 0);
    i->name = skv__mgr_store_col_dup(st, 1);
    i->owner = skv__mgr_store_col_dup(st, 2);
    i->project = skv__mgr_store_col_dup(st, 3);
    i->resource_group = skv__mgr_store_col_dup(st, 4);
    i->session_type = skv__mgr_store_col_dup(st, 5);
    i->status = skv__mgr_store_col_dup(st, 6);
    i->status_reason = skv__mgr_store_col_dup(st, 7);
    i->priority = (int32_t)skv__db_column_int64(st, 8);
    i->cluster_mode = skv__mgr_store_col_dup(st, 9);
    i->cluster_size = (uint32_t)skv__db_column_int64(st, 10);
    i->image = skv__mgr_store_col_dup(st, 11);
    i->created_ms = skv__db_column_int64(st, 12);
    i->started_ms = skv__db_column_int64(st, 13);
    i->finished_ms = skv__db_column_int64(st, 14);
    i->exit_code = skv__db_column_is_null(st, 15)
                       ? -1 : (int32_t)skv__db_column_int64(st, 15);
    if (!i->session_id || !i->owner || !i->status)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    return skv__mgr_store_col_slots(&i->slots, st, 16, err);
}

/* Only the filters given become clauses: every parameter has a column
 * beside it, which PostgreSQL needs to type it. */
static char *list_sql(const skv_proto_session_list *l, const char *owner,
                      bool count)
{
    char in[4 * STATUSES_MAX] = "";
    for (size_t i = 0; i < l->n_statuses && i < STATUSES_MAX; i++)
        strcat(in, i ? ",?" : "?");
    return skv__asprintf("SELECT %s FROM sessions WHERE 1=1%s%s%s%s%s%s",
                         count ? "count(*)" : SESSION_COLS,
                         owner ? " AND owner=?" : "",
                         l->resource_group ? " AND resource_group=?" : "",
                         in[0] ? " AND status IN (" : "", in,
                         in[0] ? ")" : "",
                         count ? "" : " ORDER BY seq LIMIT ? OFFSET ?");
}

static int list_prepare(skv__db *db, skv__db_stmt **st,
                        const skv_proto_session_list *l, const char *owner,
                        bool count, skv_error *err)
{
    char *sql = list_sql(l, owner, count);
    int rc = sql ? skv__db_prepare(db, sql, st, err)
                 : skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(sql);
    if (rc)
        return rc;
    int p = 1;
    if (owner)
        skv__db_bind_text(*st, p++, owner);
    if (l->resource_group)
        skv__db_bind_text(*st, p++, l->resource_group);
    for (size_t i = 0; i < l->n_statuses && i < STATUSES_MAX; i++)
        skv__db_bind_text(*st, p++, l->statuses[i]);
    if (!count) {
        /* the wire allows 10000 sessions per reply */
        skv__db_bind_int64(*st, p++, l->limit && l->limit < LIST_MAX
                                         ? (int64_t)l->limit : LIST_MAX);
        skv__db_bind_int64(*st, p++, l->offset);
    }
    return 0;
}

/* owner NULL: everyone's. */
int skv__mgr_store_session_list(skv__db *db, const skv_proto_session_list *l,
                                const char *owner,
                                skv_proto_session_list_reply *rep,
                                skv_error *err)
{
    skv__db_stmt *st;
    int rc = list_prepare(db, &st, l, owner, true, err);
    if (rc)
        return rc;
    rc = skv__db_step(st, err);
    rep->total = rc == SKV__DB_ROW ? (uint64_t)skv__db_column_int64(st, 0) : 0;
    skv__db_done(st);
    if (rc < 0)
        return rc;
    rc = list_prepare(db, &st, l, owner, false, err);
    while (!rc && (rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv_proto_session_info *v = skv__reallocarray(
            rep->sessions, rep->n_sessions + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        rep->sessions = v;
        memset(&v[rep->n_sessions], 0, sizeof *v);
        rc = info_from_row(&v[rep->n_sessions++], st, err);
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_session_info(skv__db *db, const char *sid,
                                skv_proto_session_info *out, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT " SESSION_COLS " FROM sessions "
                             "WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        rc = info_from_row(out, st, err);
    else if (rc == SKV__DB_DONE)
        rc = skv__err(err, SKV_ENOENT, "no session '%s'", sid ? sid : "");
    skv__db_done(st);
    return rc;
}

/* The latest 4096 entries (what the wire allows), oldest first. */
int skv__mgr_store_session_history(skv__db *db, skv_proto_session_info *i,
                                   skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__history_buf_flush(db, err);   /* this transaction's */
    if (!rc)
        rc = skv__db_prepare(db, "SELECT status, ts_ms, reason FROM (SELECT "
                             "id, status, ts_ms, reason FROM session_history "
                             "WHERE session_id=? ORDER BY id DESC LIMIT 4096)"
                             " h ORDER BY id", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, i->session_id);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv_proto_status_change *v = skv__reallocarray(
            i->history, i->n_history + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        i->history = v;
        v = &v[i->n_history++];
        v->status = skv__mgr_store_col_dup(st, 0);
        v->timestamp_ms = skv__db_column_int64(st, 1);
        v->reason = skv__mgr_store_col_dup(st, 2);
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

static int kernel_row(skv_proto_kernel_info *k, skv__db_stmt *st,
                      skv_error *err)
{
    memset(k, 0, sizeof *k);
    k->kernel_id = skv__mgr_store_col_dup(st, 0);
    k->role = skv__mgr_store_col_dup(st, 1);
    /* The role index, as in the hostname (main1, sub1, sub2...): kernel 0
     * is main1, kernel i > 0 is sub<i>. */
    uint32_t pos = (uint32_t)skv__db_column_int64(st, 2);
    k->idx = pos ? pos : 1;
    k->agent_id = skv__mgr_store_col_dup(st, 3);
    k->container_id = skv__mgr_store_col_dup(st, 4);
    k->status = skv__mgr_store_col_dup(st, 5);
    k->exit_code = skv__db_column_is_null(st, 6)
                       ? -1 : (int32_t)skv__db_column_int64(st, 6);
    return skv__mgr_store_col_slots(&k->slots, st, 7, err);
}

int skv__mgr_store_session_kernels(skv__db *db, skv_proto_session_info *i,
                                   skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT id, role, idx, agent_id, "
                             "container_id, status, exit_code, slots FROM "
                             "kernels WHERE session_id=? ORDER BY idx", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, i->session_id);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv_proto_kernel_info *v = skv__reallocarray(
            i->kernels, i->n_kernels + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        i->kernels = v;
        if ((rc = kernel_row(&v[i->n_kernels++], st, err)))
            break;
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* Kernels holding resources on agent (sent, not ended). */
int skv__mgr_store_agent_load(skv__db *db, const char *agent, uint32_t *out,
                              skv_error *err)
{
    int64_t n = 0;
    int rc = skv__mgr_store_int1(db, "SELECT count(*) FROM kernels WHERE "
                                 "agent_id=? AND live=1 AND status IN "
                                 "('PREPARING','RUNNING','TERMINATING')",
                                 SKV__ARGS(agent),
                                 &n, err);
    *out = (uint32_t)n;
    return rc;
}

/* Why a kernel has no agent: the session's status reason, and whether it
 * was ever placed (its history went through a placed state). */
int skv__mgr_store_unplaced(skv__db *db, const char *sid, char *why,
                            size_t cap, bool *before, skv_error *err)
{
    int64_t n = 0;
    why[0] = 0;
    int rc = skv__mgr_store_text1(db, "SELECT status_reason FROM sessions "
                                  "WHERE id=?", SKV__ARGS(sid), why, cap, err);
    if (rc >= 0)
        rc = skv__history_buf_flush(db, err);   /* this transaction's */
    if (rc >= 0)
        rc = skv__mgr_store_int1(db, "SELECT count(*) FROM session_history "
                                 "WHERE session_id=? AND status IN "
                                 "('SCHEDULED','PREPARING','RUNNING')",
                                 SKV__ARGS(sid), &n, err);
    *before = n > 0;
    return rc < 0 ? rc : 0;
}

/* Each PENDING session's id and resource group, to fn (stops at != 0). */
int skv__mgr_store_pending_each(skv__db *db,
                                int (*fn)(void *arg, const char *sid,
                                          const char *group),
                                void *arg, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT id, resource_group FROM sessions "
                             "WHERE live=1 AND status='PENDING'", &st, err);
    if (rc)
        return rc;
    int step;
    while (!rc && (step = skv__db_step(st, err)) == SKV__DB_ROW) {
        const char *sid = skv__db_column_text(st, 0);
        const char *grp = skv__db_column_text(st, 1);
        rc = fn(arg, sid ? sid : "", grp ? grp : "");
    }
    if (!rc && step < 0)
        rc = step;
    skv__db_done(st);
    return rc;
}

bool skv__mgr_store_kernel_exists(skv__db *db, const char *kid)
{
    const char *sid;
    if (skv__mgr_store_kc_kernel(db, kid, &sid))
        return true;    /* a miss says nothing: the database does */
    int64_t n = 0;
    return skv__mgr_store_int1(db, "SELECT count(*) FROM kernels WHERE id=?",
                               SKV__ARGS(kid), &n, NULL) == 0 && n > 0;
}

bool skv__mgr_store_kernel_stopping_on(skv__db *db, const char *kid,
                                       const char *agent)
{
    const char *sid;
    const skv__kc_kernel *k = skv__mgr_store_kc_kernel(db, kid, &sid);
    if (k)
        return agent && !strcmp(k->agent, agent) &&
               !strcmp(k->status, "TERMINATING");
    int64_t n = 0;
    return skv__mgr_store_int1(db, "SELECT count(*) FROM kernels WHERE id=? "
                               "AND agent_id=? AND status='TERMINATING'",
                               SKV__ARGS(kid, agent), &n, NULL) == 0 && n > 0;
}

/* Sessions of one status in submission order with a key column (group
 * for PENDING, owner for RUNNING), their age's start, (RUNNING) their
 * own lifetime limit and their resource group. */
int skv__mgr_store_sessions_aging(skv__db *db, bool running,
                                  skv__mgr_store_aging **out, size_t *n,
                                  skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, running
        ? "SELECT s.id, s.owner, s.started_ms, COALESCE(l.max_lifetime_ms,0)"
          ", s.resource_group"
          " FROM sessions s LEFT JOIN session_limits l ON l.session_id=s.id"
          " WHERE s.live=1 AND s.status='RUNNING' ORDER BY s.seq"
        : "SELECT id, resource_group, created_ms, 0, resource_group FROM"
          " sessions WHERE live=1 AND status='PENDING' ORDER BY seq", &st,
        err);
    if (rc)
        return rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_aging *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        const char *key = skv__db_column_text(st, 1);
        snprintf(v->sid, sizeof v->sid, "%s", skv__db_column_text(st, 0));
        snprintf(v->key, sizeof v->key, "%s", key ? key : "");
        v->since_ms = skv__db_column_int64(st, 2);
        v->own_limit_ms = skv__db_column_int64(st, 3);
        const char *grp = skv__db_column_text(st, 4);
        snprintf(v->group, sizeof v->group, "%s", grp ? grp : "");
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* Live sessions with kernels sent or placed on agent (it was lost). */
int skv__mgr_store_sessions_on(skv__db *db, const char *agent, char ***out,
                               size_t *n, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT DISTINCT k.session_id FROM kernels k"
        " JOIN sessions s ON s.id=k.session_id WHERE k.agent_id=? AND "
        "k.live=1 AND "
        "k.status IN ('SCHEDULED','PREPARING','RUNNING','TERMINATING') AND "
        "s.status NOT IN ('PENDING','TERMINATED','CANCELLED','ERROR')", &st,
        err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}

/* Sessions per status name, to fn. */
int skv__mgr_store_count_states(skv__db *db,
                                void (*fn)(void *arg, const char *status,
                                           uint64_t n),
                                void *arg, skv_error *err)
{
    skv__db_stmt *st;
    /* each half over its partial index (schema.c, core step 3) */
    int rc = skv__db_prepare(db, "SELECT status, count(*) FROM sessions "
                             "WHERE live=1 GROUP BY status UNION ALL SELECT "
                             "status, count(*) FROM sessions WHERE live IS "
                             "NULL GROUP BY status", &st, err);
    if (rc)
        return rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        const char *name = skv__db_column_text(st, 0);
        if (name)
            fn(arg, name, (uint64_t)skv__db_column_int64(st, 1));
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_sessions_live(skv__db *db, skv__mgr_store_live **out,
                                 size_t *n, skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, "SELECT id, status, created_ms, started_ms "
                             "FROM sessions WHERE live=1 AND status IN "
                             "('PENDING','SCHEDULED','PREPARING','RUNNING',"
                             "'TERMINATING')"
                             " ORDER BY seq", &st, err);
    if (rc)
        return rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_live *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        snprintf(v->sid, sizeof v->sid, "%s", skv__db_column_text(st, 0));
        snprintf(v->status, sizeof v->status, "%s",
                 skv__db_column_text(st, 1));
        v->created_ms = skv__db_column_int64(st, 2);
        v->started_ms = skv__db_column_int64(st, 3);
    }
    skv__db_done(st);
    if (rc < 0) {
        skv__free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}
