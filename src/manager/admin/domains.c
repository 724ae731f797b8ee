/* admin.domain: domains group users and projects and list the resource
 * groups their users may use (domain_groups).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct dchange {
    const skv_proto_domain *d;
    uint32_t op;
    skv_proto_admin_domain_reply *rp;
} dchange;

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    dchange *c = arg;
    const skv_proto_domain *d = c->d;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = skv__mgr_store_admin_domain_read(ctx->db, c->rp, d->name, err);
        return rc ? rc : skv__mgr_store_admin_domain_delete(ctx->db, d->name,
                                                            err);
    }
    rc = c->op == SKV_PROTO_ADMIN_CREATE
             ? skv__mgr_store_admin_domain_insert(ctx->db, d->name,
                                                  d->description, err)
             : skv__mgr_store_admin_domain_update(ctx->db, d->name,
                                                  d->description, d->active,
                                                  err);
    /* An update without a list keeps the domain's groups. */
    if (!rc && (c->op == SKV_PROTO_ADMIN_CREATE || d->n_resource_groups))
        rc = skv__mgr_store_admin_domain_set_groups(ctx->db, d->name,
                                                    d->resource_groups,
                                                    d->n_resource_groups,
                                                    err);
    return rc ? rc : skv__mgr_store_admin_domain_read(ctx->db, c->rp,
                                                      d->name, err);
}

static int check_delete(skv__mgr_admin_ctx *ctx, const char *name,
                        skv_error *err)
{
    char who[SKV__ADM_NAME_MAX];
    int rc = skv__mgr_store_admin_domain_user(ctx->db, name, who, sizeof who,
                                              err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "domain '%s' is in use: user '%s' "
                        "belongs to it", name, who);
    if (!rc)
        rc = skv__mgr_store_admin_domain_project(ctx->db, name, who,
                                                 sizeof who, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "domain '%s' is in use: project '%s' "
                        "belongs to it", name, who);
    return rc ? rc : skv__mgr_admin_quota_busy(ctx, "domain", name, err);
}

static int prepare(skv__mgr_admin_ctx *ctx, const dchange *c, skv_error *err)
{
    const skv_proto_domain *d = c->d;
    int rc = skv__mgr_store_admin_exists(ctx->db,
                                         SKV__MGR_STORE_ADMIN_DOMAINS,
                                         d->name, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "domain '%s' exists already",
                        d->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "domain '%s' does not exist",
                        d->name);
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return check_delete(ctx, d->name, err);
    rc = skv__mgr_admin_text_check("description", d->description, err);
    for (size_t i = 0; !rc && i < d->n_resource_groups; i++) {
        rc = skv__mgr_admin_name_check("resource group",
                                       d->resource_groups[i], err);
        if (!rc)
            rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_GROUPS,
                                     "resource group", d->resource_groups[i],
                                     err);
    }
    if (rc)
        skv__err_prefix(err, "domain '%s'", d->name);
    return rc;
}

int skv__mgr_admin_on_domain(skv__mgr_admin_ctx *ctx,
                             const skv_proto_admin_domain *rq,
                             skv_proto_admin_domain_reply *rp,
                             skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "domain", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = skv__mgr_store_admin_domain_read(ctx->db, rp, rq->domain.name,
                                              err);
    } else {
        dchange c = {&rq->domain, rq->op, rp};
        rc = skv__mgr_admin_name_check("domain name", rq->domain.name, err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, NULL, &c, err);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_DOMAIN_REPLY, rp);
    return rc;
}
