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

static int domain_groups(skv__mgr_admin_ctx *ctx, skv_proto_domain *d,
                         skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT resource_group FROM"
        " domain_groups WHERE domain=?1 ORDER BY resource_group", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, d->name);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        char **slot = skv__mgr_admin_grow((void **)&d->resource_groups,
                                          &d->n_resource_groups,
                                          sizeof(char *));
        if (!slot || !(*slot = skv__mgr_admin_col_dup(st, 0)))
            rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read domain groups");
    sqlite3_finalize(st);
    return rc;
}

static int read_domains(skv__mgr_admin_ctx *ctx,
                        skv_proto_admin_domain_reply *rp, const char *name,
                        skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(ctx, &st, "SELECT name, description,"
        " active FROM domains WHERE (?1 IS NULL OR name=?1) ORDER BY name",
        err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        skv_proto_domain *d = skv__mgr_admin_grow((void **)&rp->domains,
                                                  &rp->n_domains, sizeof *d);
        if (!d || !(d->name = skv__mgr_admin_col_dup(st, 0))) {
            rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
            break;
        }
        d->description = skv__mgr_admin_col_dup(st, 1);
        d->active = sqlite3_column_int(st, 2) != 0;
        rc = domain_groups(ctx, d, err);
    }
    if (!rc && s != SQLITE_DONE)
        rc = skv__mgr_admin_dberr(ctx, err, "read domains");
    sqlite3_finalize(st);
    return rc;
}

static int set_groups(skv__mgr_admin_ctx *ctx, const skv_proto_domain *d,
                      skv_error *err)
{
    int rc = skv__mgr_admin_write(ctx, "DELETE FROM domain_groups WHERE"
                                  " domain=?1", d->name, NULL, err);
    for (size_t i = 0; !rc && i < d->n_resource_groups; i++)
        rc = skv__mgr_admin_write(ctx, "INSERT OR IGNORE INTO domain_groups"
                                  " (domain, resource_group) VALUES (?1, ?2)",
                                  d->name, d->resource_groups[i], err);
    return rc;
}

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    dchange *c = arg;
    const skv_proto_domain *d = c->d;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = read_domains(ctx, c->rp, d->name, err);
        if (!rc)
            rc = skv__mgr_admin_write(ctx, "DELETE FROM domain_groups WHERE"
                                      " domain=?1", d->name, NULL, err);
        return rc ? rc : skv__mgr_admin_write(ctx, "DELETE FROM domains"
                                              " WHERE name=?1", d->name,
                                              NULL, err);
    }
    sqlite3_stmt *st;
    rc = skv__mgr_admin_prepare(ctx, &st, c->op == SKV_PROTO_ADMIN_CREATE
        ? "INSERT INTO domains (name, description, active) VALUES (?1, ?2, 1)"
        : "UPDATE domains SET description=coalesce(?2, description),"
          " active=?3 WHERE name=?1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, d->name);
    skv__mgr_admin_bind(st, 2, d->description);
    if (c->op == SKV_PROTO_ADMIN_UPDATE)
        sqlite3_bind_int(st, 3, d->active ? 1 : 0);
    rc = skv__mgr_admin_done(ctx, st, "write domain", err);
    if (!rc && (c->op == SKV_PROTO_ADMIN_CREATE || d->n_resource_groups))
        rc = set_groups(ctx, d, err);
    return rc ? rc : read_domains(ctx, c->rp, d->name, err);
}

static int check_delete(skv__mgr_admin_ctx *ctx, const char *name,
                        skv_error *err)
{
    char who[SKV__ADM_NAME_MAX];
    int rc = skv__mgr_admin_lookup(ctx, who, sizeof who, "SELECT name FROM"
        " users WHERE domain=?1 ORDER BY name", name, NULL, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "domain '%s' is in use: user '%s' "
                        "belongs to it", name, who);
    if (!rc)
        rc = skv__mgr_admin_lookup(ctx, who, sizeof who, "SELECT name FROM"
            " projects WHERE domain=?1 ORDER BY name", name, NULL, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "domain '%s' is in use: project '%s' "
                        "belongs to it", name, who);
    return rc;
}

static int prepare(skv__mgr_admin_ctx *ctx, const dchange *c, skv_error *err)
{
    const skv_proto_domain *d = c->d;
    int rc = skv__mgr_admin_exists(ctx, "domains", d->name, err);
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
            rc = skv__mgr_admin_need(ctx, "resource_groups", "resource group",
                                     d->resource_groups[i], err);
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
        rc = read_domains(ctx, rp, rq->domain.name, err);
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
