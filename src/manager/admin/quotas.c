/* admin.quota: one owner's guarantee, hard limit and borrow limit in one
 * resource group, stored as a row of quotas and mirrored into the
 * scheduler's quota tree (skv_sched_quota_set). The mirror copies the row
 * as this connection sees it, so after a rollback the same call restores
 * the old quota.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

static const char *const scopes[] = {"domain", "project", "user"};
static const skv__mgr_store_admin_table owner_table[] = {
    SKV__MGR_STORE_ADMIN_DOMAINS, SKV__MGR_STORE_ADMIN_PROJECTS,
    SKV__MGR_STORE_ADMIN_USERS};

static int scope_of(const char *name, skv_sched_scope *out)
{
    for (int i = 0; i < SKV_SCHED_SCOPE_COUNT; i++)
        if (name && strcmp(name, scopes[i]) == 0) {
            *out = (skv_sched_scope)i;
            return 0;
        }
    return -1;
}

/* The stored row of (scope, owner, group) into the scheduler; none: the
 * quota is removed there. */
static int sync_one(skv__mgr_admin_ctx *ctx, const char *scope,
                    const char *owner, const char *group, skv_error *err)
{
    skv_sched_scope sc;
    if (scope_of(scope, &sc))
        return skv__err(err, SKV_EINVAL, "quota: bad scope '%s'", scope);
    skv_proto_admin_quota_reply rp = {0};
    int rc = skv__mgr_store_admin_quota_read(ctx->db, &rp, scope, owner,
                                             group, err);
    if (!rc && rp.n_quotas == 0) {
        rc = skv_sched_quota_set(ctx->sched, sc, owner, group, NULL, err);
    } else if (!rc) {
        skv_sched_quota q = SKV_SCHED_QUOTA_INIT;
        q.guaranteed = rp.quotas[0].guaranteed;
        q.limit = rp.quotas[0].limit;
        q.borrow_limit = rp.quotas[0].borrow_limit;
        rc = skv_sched_quota_set(ctx->sched, sc, owner, group, &q, err);
    }
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rp);
    return rc;
}

int skv__mgr_admin_sync_all_quotas(skv__mgr_admin_ctx *ctx, skv_error *err)
{
    skv_proto_admin_quota_reply rp = {0};
    int rc = skv__mgr_store_admin_quota_read(ctx->db, &rp, NULL, NULL, NULL,
                                             err);
    for (size_t i = 0; !rc && i < rp.n_quotas; i++)
        rc = sync_one(ctx, rp.quotas[i].scope, rp.quotas[i].owner,
                      rp.quotas[i].resource_group, err);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rp);
    return rc;
}

int skv__mgr_admin_quota_busy(skv__mgr_admin_ctx *ctx, const char *scope,
                              const char *name, skv_error *err)
{
    char buf[SKV__ADM_NAME_MAX];
    int rc = scope ? skv__mgr_store_admin_quota_of(ctx->db, scope, name, buf,
                                                   sizeof buf, err)
                   : skv__mgr_store_admin_quota_in_group(ctx->db, name, buf,
                                                         sizeof buf, err);
    if (rc > 0 && scope)
        return skv__err(err, SKV_EBUSY, "%s '%s' has a quota in resource "
                        "group '%s' (remove it first: sokovan admin %s update "
                        "%s --quota-rg %s --no-quota)", scope, name, buf,
                        scope, name, buf);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "resource group '%s' holds quotas "
                        "('%s' has one; remove them first)", name, buf);
    return rc;
}

typedef struct qchange {
    const skv_proto_quota *q;
    uint32_t op;
    skv_proto_admin_quota_reply *rp;
    skv_proto_quota merged;         /* UPDATE: the row to write */
} qchange;

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    qchange *c = arg;
    const skv_proto_quota *q = c->q;
    int rc = skv__mgr_store_admin_quota_read(ctx->db, c->rp, q->scope,
                                             q->owner, q->resource_group, err);
    if (rc)
        return rc;
    bool had = c->rp->n_quotas > 0;
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, c->rp);
    memset(c->rp, 0, sizeof *c->rp);
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return had ? skv__mgr_store_admin_quota_delete(ctx->db, q->scope,
                                                       q->owner,
                                                       q->resource_group, err)
                   : skv__err(err, SKV_ENOENT, "%s '%s' has no quota in "
                              "resource group '%s'", q->scope, q->owner,
                              q->resource_group);
    if (c->op == SKV_PROTO_ADMIN_CREATE && had)
        return skv__err(err, SKV_EEXIST, "%s '%s' has a quota in resource "
                        "group '%s' already (use update)", q->scope, q->owner,
                        q->resource_group);
    rc = skv__mgr_store_admin_quota_put(ctx->db, &c->merged, !had, err);
    return rc ? rc : skv__mgr_store_admin_quota_read(ctx->db, c->rp, q->scope,
                                                     q->owner,
                                                     q->resource_group, err);
}

static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    (void)undo;    /* copied from the rows either way */
    const skv_proto_quota *q = ((qchange *)arg)->q;
    return sync_one(ctx, q->scope, q->owner, q->resource_group, err);
}

/* A vector: at most as many slot names as the scheduler holds. */
static int vec_check(const skv_proto_quota *q, const char *what,
                     const skv_slots *v, skv_error *err)
{
    if (v && skv_slots_count(v) > SKV_SCHED_SLOTS_MAX)
        return skv__err(err, SKV_ERANGE, "%s '%s': %s names %zu slots (at "
                        "most %d)", q->scope, q->owner, what,
                        skv_slots_count(v), SKV_SCHED_SLOTS_MAX);
    return 0;
}

/* A guarantee above the hard limit of the same slot can never be met. */
static int guarantee_check(const skv_proto_quota *q, const skv_slots *g,
                           const skv_slots *l, skv_error *err)
{
    size_t n = g ? skv_slots_count(g) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        skv_qty gv, lv;
        if (skv_slots_at(g, i, &name, NULL, &gv) == 0 &&
            skv_slots_lookup(l, name, NULL, &lv) == 0 && gv > lv)
            return skv__err(err, SKV_EINVAL, "%s '%s': guaranteed %s is above"
                            " its limit", q->scope, q->owner, name);
    }
    return 0;
}

static int names_check(skv__mgr_admin_ctx *ctx, const skv_proto_quota *q,
                       skv_error *err)
{
    skv_sched_scope sc;
    if (scope_of(q->scope, &sc))
        return skv__err(err, SKV_EINVAL, "quota: scope must be domain, "
                        "project or user (got '%s')",
                        q->scope ? q->scope : "(none)");
    int rc = skv__mgr_admin_name_check("quota owner", q->owner, err);
    if (!rc)
        rc = skv__mgr_admin_name_check("resource group name",
                                       q->resource_group, err);
    if (!rc)
        rc = skv__mgr_admin_need(ctx, owner_table[sc], q->scope, q->owner,
                                 err);
    if (!rc)
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_GROUPS,
                                 "resource group", q->resource_group, err);
    return rc;
}

/* UPDATE keeps a vector left out; an empty one clears it. */
static const skv_slots *pick(const skv_slots *given, const skv_slots *old)
{
    return given ? given : old;
}

static int prepare(skv__mgr_admin_ctx *ctx, qchange *c,
                   skv_proto_admin_quota_reply *old, skv_error *err)
{
    const skv_proto_quota *q = c->q;
    int rc = names_check(ctx, q, err);
    if (rc || c->op == SKV_PROTO_ADMIN_DELETE)
        return rc;
    if (!q->guaranteed && !q->limit && !q->borrow_limit)
        return skv__err(err, SKV_EINVAL, "%s '%s': a quota needs guaranteed, "
                        "limit or borrow_limit", q->scope, q->owner);
    rc = skv__mgr_store_admin_quota_read(ctx->db, old, q->scope, q->owner,
                                         q->resource_group, err);
    if (rc)
        return rc;
    const skv_proto_quota *o = old->n_quotas ? &old->quotas[0] : NULL;
    c->merged = *q;
    c->merged.guaranteed = (skv_slots *)pick(q->guaranteed,
                                             o ? o->guaranteed : NULL);
    c->merged.limit = (skv_slots *)pick(q->limit, o ? o->limit : NULL);
    c->merged.borrow_limit = (skv_slots *)pick(q->borrow_limit,
                                               o ? o->borrow_limit : NULL);
    rc = vec_check(q, "guaranteed", c->merged.guaranteed, err);
    if (!rc)
        rc = vec_check(q, "limit", c->merged.limit, err);
    if (!rc)
        rc = vec_check(q, "borrow_limit", c->merged.borrow_limit, err);
    if (!rc)
        rc = guarantee_check(q, c->merged.guaranteed, c->merged.limit, err);
    return rc;
}

static int on_list(skv__mgr_admin_ctx *ctx, const skv_proto_quota *q,
                   skv_proto_admin_quota_reply *rp, skv_error *err)
{
    int rc = skv__mgr_admin_opt_name_check("quota owner", q->owner, err);
    if (!rc)
        rc = skv__mgr_admin_opt_name_check("resource group name",
                                           q->resource_group, err);
    skv_sched_scope sc;
    if (!rc && q->scope && q->scope[0] && scope_of(q->scope, &sc))
        rc = skv__err(err, SKV_EINVAL, "quota: scope must be domain, project"
                      " or user (got '%s')", q->scope);
    if (!rc)
        rc = skv__mgr_store_admin_quota_read(
            ctx->db, rp, q->scope && q->scope[0] ? q->scope : NULL,
            q->owner && q->owner[0] ? q->owner : NULL,
            q->resource_group && q->resource_group[0] ? q->resource_group
                                                      : NULL, err);
    return rc;
}

int skv__mgr_admin_on_quota(skv__mgr_admin_ctx *ctx,
                            const skv_proto_admin_quota *rq,
                            skv_proto_admin_quota_reply *rp, skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "quota", err);
    if (!rc && rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = on_list(ctx, &rq->quota, rp, err);
    } else if (!rc) {
        skv_proto_admin_quota_reply old = {0};
        qchange c = {&rq->quota, rq->op, rp, {0}};
        rc = prepare(ctx, &c, &old, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, &c, err);
        skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &old);
        /* a DELETE replies with nothing */
        if (!rc && rq->op == SKV_PROTO_ADMIN_DELETE)
            skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, rp);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, rp);
    return rc;
}
