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
            rc = skv__mgr_store_admin_project_domain(ctx->db, u->projects[i],
                                                     pd, sizeof pd, err);
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
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_DOMAINS, "domain",
                                 u->domain, err);
    if (!rc && u->resource_policy && u->resource_policy[0])
        rc = skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_POLICIES,
                                 "resource policy", u->resource_policy, err);
    if (!rc)
        rc = check_projects(ctx, u, domain, err);
    if (rc)
        skv__err_prefix(err, "user '%s'", u->name);
    return rc;
}

static int apply_upsert(skv__mgr_admin_ctx *ctx, uchange *c, skv_error *err)
{
    const skv_proto_user *u = c->u;
    bool create = c->op == SKV_PROTO_ADMIN_CREATE;
    int rc = create ? skv__mgr_store_admin_user_insert(ctx->db, u, err)
                    : skv__mgr_store_admin_user_update(ctx->db, u, err);
    if (rc == SKV_EEXIST)
        return skv__err(err, SKV_EEXIST, "user '%s' exists already", u->name);
    /* An update without a list keeps the user's projects. */
    if (!rc && (create || u->n_projects))
        rc = skv__mgr_store_admin_user_set_projects(ctx->db, u->name,
                                                    u->projects,
                                                    u->n_projects, err);
    return rc ? rc : skv__mgr_store_admin_user_read(ctx->db, c->rp, u->name,
                                                    NULL, err);
}

static int apply_delete(skv__mgr_admin_ctx *ctx, uchange *c, skv_error *err)
{
    const char *n = c->u->name;
    int rc = skv__mgr_store_admin_user_read(ctx->db, c->rp, n, NULL, err);
    if (!rc)
        rc = skv__mgr_store_admin_key_list(ctx->db, n, &c->keys, &c->n_keys,
                                           err);
    return rc ? rc : skv__mgr_store_admin_user_delete(ctx->db, n, err);
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
    int rc = skv__mgr_store_admin_user_project_outside(ctx->db, u->name,
                                                       u->domain, pj,
                                                       sizeof pj, err);
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
    skv__mgr_store_admin_user_row row;
    int rc = skv__mgr_store_admin_user_get(ctx->db, u->name, &row, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "user '%s' exists already",
                        u->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "user '%s' does not exist", u->name);
    snprintf(old, sizeof old, "%s", row.role);
    rc = self_check(c, old, err);
    if (!rc && c->op == SKV_PROTO_ADMIN_DELETE)
        rc = skv__mgr_admin_quota_busy(ctx, "user", u->name, err);
    if (rc || c->op == SKV_PROTO_ADMIN_DELETE)
        return rc;
    c->role_changed = u->role && old[0] && strcmp(u->role, old) != 0;
    if (u->domain)
        snprintf(dom, sizeof dom, "%s", u->domain);
    else if (c->op == SKV_PROTO_ADMIN_CREATE)
        snprintf(dom, sizeof dom, "default");
    else
        snprintf(dom, sizeof dom, "%s", row.domain);
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
        rc = skv__mgr_store_admin_user_read(ctx->db, rp, rq->user.name,
                                            rq->user.domain, err);
    } else {
        uchange c = {p, &rq->user, rq->op, false, NULL, 0, rp};
        rc = skv__mgr_admin_name_check("user name", rq->user.name, err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, &c, err);
        skv__mgr_store_admin_strv_free(c.keys, c.n_keys);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, rp);
    return rc;
}
