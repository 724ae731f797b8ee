/* admin.resource_policy: per-owner limits. max_slots is stored as the
 * msgpack encoding of the slot vector (kinds preserved exactly). Users and
 * projects naming a policy get it as their scheduler policy; an UPDATE
 * re-mirrors every owner.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct rchange {
    const skv_proto_resource_policy *p;
    uint32_t op;
    skv_proto_admin_resource_policy_reply *rp;
} rchange;

static int policy_row(skv_proto_admin_resource_policy_reply *rp,
                      sqlite3_stmt *st, skv_error *err)
{
    skv_proto_resource_policy *p = skv__mgr_admin_grow(
        (void **)&rp->policies, &rp->n_policies, sizeof *p);
    if (!p || !(p->name = skv__mgr_admin_col_dup(st, 0)))
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    const void *b = sqlite3_column_blob(st, 1);
    int n = sqlite3_column_bytes(st, 1);
    int rc = b && n > 0 ? skv_slots_decode(&p->max_slots, b, (size_t)n, NULL,
                                           err) : 0;
    p->max_concurrent_sessions = (uint32_t)sqlite3_column_int64(st, 2);
    p->max_pending_sessions = (uint32_t)sqlite3_column_int64(st, 3);
    p->max_cluster_size = (uint32_t)sqlite3_column_int64(st, 4);
    p->max_session_lifetime_ms = (uint64_t)sqlite3_column_int64(st, 5);
    return rc;
}

static int read_policies(skv__mgr_admin_ctx *ctx,
                         skv_proto_admin_resource_policy_reply *rp,
                         const char *name, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT name, max_slots,"
        " max_concurrent_sessions, max_pending_sessions, max_cluster_size,"
        " max_session_lifetime_ms FROM resource_policies"
        " WHERE (?1 IS NULL OR name=?1) ORDER BY name", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = policy_row(rp, st, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read resource policies");
    sqlite3_finalize(st);
    return rc;
}

static int bind_slots(sqlite3_stmt *st, int i, const skv_slots *s,
                      skv_error *err)
{
    if (!s || skv_slots_count(s) == 0) {
        sqlite3_bind_null(st, i);
        return 0;
    }
    void *buf = NULL;
    size_t len = 0;
    int rc = skv_slots_encode(&buf, &len, s, err);
    if (!rc)
        sqlite3_bind_blob(st, i, buf, (int)len, SQLITE_TRANSIENT);
    skv_free(buf);
    return rc;
}

static int write_policy(skv__mgr_admin_ctx *ctx, const rchange *c,
                        skv_error *err)
{
    const skv_proto_resource_policy *p = c->p;
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, c->op == SKV_PROTO_ADMIN_CREATE
        ? "INSERT INTO resource_policies (name, max_slots,"
          " max_concurrent_sessions, max_pending_sessions, max_cluster_size,"
          " max_session_lifetime_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        : "UPDATE resource_policies SET max_slots=?2,"
          " max_concurrent_sessions=?3, max_pending_sessions=?4,"
          " max_cluster_size=?5, max_session_lifetime_ms=?6 WHERE name=?1",
        err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, p->name);
    rc = bind_slots(st, 2, p->max_slots, err);
    if (rc) {
        sqlite3_finalize(st);
        return rc;
    }
    sqlite3_bind_int64(st, 3, p->max_concurrent_sessions);
    sqlite3_bind_int64(st, 4, p->max_pending_sessions);
    sqlite3_bind_int64(st, 5, p->max_cluster_size);
    sqlite3_bind_int64(st, 6, (int64_t)p->max_session_lifetime_ms);
    return skv__mgr_admin_done(ctx, st, "write resource policy", err);
}

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    rchange *c = arg;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = read_policies(ctx, c->rp, c->p->name, err);
        return rc ? rc : skv__mgr_admin_write(ctx, "DELETE FROM"
            " resource_policies WHERE name=?1", c->p->name, NULL, err);
    }
    rc = write_policy(ctx, c, err);
    return rc ? rc : read_policies(ctx, c->rp, c->p->name, err);
}

static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    (void)arg;
    (void)undo;    /* copied from the rows either way */
    return skv__mgr_admin_sync_all_policies(ctx, err);
}

static int check_delete(skv__mgr_admin_ctx *ctx, const char *name,
                        skv_error *err)
{
    static const struct {
        const char *sql, *what;
    } refs[] = {
        {"SELECT name FROM users WHERE resource_policy=?1 ORDER BY name",
         "user"},
        {"SELECT name FROM projects WHERE resource_policy=?1 ORDER BY name",
         "project"},
        {"SELECT access_key FROM keypairs WHERE resource_policy=?1"
         " ORDER BY access_key", "key pair"},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        char who[SKV__ADM_NAME_MAX];
        int rc = skv__mgr_admin_lookup(ctx, who, sizeof who, refs[i].sql,
                                       name, NULL, err);
        if (rc > 0)
            return skv__err(err, SKV_EBUSY, "resource policy '%s' is in use "
                            "by %s '%s'", name, refs[i].what, who);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int prepare(skv__mgr_admin_ctx *ctx, const rchange *c, skv_error *err)
{
    const skv_proto_resource_policy *p = c->p;
    int rc = skv__mgr_admin_exists(ctx, "resource_policies", p->name, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "resource policy '%s' exists "
                        "already", p->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "resource policy '%s' does not "
                        "exist", p->name);
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return check_delete(ctx, p->name, err);
    /* The scheduler holds at most SKV_SCHED_SLOTS_MAX slot names. */
    if (p->max_slots && skv_slots_count(p->max_slots) > SKV_SCHED_SLOTS_MAX)
        return skv__err(err, SKV_ERANGE, "resource policy '%s': max_slots "
                        "names %zu slots (at most %d)", p->name,
                        skv_slots_count(p->max_slots), SKV_SCHED_SLOTS_MAX);
    if (p->max_session_lifetime_ms > (uint64_t)INT64_MAX)
        return skv__err(err, SKV_ERANGE, "resource policy '%s': "
                        "max_session_lifetime_ms too large", p->name);
    return 0;
}

int skv__mgr_admin_on_policy(skv__mgr_admin_ctx *ctx,
                             const skv_proto_admin_resource_policy *rq,
                             skv_proto_admin_resource_policy_reply *rp,
                             skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "resource_policy", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = read_policies(ctx, rp, rq->policy.name, err);
    } else {
        rchange c = {&rq->policy, rq->op, rp};
        rc = skv__mgr_admin_name_check("resource policy name",
                                       rq->policy.name, err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        /* Only an UPDATE changes what owners already use. */
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, rq->op == SKV_PROTO_ADMIN_UPDATE
                                    ? mirror : NULL, &c, err);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, rp);
    return rc;
}
