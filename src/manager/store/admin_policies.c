/* Rows of resource_policies. max_slots is stored as the msgpack encoding
 * of the slot vector (kinds preserved exactly), NULL when empty.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_sql.h"

static int slots_col(skv_slots **out, skv__db_stmt *st, int i,
                     skv_error *err)
{
    size_t n = 0;
    const void *b = skv__db_column_blob(st, i, &n);
    *out = NULL;
    return b && n > 0 ? skv_slots_decode(out, b, n, NULL, err) : 0;
}

static int policy_row(skv_proto_admin_resource_policy_reply *rp,
                      skv__db_stmt *st, skv_error *err)
{
    skv_proto_resource_policy *p = skv__mgr_store_admin_grow(
        (void **)&rp->policies, &rp->n_policies, sizeof *p);
    if (!p || !(p->name = skv__mgr_store_admin_col_dup(st, 0)))
        return skv__mgr_store_admin_nomem(err);
    p->max_concurrent_sessions = (uint32_t)skv__db_column_int64(st, 2);
    p->max_pending_sessions = (uint32_t)skv__db_column_int64(st, 3);
    p->max_cluster_size = (uint32_t)skv__db_column_int64(st, 4);
    p->max_session_lifetime_ms = (uint64_t)skv__db_column_int64(st, 5);
    p->idle_timeout_ms = (uint64_t)skv__db_column_int64(st, 6);
    return slots_col(&p->max_slots, st, 1, err);
}

int skv__mgr_store_admin_policy_read(skv__db *db,
                                     skv_proto_admin_resource_policy_reply *rp,
                                     const char *name, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT name, max_slots,"
        " max_concurrent_sessions, max_pending_sessions, max_cluster_size,"
        " max_session_lifetime_ms, idle_timeout_ms FROM resource_policies"
        " WHERE (CAST(? AS TEXT) IS NULL OR name=?) ORDER BY name", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, name);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = policy_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

/* The statement's parameters: max_slots first, then the five limits,
 * then the name (the order both the INSERT and the UPDATE below use). */
static int write_policy(skv__db *db, const char *sql,
                        const skv_proto_resource_policy *p, skv_error *err)
{
    void *buf = NULL;
    size_t len = 0;
    int rc = 0;
    if (p->max_slots && skv_slots_count(p->max_slots) > 0)
        rc = skv_slots_encode(&buf, &len, p->max_slots, err);
    if (rc)
        return rc;
    if (p->max_session_lifetime_ms > (uint64_t)INT64_MAX ||
        p->idle_timeout_ms > (uint64_t)INT64_MAX)
        rc = skv__err(err, SKV_ERANGE, "resource policy '%s': "
                      "max_session_lifetime_ms or idle_timeout_ms too large",
                      p->name);
    skv__db_stmt *st = NULL;
    if (!rc)
        rc = skv__db_prepare(db, sql, &st, err);
    if (!rc) {
        skv__db_bind_blob(st, 1, buf, len);   /* NULL buf binds NULL */
        skv__db_bind_int64(st, 2, p->max_concurrent_sessions);
        skv__db_bind_int64(st, 3, p->max_pending_sessions);
        skv__db_bind_int64(st, 4, p->max_cluster_size);
        skv__db_bind_int64(st, 5, (int64_t)p->max_session_lifetime_ms);
        skv__db_bind_int64(st, 6, (int64_t)p->idle_timeout_ms);
        skv__db_bind_text(st, 7, p->name);
        rc = skv__mgr_store_admin_finish(st, err);
    }
    skv_free(buf);
    return rc;
}

int skv__mgr_store_admin_policy_insert(skv__db *db,
                                       const skv_proto_resource_policy *p,
                                       skv_error *err)
{
    return write_policy(db, "INSERT INTO resource_policies (max_slots,"
        " max_concurrent_sessions, max_pending_sessions, max_cluster_size,"
        " max_session_lifetime_ms, idle_timeout_ms, name)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)", p, err);
}

int skv__mgr_store_admin_policy_update(skv__db *db,
                                       const skv_proto_resource_policy *p,
                                       skv_error *err)
{
    return write_policy(db, "UPDATE resource_policies SET max_slots=?,"
        " max_concurrent_sessions=?, max_pending_sessions=?,"
        " max_cluster_size=?, max_session_lifetime_ms=?, idle_timeout_ms=?"
        " WHERE name=?", p, err);
}

int skv__mgr_store_admin_policy_delete(skv__db *db, const char *name,
                                       skv_error *err)
{
    return skv__mgr_store_admin_put(db, "DELETE FROM resource_policies WHERE"
                                    " name=?", 1, name, NULL, err);
}

int skv__mgr_store_admin_policy_get(skv__db *db, const char *name,
                                    skv__mgr_store_admin_limits *out,
                                    skv_error *err)
{
    memset(out, 0, sizeof *out);
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT max_slots, max_concurrent_sessions,"
        " max_pending_sessions, max_cluster_size, max_session_lifetime_ms,"
        " idle_timeout_ms FROM resource_policies WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        out->max_concurrent_sessions = (uint32_t)skv__db_column_int64(st, 1);
        out->max_pending_sessions = (uint32_t)skv__db_column_int64(st, 2);
        out->max_cluster_size = (uint32_t)skv__db_column_int64(st, 3);
        out->max_session_lifetime_ms = (uint64_t)skv__db_column_int64(st, 4);
        out->idle_timeout_ms = (uint64_t)skv__db_column_int64(st, 5);
        int drc = slots_col(&out->max_slots, st, 0, err);
        if (drc)
            rc = drc;
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_policy_user_of(skv__db *db, const char *name,
                                        const char **what, char *buf,
                                        size_t bufsz, skv_error *err)
{
    static const struct {
        const char *sql, *what;
    } refs[] = {
        {"SELECT name FROM users WHERE resource_policy=? ORDER BY name"
         " LIMIT 1", "user"},
        {"SELECT name FROM projects WHERE resource_policy=? ORDER BY name"
         " LIMIT 1", "project"},
        {"SELECT access_key FROM keypairs WHERE resource_policy=?"
         " ORDER BY access_key LIMIT 1", "key pair"},
    };
    *what = NULL;
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        int rc = skv__mgr_store_admin_get(db, buf, bufsz, refs[i].sql, 1,
                                          name, NULL, err);
        if (rc > 0)
            *what = refs[i].what;
        if (rc)
            return rc;
    }
    return 0;
}
