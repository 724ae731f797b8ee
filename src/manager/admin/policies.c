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

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    rchange *c = arg;
    const char *n = c->p->name;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = skv__mgr_store_admin_policy_read(ctx->db, c->rp, n, err);
        return rc ? rc : skv__mgr_store_admin_policy_delete(ctx->db, n, err);
    }
    rc = c->op == SKV_PROTO_ADMIN_CREATE
             ? skv__mgr_store_admin_policy_insert(ctx->db, c->p, err)
             : skv__mgr_store_admin_policy_update(ctx->db, c->p, err);
    return rc ? rc : skv__mgr_store_admin_policy_read(ctx->db, c->rp, n, err);
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
    char who[SKV__ADM_NAME_MAX];
    const char *what;
    int rc = skv__mgr_store_admin_policy_user_of(ctx->db, name, &what, who,
                                                 sizeof who, err);
    if (rc > 0)
        return skv__err(err, SKV_EBUSY, "resource policy '%s' is in use by "
                        "%s '%s'", name, what, who);
    return rc;
}

static int prepare(skv__mgr_admin_ctx *ctx, const rchange *c, skv_error *err)
{
    const skv_proto_resource_policy *p = c->p;
    int rc = skv__mgr_store_admin_exists(ctx->db,
                                         SKV__MGR_STORE_ADMIN_POLICIES,
                                         p->name, err);
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
    if (p->idle_timeout_ms > (uint64_t)INT64_MAX)
        return skv__err(err, SKV_ERANGE, "resource policy '%s': "
                        "idle_timeout_ms too large", p->name);
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
        rc = skv__mgr_store_admin_policy_read(ctx->db, rp, rq->policy.name,
                                              err);
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
