/* admin.* requests: authorization, dispatch per object, and the one
 * transaction-then-mirror sequence every change goes through.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_op_check(uint32_t op, const char *what, skv_error *err)
{
    if (op < SKV_PROTO_ADMIN_CREATE || op > SKV_PROTO_ADMIN_LIST)
        return skv__err(err, SKV_EINVAL, "admin.%s: op %u is not create (1),"
                        " update (2), delete (3) or list (4)", what, op);
    return 0;
}

int skv__mgr_admin_run(skv__mgr_admin_ctx *ctx, skv__mgr_admin_apply_fn apply,
                       skv__mgr_admin_mirror_fn mirror, void *arg,
                       skv_error *err)
{
    skv__mgr_admin_tx tx;
    int rc = skv__mgr_admin_begin(ctx, &tx, err);
    if (rc)
        return rc;
    rc = apply(ctx, arg, err);
    bool mirrored = false;
    if (!rc && mirror) {
        rc = mirror(ctx, arg, false, err);
        mirrored = true;    /* partly, maybe: undo after a failure too */
    }
    if (!rc)
        rc = skv__mgr_admin_commit(ctx, &tx, err);
    else
        skv__mgr_admin_rollback(ctx, &tx);
    if (rc && mirrored) {
        skv_error ignored = SKV_ERROR_INIT;
        if (mirror(ctx, arg, true, &ignored))
            skv__log(SKV_LOG_ERROR, "manager", "admin: cannot restore the "
                     "scheduler/verifier after a failed change: %s",
                     ignored.message);
    }
    return rc;
}

int skv__mgr_admin_handle(skv__mgr_admin_ctx *ctx,
                          const skv_auth_principal *p, skv_proto_type type,
                          const void *body, void *reply, int64_t now_ms,
                          skv_error *err)
{
    if (!ctx || !ctx->db || !ctx->sched || !ctx->verifier || !p || !body ||
        !reply)
        return skv__err(err, SKV_EINVAL, "admin: NULL argument");
    int rc = skv_auth_may(p, SKV_AUTH_OP_ADMIN, NULL, err);
    if (rc)
        return rc;
    switch (type) {
    case SKV_PROTO_ADMIN_USER:
        return skv__mgr_admin_on_user(ctx, p, body, reply, err);
    case SKV_PROTO_ADMIN_KEYPAIR:
        return skv__mgr_admin_on_keypair(ctx, p, body, reply, now_ms, err);
    case SKV_PROTO_ADMIN_PROJECT:
        return skv__mgr_admin_on_project(ctx, body, reply, err);
    case SKV_PROTO_ADMIN_DOMAIN:
        return skv__mgr_admin_on_domain(ctx, body, reply, err);
    case SKV_PROTO_ADMIN_RESOURCE_POLICY:
        return skv__mgr_admin_on_policy(ctx, body, reply, err);
    case SKV_PROTO_ADMIN_RESOURCE_GROUP:
        return skv__mgr_admin_on_group(ctx, body, reply, err);
    case SKV_PROTO_ADMIN_QUOTA:
        return skv__mgr_admin_on_quota(ctx, body, reply, err);
    case SKV_PROTO_ADMIN_QUOTA_TREE:
        return skv__mgr_admin_on_quota_tree(ctx, body, reply, err);
    default:
        return skv__err(err, SKV_EINVAL, "admin: message type %d is not an "
                        "admin request", (int)type);
    }
}
