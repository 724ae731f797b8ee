/* admin.project: projects belong to a domain and may carry a resource
 * policy, mirrored as the scheduler's project-scope policy.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct pchange {
    const skv_proto_project *pj;
    uint32_t op;
    skv_proto_admin_project_reply *rp;
} pchange;

static int project_row(skv_proto_admin_project_reply *rp, sqlite3_stmt *st,
                       skv_error *err)
{
    skv_proto_project *p = skv__mgr_admin_grow((void **)&rp->projects,
                                               &rp->n_projects, sizeof *p);
    if (!p)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    p->name = skv__mgr_admin_col_dup(st, 0);
    p->domain = skv__mgr_admin_col_dup(st, 1);
    p->description = skv__mgr_admin_col_dup(st, 2);
    p->resource_policy = skv__mgr_admin_col_dup(st, 3);
    p->active = sqlite3_column_int(st, 4) != 0;
    if (!p->name || !p->domain)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return 0;
}

static int read_projects(skv__mgr_admin_ctx *ctx,
                         skv_proto_admin_project_reply *rp, const char *name,
                         const char *domain, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT name, domain,"
        " description, resource_policy, active FROM projects"
        " WHERE (?1 IS NULL OR name=?1) AND (?2 IS NULL OR domain=?2)"
        " ORDER BY name", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    skv__mgr_admin_bind(st, 2, domain);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = project_row(rp, st, err);
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read projects");
    sqlite3_finalize(st);
    return rc;
}

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    pchange *c = arg;
    const skv_proto_project *p = c->pj;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        int rc = read_projects(ctx, c->rp, p->name, NULL, err);
        return rc ? rc : skv__mgr_admin_write(ctx, "DELETE FROM projects"
                                              " WHERE name=?1", p->name,
                                              NULL, err);
    }
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, c->op == SKV_PROTO_ADMIN_CREATE
        ? "INSERT INTO projects (name, domain, description, resource_policy,"
          " active) VALUES (?1, coalesce(?2, 'default'), ?3, nullif(?4, ''),"
          " 1)"
        : "UPDATE projects SET domain=coalesce(?2, domain),"
          " description=coalesce(?3, description),"
          " resource_policy=CASE WHEN ?4 IS NULL THEN resource_policy"
          " ELSE nullif(?4, '') END, active=?5 WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, p->name);
    skv__mgr_admin_bind(st, 2, p->domain);
    skv__mgr_admin_bind(st, 3, p->description);
    skv__mgr_admin_bind(st, 4, p->resource_policy);
    if (c->op == SKV_PROTO_ADMIN_UPDATE)
        sqlite3_bind_int(st, 5, p->active ? 1 : 0);
    rc = skv__mgr_admin_done(ctx, st, "write project", err);
    return rc ? rc : read_projects(ctx, c->rp, p->name, NULL, err);
}

static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    (void)undo;    /* copied from the rows either way */
    pchange *c = arg;
    return skv__mgr_admin_sync_project_policy(ctx, c->pj->name, err);
}

static int check_delete(skv__mgr_admin_ctx *ctx, const char *name,
                        skv_error *err)
{
    char user[SKV__ADM_NAME_MAX];
    int rc = skv__mgr_admin_lookup(ctx, user, sizeof user, "SELECT user FROM"
        " user_projects WHERE project=?1 ORDER BY user", name, NULL, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "project '%s' is in use: user '%s' "
                        "is a member", name, user);
    return rc;
}

static int prepare(skv__mgr_admin_ctx *ctx, const pchange *c, skv_error *err)
{
    const skv_proto_project *p = c->pj;
    int rc = skv__mgr_admin_exists(ctx, "projects", p->name, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "project '%s' exists already",
                        p->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "project '%s' does not exist",
                        p->name);
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return check_delete(ctx, p->name, err);
    rc = skv__mgr_admin_text_check("description", p->description, err);
    if (!rc && p->domain)
        rc = skv__mgr_admin_need(ctx, "domains", "domain", p->domain, err);
    if (!rc && p->resource_policy && p->resource_policy[0])
        rc = skv__mgr_admin_need(ctx, "resource_policies", "resource policy",
                                 p->resource_policy, err);
    if (!rc && c->op == SKV_PROTO_ADMIN_UPDATE && p->domain &&
        (rc = skv__mgr_admin_lookup(ctx, NULL, 0, "SELECT 1 FROM"
             " user_projects up JOIN users u ON u.name=up.user WHERE"
             " up.project=?1 AND u.domain<>?2", p->name, p->domain, err)) > 0)
        rc = skv__err(err, SKV_EBUSY, "members outside domain '%s' (remove "
                      "them first)", p->domain);
    if (rc)
        skv__err_prefix(err, "project '%s'", p->name);
    return rc;
}

int skv__mgr_admin_on_project(skv__mgr_admin_ctx *ctx,
                              const skv_proto_admin_project *rq,
                              skv_proto_admin_project_reply *rp,
                              skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "project", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = read_projects(ctx, rp, rq->project.name, rq->project.domain, err);
    } else {
        pchange c = {&rq->project, rq->op, rp};
        rc = skv__mgr_admin_name_check("project name", rq->project.name, err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, &c, err);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_PROJECT_REPLY, rp);
    return rc;
}
