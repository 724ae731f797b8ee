/* admin.user: create, update, delete, list users. A user's keys follow its
 * active flag and role into the verifier; its resource policy (or, if it
 * has none, its oldest key pair's) becomes its scheduler policy.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct uchange {
    const skv_auth_principal *p;
    const skv_proto_user *u;
    uint32_t op;
    bool role_changed;
    char **keys;                 /* DELETE: keys to forget */
    size_t n_keys;
    skv_proto_admin_user_reply *rp;
} uchange;

static int check_projects(skv__mgr_admin_ctx *ctx, const skv_proto_user *u,
                          const char *domain, skv_error *err)
{
    for (size_t i = 0; i < u->n_projects; i++) {
        char pd[SKV__ADM_NAME_MAX];
        int rc = skv__mgr_admin_name_check("project", u->projects[i], err);
        if (!rc)
            rc = skv__mgr_admin_lookup(ctx, pd, sizeof pd, "SELECT domain"
                " FROM projects WHERE name=?1", u->projects[i], NULL, err);
        if (rc == 0)
            return skv__err(err, SKV_ENOENT, "user '%s': project '%s' does "
                            "not exist", u->name, u->projects[i]);
        if (rc < 0)
            return rc;
        if (strcmp(pd, domain) != 0)
            return skv__err(err, SKV_EINVAL, "user '%s': project '%s' belongs"
                            " to domain '%s', not '%s'", u->name,
                            u->projects[i], pd, domain);
    }
    return 0;
}

/* Fields sent (NULL strings are "unchanged" for UPDATE). */
static int check_fields(skv__mgr_admin_ctx *ctx, const skv_proto_user *u,
                        const char *domain, skv_error *err)
{
    skv_auth_role role;
    int rc = skv__mgr_admin_email_check(u->email, err);
    if (!rc && u->role)
        rc = skv_auth_role_parse(&role, u->role, err);
    if (!rc)
        rc = skv__mgr_admin_text_check("description", u->description, err);
    if (!rc && u->domain)
        rc = skv__mgr_admin_need(ctx, "domains", "domain", u->domain, err);
    if (!rc && u->resource_policy && u->resource_policy[0])
        rc = skv__mgr_admin_need(ctx, "resource_policies", "resource policy",
                                 u->resource_policy, err);
    if (!rc)
        rc = check_projects(ctx, u, domain, err);
    if (rc)
        skv__err_prefix(err, "user '%s'", u->name);
    return rc;
}

static int set_projects(skv__mgr_admin_ctx *ctx, const skv_proto_user *u,
                        skv_error *err)
{
    int rc = skv__mgr_admin_write(ctx, "DELETE FROM user_projects WHERE"
                                  " user=?1", u->name, NULL, err);
    for (size_t i = 0; !rc && i < u->n_projects; i++)
        rc = skv__mgr_admin_write(ctx, "INSERT OR IGNORE INTO user_projects"
                                  " (user, project) VALUES (?1, ?2)", u->name,
                                  u->projects[i], err);
    return rc;
}

static int apply_upsert(skv__mgr_admin_ctx *ctx, uchange *c, skv_error *err)
{
    const skv_proto_user *u = c->u;
    bool create = c->op == SKV_PROTO_ADMIN_CREATE;
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, create
        ? "INSERT INTO users (name, email, role, domain, resource_policy,"
          " description, active) VALUES (?1, ?2, coalesce(?3, 'user'),"
          " coalesce(?4, 'default'), nullif(?5, ''), ?6, 1)"
        : "UPDATE users SET email=coalesce(?2, email),"
          " role=coalesce(?3, role), domain=coalesce(?4, domain),"
          " resource_policy=CASE WHEN ?5 IS NULL THEN resource_policy"
          " ELSE nullif(?5, '') END,"
          " description=coalesce(?6, description), active=?7 WHERE name=?1",
        err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, u->name);
    skv__mgr_admin_bind(st, 2, u->email);
    skv__mgr_admin_bind(st, 3, u->role);
    skv__mgr_admin_bind(st, 4, u->domain);
    skv__mgr_admin_bind(st, 5, u->resource_policy);
    skv__mgr_admin_bind(st, 6, u->description);
    if (!create)
        sqlite3_bind_int(st, 7, u->active ? 1 : 0);
    rc = skv__mgr_admin_done(ctx, st, "write user", err);
    if (rc == SKV_EEXIST)
        return skv__err(err, SKV_EEXIST, "user '%s' exists already", u->name);
    if (!rc && (create || u->n_projects))
        rc = set_projects(ctx, u, err);
    return rc ? rc : skv__mgr_admin_read_users(ctx, c->rp, u->name, NULL, err);
}

static int apply_delete(skv__mgr_admin_ctx *ctx, uchange *c, skv_error *err)
{
    const char *n = c->u->name;
    int rc = skv__mgr_admin_read_users(ctx, c->rp, n, NULL, err);
    if (!rc)
        rc = skv__mgr_admin_user_keys(ctx, &c->keys, &c->n_keys, n, err);
    if (!rc)
        rc = skv__mgr_admin_write(ctx, "DELETE FROM keypairs WHERE user=?1",
                                  n, NULL, err);
    if (!rc)
        rc = skv__mgr_admin_write(ctx, "DELETE FROM user_projects WHERE"
                                  " user=?1", n, NULL, err);
    if (!rc)
        rc = skv__mgr_admin_write(ctx, "DELETE FROM users WHERE name=?1", n,
                                  NULL, err);
    return rc;
}

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    uchange *c = arg;
    return c->op == SKV_PROTO_ADMIN_DELETE ? apply_delete(ctx, c, err)
                                           : apply_upsert(ctx, c, err);
}

static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    uchange *c = arg;
    int rc = skv__mgr_admin_sync_user_policy(ctx, c->u->name, err);
    if (rc)
        return rc;
    if (c->op != SKV_PROTO_ADMIN_DELETE)
        return skv__mgr_admin_sync_user_keys(ctx, c->u->name, c->role_changed,
                                             err);
    /* Deleted: its keys are gone from the table. Forget them now; undo
     * re-adds them from the rolled-back rows. */
    if (undo)
        return skv__mgr_admin_sync_user_keys(ctx, c->u->name, false, err);
    skv__mgr_admin_forget_keys(ctx, c->keys, c->n_keys);
    return 0;
}

/* A user moving to another domain without a new project list: its
 * current projects must belong to the new domain. */
static int kept_projects(skv__mgr_admin_ctx *ctx, const skv_proto_user *u,
                         skv_error *err)
{
    char pj[SKV__ADM_NAME_MAX];
    int rc = skv__mgr_admin_lookup(ctx, pj, sizeof pj, "SELECT p.name FROM"
        " user_projects up JOIN projects p ON p.name=up.project WHERE"
        " up.user=?1 AND p.domain<>?2 ORDER BY p.name", u->name, u->domain,
        err);
    if (rc > 0)
        return skv__err(err, SKV_EINVAL, "user '%s': project '%s' is not in "
                        "domain '%s' (send the new project list)", u->name,
                        pj, u->domain);
    return rc;
}

/* What the request may not do to the caller's own account. */
static int self_check(const uchange *c, const char *old_role, skv_error *err)
{
    if (strcmp(c->p->user, c->u->name) != 0)
        return 0;
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return skv__err(err, SKV_EPERM, "user '%s': admins cannot delete "
                        "themselves", c->u->name);
    if (!c->u->active ||
        (c->u->role && strcmp(c->u->role, old_role) != 0))
        return skv__err(err, SKV_EPERM, "user '%s': admins cannot deactivate"
                        " themselves or change their own role", c->u->name);
    return 0;
}

/* Validation against the current rows, before any write. */
static int prepare(skv__mgr_admin_ctx *ctx, uchange *c, skv_error *err)
{
    const skv_proto_user *u = c->u;
    char old[SKV__ADM_NAME_MAX] = "", dom[SKV__ADM_NAME_MAX] = "";
    int rc = skv__mgr_admin_lookup(ctx, old, sizeof old, "SELECT role FROM"
                                   " users WHERE name=?1", u->name, NULL, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "user '%s' exists already",
                        u->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "user '%s' does not exist", u->name);
    rc = self_check(c, old, err);
    if (rc || c->op == SKV_PROTO_ADMIN_DELETE)
        return rc;
    c->role_changed = u->role && old[0] && strcmp(u->role, old) != 0;
    if (u->domain)
        snprintf(dom, sizeof dom, "%s", u->domain);
    else if (c->op == SKV_PROTO_ADMIN_CREATE)
        snprintf(dom, sizeof dom, "default");
    else if ((rc = skv__mgr_admin_lookup(ctx, dom, sizeof dom, "SELECT domain"
                  " FROM users WHERE name=?1", u->name, NULL, err)) < 0)
        return rc;
    rc = check_fields(ctx, u, dom, err);
    if (!rc && c->op == SKV_PROTO_ADMIN_UPDATE && u->domain && !u->n_projects)
        rc = kept_projects(ctx, u, err);
    return rc;
}

int skv__mgr_admin_on_user(skv__mgr_admin_ctx *ctx,
                           const skv_auth_principal *p,
                           const skv_proto_admin_user *rq,
                           skv_proto_admin_user_reply *rp, skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "user", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = skv__mgr_admin_read_users(ctx, rp, rq->user.name,
                                       rq->user.domain, err);
    } else {
        uchange c = {p, &rq->user, rq->op, false, NULL, 0, rp};
        rc = skv__mgr_admin_name_check("user name", rq->user.name, err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, &c, err);
        skv__mgr_admin_strv_free(c.keys, c.n_keys);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, rp);
    return rc;
}
