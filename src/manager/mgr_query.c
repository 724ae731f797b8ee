/* session.list and session.show. Users see their own sessions; admins any
 * owner's (owner "*" lists everyone's).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

#define LIST_MAX 10000

#define SESSION_COLS                                                         \
    "id,name,owner,project,resource_group,session_type,status,"              \
    "status_reason,priority,cluster_mode,cluster_size,image,created_ms,"     \
    "started_ms,finished_ms,exit_code,slots"

static int info_from_row(skv_proto_session_info *i, sqlite3_stmt *st,
                         skv_error *err)
{
    i->session_id = skv__mgr_col_dup(st, 0);
    i->name = skv__mgr_col_dup(st, 1);
    i->owner = skv__mgr_col_dup(st, 2);
    i->project = skv__mgr_col_dup(st, 3);
    i->resource_group = skv__mgr_col_dup(st, 4);
    i->session_type = skv__mgr_col_dup(st, 5);
    i->status = skv__mgr_col_dup(st, 6);
    i->status_reason = skv__mgr_col_dup(st, 7);
    i->priority = sqlite3_column_int(st, 8);
    i->cluster_mode = skv__mgr_col_dup(st, 9);
    i->cluster_size = (uint32_t)sqlite3_column_int(st, 10);
    i->image = skv__mgr_col_dup(st, 11);
    i->created_ms = sqlite3_column_int64(st, 12);
    i->started_ms = sqlite3_column_int64(st, 13);
    i->finished_ms = sqlite3_column_int64(st, 14);
    i->exit_code = sqlite3_column_type(st, 15) == SQLITE_NULL
                       ? -1 : sqlite3_column_int(st, 15);
    if (!i->session_id || !i->owner || !i->status)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    return skv__mgr_col_slots(&i->slots, st, 16, err);
}

static char *list_sql(const skv_proto_session_list *l, bool count)
{
    char in[512] = "";
    int base = count ? 3 : 5;
    for (size_t i = 0; i < l->n_statuses && i < 32; i++) {
        size_t len = strlen(in);
        snprintf(in + len, sizeof in - len, "%s?%d", i ? "," : "",
                 base + (int)i);
    }
    return skv__asprintf(
        "SELECT %s FROM sessions WHERE (?1 IS NULL OR owner=?1) AND "
        "(?2 IS NULL OR resource_group=?2)%s%s%s ORDER BY seq%s",
        count ? "count(*)" : SESSION_COLS,
        in[0] ? " AND status IN (" : "", in, in[0] ? ")" : "",
        count ? "" : " LIMIT ?3 OFFSET ?4");
}

static int list_prepare(skv_manager *m, sqlite3_stmt **st,
                        const skv_proto_session_list *l, const char *owner,
                        bool count, skv_error *err)
{
    char *sql = list_sql(l, count);
    int rc = sql ? skv__mgr_db_prepare(m, st, sql, err)
                 : skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(sql);
    if (rc)
        return rc;
    skv__mgr_bind_text(*st, 1, owner);
    skv__mgr_bind_text(*st, 2, l->resource_group);
    int base = count ? 3 : 5;
    if (!count) {
        /* the wire allows 10000 sessions per reply */
        sqlite3_bind_int64(*st, 3, l->limit && l->limit < LIST_MAX
                                       ? (int64_t)l->limit : LIST_MAX);
        sqlite3_bind_int64(*st, 4, l->offset);
    }
    for (size_t i = 0; i < l->n_statuses && i < 32; i++)
        skv__mgr_bind_text(*st, base + (int)i, l->statuses[i]);
    return 0;
}

static int list_fill(skv_manager *m, skv_proto_session_list_reply *rep,
                     const skv_proto_session_list *l, const char *owner,
                     skv_error *err)
{
    sqlite3_stmt *st;
    int rc = list_prepare(m, &st, l, owner, true, err);
    if (rc)
        return rc;
    rep->total = sqlite3_step(st) == SQLITE_ROW
                     ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    skv__mgr_db_done(m, st);
    rc = list_prepare(m, &st, l, owner, false, err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
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
    skv__mgr_db_done(m, st);
    return rc;
}

int skv__mgr_on_list(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    const skv_proto_session_list *l = c->body;
    const char *owner = l->owner ? l->owner : c->who->user;
    if (l->n_statuses > 32)
        return skv__err(err, SKV_EINVAL, "session.list: at most 32 statuses");
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_READ, owner, err);
    if (rc)
        return rc;
    skv_proto_session_list_reply rep = {0};
    rc = list_fill(m, &rep, l, strcmp(owner, "*") ? owner : NULL, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_SESSION_LIST_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &rep);
    return rc;
}

/* Load one session's info; SKV_ENOENT when unknown. */
int skv__mgr_session_info(skv_manager *m, skv_proto_session_info *out,
                          const char *sid, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT " SESSION_COLS " FROM "
                                 "sessions WHERE id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    if (sqlite3_step(st) == SQLITE_ROW)
        rc = info_from_row(out, st, err);
    else
        rc = skv__err(err, SKV_ENOENT, "no session '%s'", sid ? sid : "");
    skv__mgr_db_done(m, st);
    return rc;
}
