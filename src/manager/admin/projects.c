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

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    pchange *c = arg;
    const skv_proto_project *p = c->pj;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = skv__mgr_store_admin_project_read(ctx->db, c->rp, p->name, NULL,
                                               err);
        return rc ? rc : skv__mgr_store_admin_project_delete(ctx->db,
                                                             p->name, err);
    }
    rc = c->op == SKV_PROTO_ADMIN_CREATE
             ? skv__mgr_store_admin_project_insert(ctx->db, p, err)
             : skv__mgr_store_admin_project_update(ctx->db, p, err);
    return rc ? rc : skv__mgr_store_admin_project_read(ctx->db, c->rp,
                                                       p->name, NULL, err);
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
    int rc = skv__mgr_store_admin_project_member(ctx->db, name, user,
                                                 sizeof user, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "project '%s' is in use: user '%s' "
                        "is a member", name, user);
    return rc ? rc : skv__mgr_admin_quota_busy(ctx, "project", name, err);
}

static int prepare(skv__mgr_admin_ctx *ctx, const pchange *c, skv_error *err)
{
    const skv_proto_project *p = c->pj;
    int rc = skv__mgr_store_admin_exists(ctx->db,
                                         SKV__MGR_STORE_ADMIN_PROJECTS,
                                         p->name, err);
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
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_DOMAINS, "domain",
                                 p->domain, err);
    if (!rc && p->resource_policy && p->resource_policy[0])
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_POLICIES,
                                 "resource policy", p->resource_policy, err);
    if (!rc && c->op == SKV_PROTO_ADMIN_UPDATE && p->domain &&
        (rc = skv__mgr_store_admin_project_outsiders(ctx->db, p->name,
                                                     p->domain, err)) > 0)
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
        rc = skv__mgr_store_admin_project_read(ctx->db, rp, rq->project.name,
                                               rq->project.domain, err);
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
