/* admin.quota_tree: per resource group, domains -> projects -> users with
 * their quota (stored rows), what they use there now (the scheduler's
 * figures), what they borrow (use beyond their guarantee) and what they
 * lend (idle guarantee their siblings' borrowing takes, handed out to the
 * lenders in name order, so the figures are the same on every call).
 * Only owners with a quota or a use, and their ancestors, are listed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

typedef struct tnode {
    skv_sched_scope scope;
    const char *name;
    long parent;                    /* index; -1 for a domain */
    const skv_proto_quota *q;       /* NULL: none */
    skv_slots *used, *borrowed, *lent;
    bool keep;
} tnode;

typedef struct tree {
    tnode *v;
    size_t n, cap;
    skv_proto_admin_domain_reply doms;
    skv_proto_admin_project_reply projs;
    skv_proto_admin_user_reply users;
} tree;

static const char *const scope_names[] = {"domain", "project", "user"};

static int push(tree *t, skv_sched_scope sc, const char *name, long parent,
                skv_error *err)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        tnode *v = skv__realloc(t->v, cap * sizeof *v);
        if (!v)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (tnode){sc, name, parent, NULL, NULL, NULL, NULL, false};
    return 0;
}

static bool member(const skv_proto_user *u, const char *project)
{
    for (size_t i = 0; i < u->n_projects; i++)
        if (strcmp(u->projects[i], project) == 0)
            return true;
    return false;
}

/* Depth first: each domain, its projects, each project's members. */
static int shape(tree *t, skv_error *err)
{
    int rc = 0;
    for (size_t d = 0; !rc && d < t->doms.n_domains; d++) {
        const char *dn = t->doms.domains[d].name;
        long di = (long)t->n;
        rc = push(t, SKV_SCHED_SCOPE_DOMAIN, dn, -1, err);
        for (size_t p = 0; !rc && p < t->projs.n_projects; p++) {
            const skv_proto_project *pj = &t->projs.projects[p];
            if (!pj->domain || strcmp(pj->domain, dn) != 0)
                continue;
            long pi = (long)t->n;
            rc = push(t, SKV_SCHED_SCOPE_PROJECT, pj->name, di, err);
            for (size_t u = 0; !rc && u < t->users.n_users; u++)
                if (member(&t->users.users[u], pj->name))
                    rc = push(t, SKV_SCHED_SCOPE_USER,
                              t->users.users[u].name, pi, err);
        }
    }
    return rc;
}

static const skv_proto_quota *quota_of(const skv_proto_admin_quota_reply *q,
                                       const tnode *x)
{
    for (size_t i = 0; i < q->n_quotas; i++)
        if (strcmp(q->quotas[i].scope, scope_names[x->scope]) == 0 &&
            strcmp(q->quotas[i].owner, x->name) == 0)
            return &q->quotas[i];
    return NULL;
}

static skv_qty get(const skv_slots *v, const char *name)
{
    skv_qty q = 0;
    return v && skv_slots_lookup(v, name, NULL, &q) == 0 ? q : 0;
}

/* out[k] = max(0, a[k] - b[k]) over the keys of a (zeros left out). */
static int excess(skv_slots **out, const skv_slots *a, const skv_slots *b,
                  skv_error *err)
{
    int rc = skv_slots_new(out, err);
    size_t n = a ? skv_slots_count(a) : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *name;
        skv_slot_kind kind;
        skv_qty q;
        skv_slots_at(a, i, &name, &kind, &q);
        skv_qty d = q - get(b, name);
        if (q != SKV_QTY_UNLIMITED && d > 0)
            rc = skv_slots_set(*out, name, kind, d, err);
    }
    return rc;
}

/* Figures of one node: its use in the group and what it borrows. */
static int figures(skv__mgr_admin_ctx *ctx, tnode *x, const char *group,
                   const skv_proto_admin_quota_reply *qs, skv_error *err)
{
    x->q = quota_of(qs, x);
    int rc = skv_sched_quota_usage(&x->used, ctx->sched, x->scope, x->name,
                                   group, err);
    if (!rc)
        rc = excess(&x->borrowed, x->used, x->q ? x->q->guaranteed : NULL,
                    err);
    if (!rc)
        rc = skv_slots_new(&x->lent, err);
    x->keep = x->q || !skv_slots_is_zero(x->used);
    return rc;
}

/* The siblings under parent: their borrowing is taken from the idle
 * guarantees of the others, lender by lender in name order. */
static int lend(tree *t, long parent, skv_error *err)
{
    skv_slots *pool = NULL;
    int rc = skv_slots_new(&pool, err);
    for (size_t i = 0; !rc && i < t->n; i++)
        if (t->v[i].parent == parent)
            rc = skv_slots_add(pool, t->v[i].borrowed, err);
    for (size_t i = 0; !rc && i < t->n; i++) {
        tnode *x = &t->v[i];
        if (x->parent != parent || !x->q || !x->q->guaranteed)
            continue;
        skv_slots *idle = NULL;
        rc = excess(&idle, x->q->guaranteed, x->used, err);
        size_t n = idle ? skv_slots_count(idle) : 0;
        for (size_t k = 0; !rc && k < n; k++) {
            const char *name;
            skv_slot_kind kind;
            skv_qty q;
            skv_slots_at(idle, k, &name, &kind, &q);
            skv_qty have = get(pool, name), give = have < q ? have : q;
            if (give > 0 && !(rc = skv_slots_set(x->lent, name, kind, give,
                                                 err)))
                rc = skv_slots_set(pool, name, kind, have - give, err);
        }
        skv_slots_free(idle);
    }
    skv_slots_free(pool);
    return rc;
}

static int emit(skv_proto_admin_quota_tree_reply *rp, const tnode *x,
                const tree *t, const char *group, skv_error *err)
{
    skv_proto_quota_node *v = skv__realloc(rp->nodes, (rp->n_nodes + 1) *
                                           sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    rp->nodes = v;
    skv_proto_quota_node *o = &v[rp->n_nodes++];
    memset(o, 0, sizeof *o);
    const skv_proto_quota *q = x->q;
    int rc = 0;
    if (!(o->resource_group = skv__strdup(group)) ||
        !(o->scope = skv__strdup(scope_names[x->scope])) ||
        !(o->name = skv__strdup(x->name)) ||
        (x->parent >= 0 && !(o->parent = skv__strdup(t->v[x->parent].name))))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (q && q->guaranteed)
        rc = skv_slots_dup(&o->guaranteed, q->guaranteed, err);
    if (!rc && q && q->limit)
        rc = skv_slots_dup(&o->limit, q->limit, err);
    if (!rc && q && q->borrow_limit)
        rc = skv_slots_dup(&o->borrow_limit, q->borrow_limit, err);
    if (!rc)
        rc = skv_slots_dup(&o->used, x->used, err);
    if (!rc)
        rc = skv_slots_dup(&o->borrowed, x->borrowed, err);
    if (!rc)
        rc = skv_slots_dup(&o->lent, x->lent, err);
    return rc;
}

static void nodes_clear(tree *t)
{
    for (size_t i = 0; i < t->n; i++) {
        skv_slots_free(t->v[i].used);
        skv_slots_free(t->v[i].borrowed);
        skv_slots_free(t->v[i].lent);
        t->v[i].used = t->v[i].borrowed = t->v[i].lent = NULL;
        t->v[i].keep = false;
    }
}

static int one_group(skv__mgr_admin_ctx *ctx, tree *t, const char *group,
                     skv_proto_admin_quota_tree_reply *rp, skv_error *err)
{
    skv_proto_admin_quota_reply qs = {0};
    int rc = skv__mgr_store_admin_quota_read(ctx->db, &qs, NULL, NULL, group,
                                             err);
    for (size_t i = 0; !rc && i < t->n; i++)
        rc = figures(ctx, &t->v[i], group, &qs, err);
    /* children come after their parent: keep ancestors bottom up */
    for (size_t i = t->n; !rc && i-- > 0;)
        if (t->v[i].keep && t->v[i].parent >= 0)
            t->v[t->v[i].parent].keep = true;
    if (!rc)
        rc = lend(t, -1, err);
    for (size_t i = 0; !rc && i < t->n; i++)
        if (t->v[i].scope != SKV_SCHED_SCOPE_USER)
            rc = lend(t, (long)i, err);
    for (size_t i = 0; !rc && i < t->n; i++)
        if (t->v[i].keep)
            rc = emit(rp, &t->v[i], t, group, err);
    nodes_clear(t);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &qs);
    return rc;
}

static int load(skv__mgr_admin_ctx *ctx, tree *t, skv_error *err)
{
    int rc = skv__mgr_store_admin_domain_read(ctx->db, &t->doms, NULL, err);
    if (!rc)
        rc = skv__mgr_store_admin_project_read(ctx->db, &t->projs, NULL, NULL,
                                               err);
    if (!rc)
        rc = skv__mgr_store_admin_user_read(ctx->db, &t->users, NULL, NULL,
                                            err);
    return rc ? rc : shape(t, err);
}

int skv__mgr_admin_on_quota_tree(skv__mgr_admin_ctx *ctx,
                                 const skv_proto_admin_quota_tree *rq,
                                 skv_proto_admin_quota_tree_reply *rp,
                                 skv_error *err)
{
    const char *only = rq->resource_group && rq->resource_group[0]
                           ? rq->resource_group : NULL;
    char **groups = NULL;
    size_t ng = 0;
    int rc = only ? skv__mgr_admin_need(ctx, SKV__MGR_STORE_ADMIN_GROUPS,
                                        "resource group", only, err)
                  : skv__mgr_store_admin_names(ctx->db,
                                               SKV__MGR_STORE_ADMIN_GROUPS,
                                               &groups, &ng, err);
    tree t;
    memset(&t, 0, sizeof t);
    if (!rc)
        rc = load(ctx, &t, err);
    for (size_t i = 0; !rc && i < (only ? 1 : ng); i++)
        rc = one_group(ctx, &t, only ? only : groups[i], rp, err);
    nodes_clear(&t);
    skv__free(t.v);
    skv_proto_body_free(SKV_PROTO_ADMIN_DOMAIN_REPLY, &t.doms);
    skv_proto_body_free(SKV_PROTO_ADMIN_PROJECT_REPLY, &t.projs);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &t.users);
    skv__mgr_store_admin_strv_free(groups, ng);
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, rp);
    return rc;
}
