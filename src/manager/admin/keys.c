/* admin.keypair: create (generated, or imported when both keys are sent),
 * update (resource policy, active), delete, list. The secret leaves the
 * manager once, in the reply to CREATE.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct kchange {
    const skv_proto_keypair *k;
    uint32_t op;
    char user[SKV__ADM_NAME_MAX];      /* the key's owner */
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    char sk[SKV_AUTH_SECRET_KEY_MAX];
    int64_t now_ms;
    skv_proto_admin_keypair_reply *rp;
} kchange;

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    kchange *c = arg;
    const skv_proto_keypair *k = c->k;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = skv__mgr_store_admin_key_read(ctx->db, c->rp, c->ak, NULL, err);
        return rc ? rc : skv__mgr_store_admin_key_delete(ctx->db, c->ak, err);
    }
    rc = c->op == SKV_PROTO_ADMIN_CREATE
             ? skv__mgr_admin_key_insert(ctx, c->ak, c->sk, c->user,
                                         k->resource_policy, c->now_ms, err)
             : skv__mgr_store_admin_key_update(ctx->db, c->ak,
                                               k->resource_policy, k->active,
                                               err);
    if (!rc)
        rc = skv__mgr_store_admin_key_read(ctx->db, c->rp, c->ak, NULL, err);
    if (!rc && c->op == SKV_PROTO_ADMIN_CREATE && c->rp->n_keypairs == 1 &&
        !(c->rp->keypairs[0].secret_key = skv__strdup(c->sk)))
        rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return rc;
}

static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    kchange *c = arg;
    if (c->op == SKV_PROTO_ADMIN_DELETE && !undo) {
        char *keys[1] = {c->ak};
        skv__mgr_admin_forget_keys(ctx, keys, 1);
    } else if (c->op == SKV_PROTO_ADMIN_CREATE && undo) {
        char *keys[1] = {c->ak};    /* rolled back: unknown again */
        skv__mgr_admin_forget_keys(ctx, keys, 1);
    } else {
        int rc = skv__mgr_admin_sync_user_keys(ctx, c->user, false, err);
        if (rc)
            return rc;
    }
    return skv__mgr_admin_sync_user_policy(ctx, c->user, err);
}

/* New key: imported when both halves are sent, else generated. */
static int new_key(skv__mgr_admin_ctx *ctx, kchange *c, skv_error *err)
{
    const skv_proto_keypair *k = c->k;
    int rc = skv__mgr_admin_name_check("key pair user", k->user, err);
    if (!rc)
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_USERS, "user",
                                 k->user, err);
    if (rc)
        return rc;
    snprintf(c->user, sizeof c->user, "%s", k->user);
    if (!k->access_key != !k->secret_key)
        return skv__err(err, SKV_EINVAL, "key pair for '%s': send both "
                        "access_key and secret_key to import, or neither to "
                        "generate", k->user);
    if (!k->access_key)
        return skv_auth_keypair_generate(c->ak, c->sk, err);
    rc = skv_auth_access_key_check(k->access_key, err);
    if (!rc)
        rc = skv_auth_secret_key_check(k->secret_key, err);
    if (rc)
        return rc;
    snprintf(c->ak, sizeof c->ak, "%s", k->access_key);
    snprintf(c->sk, sizeof c->sk, "%s", k->secret_key);
    rc = skv__mgr_store_admin_key_owner(ctx->db, c->ak, NULL, 0, err);
    return rc > 0 ? skv__err(err, SKV_EEXIST, "access key '%s' exists "
                             "already", c->ak) : rc;
}

/* An admin may not remove or deactivate the last active key it holds. */
static int self_check(skv__mgr_admin_ctx *ctx, const skv_auth_principal *p,
                      const kchange *c, skv_error *err)
{
    bool removes = c->op == SKV_PROTO_ADMIN_DELETE || !c->k->active;
    if (!removes || strcmp(p->user, c->user) != 0)
        return 0;
    int rc = skv__mgr_store_admin_key_other_active(ctx->db, c->user, c->ak,
                                                   err);
    if (rc == 0)
        return skv__err(err, SKV_EPERM, "key '%s' is the last active key of "
                        "'%s' (the caller): create another first", c->ak,
                        c->user);
    return rc < 0 ? rc : 0;
}

static int old_key(skv__mgr_admin_ctx *ctx, const skv_auth_principal *p,
                   kchange *c, skv_error *err)
{
    const skv_proto_keypair *k = c->k;
    int rc = skv_auth_access_key_check(k->access_key, err);
    if (rc)
        return rc;
    snprintf(c->ak, sizeof c->ak, "%s", k->access_key);
    rc = skv__mgr_store_admin_key_owner(ctx->db, c->ak, c->user,
                                        sizeof c->user, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "access key '%s' does not exist",
                        c->ak);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_UPDATE &&
        (k->secret_key || (k->user && strcmp(k->user, c->user) != 0)))
        return skv__err(err, SKV_EINVAL, "access key '%s': the secret and "
                        "the user of a key pair cannot change (create a new "
                        "one)", c->ak);
    return self_check(ctx, p, c, err);
}

static int prepare(skv__mgr_admin_ctx *ctx, const skv_auth_principal *p,
                   kchange *c, skv_error *err)
{
    const char *pol = c->k->resource_policy;
    if (c->op != SKV_PROTO_ADMIN_DELETE && pol && pol[0]) {
        int rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_POLICIES,
                                     "resource policy", pol, err);
        if (rc)
            return rc;
    }
    return c->op == SKV_PROTO_ADMIN_CREATE ? new_key(ctx, c, err)
                                           : old_key(ctx, p, c, err);
}

int skv__mgr_admin_on_keypair(skv__mgr_admin_ctx *ctx,
                              const skv_auth_principal *p,
                              const skv_proto_admin_keypair *rq,
                              skv_proto_admin_keypair_reply *rp,
                              int64_t now_ms, skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "keypair", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = skv__mgr_store_admin_key_read(ctx->db, rp, rq->keypair.access_key,
                                           rq->keypair.user, err);
    } else {
        kchange *c = skv__calloc(1, sizeof *c);
        if (!c)
            return skv__err(err, SKV_ENOMEM, "admin: out of memory");
        c->k = &rq->keypair;
        c->op = rq->op;
        c->now_ms = now_ms;
        c->rp = rp;
        rc = prepare(ctx, p, c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, c, err);
        skv_auth_wipe(c->sk, sizeof c->sk);
        skv__free(c);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, rp);
    return rc;
}
