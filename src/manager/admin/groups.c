/* admin.resource_group: rows in resource_groups, groups in the scheduler.
 * The scheduler has no way to change a group's sequencer in place, so a
 * new scheduler needs an empty group (removed and added again); the agent
 * selector changes in place.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"
#include "../store/ops.h"

#define DEFAULT_SELECTOR SKV_SCHED_SELECTOR_AUTO

typedef struct gchange {
    const skv_proto_resource_group *g;
    uint32_t op;
    char old_sched[SKV__ADM_NAME_MAX];   /* UPDATE/DELETE: as stored */
    char old_sel[SKV__ADM_NAME_MAX];
    const char *new_sched;               /* CREATE/UPDATE */
    const char *new_sel;
    char *types;                         /* "a,b" to store; NULL: keep */
    skv__mgr_store_preempt old_p, new_p; /* preemption before and after */
    skv__mgr_store_gops old_o, new_o;    /* operations policy (group_ops.c) */
    skv__mgr_store_glimits new_l;        /* idle/lifetime; < 0: keep */
    skv_proto_admin_resource_group_reply *rp;
} gchange;

static int write_group(skv__mgr_admin_ctx *ctx, const gchange *c,
                       skv_error *err)
{
    const skv_proto_resource_group *g = c->g;
    skv__mgr_store_admin_group row = {
        g->name, g->description, c->new_sched, c->new_sel,
        g->lost_batch_policy, g->pending_timeout_ms, c->types, g->active};
    return c->op == SKV_PROTO_ADMIN_CREATE
               ? skv__mgr_admin_group_insert(ctx, &row, err)
               : skv__mgr_store_admin_group_update(ctx->db, &row, err);
}

static int apply(skv__mgr_admin_ctx *ctx, void *arg, skv_error *err)
{
    gchange *c = arg;
    const char *n = c->g->name;
    int rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE) {
        rc = skv__mgr_store_admin_group_read(ctx->db, c->rp, n, err);
        if (!rc)
            rc = skv__mgr_admin_gops_fill(ctx->db, c->rp, err);
        if (!rc)
            rc = skv__mgr_store_group_ops_delete(ctx->db, n, err);
        return rc ? rc : skv__mgr_store_admin_group_delete(ctx->db, n, err);
    }
    rc = write_group(ctx, c, err);
    if (!rc)
        rc = skv__mgr_store_admin_group_preempt_set(ctx->db, n, &c->new_p,
                                                    err);
    if (!rc)
        rc = skv__mgr_store_group_ops_set(ctx->db, n, &c->new_o, err);
    if (!rc)
        rc = skv__mgr_store_admin_group_limits_set(ctx->db, n, &c->new_l,
                                                   err);
    if (!rc)
        rc = skv__mgr_store_admin_group_read(ctx->db, c->rp, n, err);
    return rc ? rc : skv__mgr_admin_gops_fill(ctx->db, c->rp, err);
}

static int busy(int rc, const char *name, const char *what, skv_error *err)
{
    if (rc == SKV_EBUSY)
        return skv__err(err, SKV_EBUSY, "resource group '%s' still has agents"
                        " or sessions: cannot %s it", name, what);
    return rc;
}

static int mirror_sched(skv__mgr_admin_ctx *ctx, gchange *c, bool undo,
                        skv_error *err);

/* The scheduler's group, then its preemption settings (which a group
 * added again by mirror_sched starts without). */
static int mirror(skv__mgr_admin_ctx *ctx, void *arg, bool undo,
                  skv_error *err)
{
    gchange *c = arg;
    int rc = mirror_sched(ctx, c, undo, err);
    const skv__mgr_store_preempt *p = undo ? &c->old_p : &c->new_p;
    bool gone = c->op == SKV_PROTO_ADMIN_DELETE ? !undo
                                                : c->op == SKV_PROTO_ADMIN_CREATE
                                                      && undo;
    if (rc || gone)
        return rc;
    return skv__mgr_admin_preempt_mirror(ctx, c->g->name, p, err);
}

static int mirror_sched(skv__mgr_admin_ctx *ctx, gchange *c, bool undo,
                        skv_error *err)
{
    const char *n = c->g->name;
    int rc;
    switch (c->op) {
    case SKV_PROTO_ADMIN_CREATE:
        if (undo)
            return skv_sched_group_remove(ctx->sched, n, err);
        return skv__mgr_admin_sched_group_add(ctx, n, c->new_sched,
                                              c->new_sel, err);
    case SKV_PROTO_ADMIN_DELETE:
        if (undo)
            return skv__mgr_admin_sched_group_add(ctx, n, c->old_sched,
                                                  c->old_sel, err);
        return busy(skv_sched_group_remove(ctx->sched, n, err), n, "delete",
                    err);
    default:
        if (strcmp(c->old_sched, c->new_sched) == 0)
            return strcmp(c->old_sel, c->new_sel) == 0
                       ? 0
                       : skv_sched_group_set_selector(ctx->sched, n, undo
                                                      ? c->old_sel
                                                      : c->new_sel, NULL,
                                                      err);
        rc = skv_sched_group_remove(ctx->sched, n, err);
        if (undo && rc && rc != SKV_ENOENT)
            return rc;
        if (!undo && rc)
            return busy(rc, n, "change the scheduler of", err);
        return skv__mgr_admin_sched_group_add(ctx, n, undo ? c->old_sched
                                              : c->new_sched, undo
                                              ? c->old_sel : c->new_sel, err);
    }
}

static int check_fields(const skv_proto_resource_group *g, skv_error *err)
{
    int rc = skv__mgr_admin_text_check("description", g->description, err);
    if (!rc)
        rc = skv__mgr_admin_opt_name_check("scheduler", g->scheduler, err);
    if (!rc)
        rc = skv__mgr_admin_opt_name_check("selector", g->selector, err);
    const char *lp = g->lost_batch_policy;
    if (!rc && lp && strcmp(lp, "requeue") != 0 && strcmp(lp, "fail") != 0)
        rc = skv__err(err, SKV_EINVAL, "lost_batch_policy '%s' is not "
                      "'requeue' or 'fail'", lp);
    const char *pe = g->preemption, *pm = g->preempt_mode;
    if (!rc && pe && strcmp(pe, "on") != 0 && strcmp(pe, "off") != 0)
        rc = skv__err(err, SKV_EINVAL, "preemption '%s' is not 'on' or 'off'",
                      pe);
    if (!rc && pm && strcmp(pm, "requeue") != 0 && strcmp(pm, "terminate"))
        rc = skv__err(err, SKV_EINVAL, "preempt_mode '%s' is not 'requeue' or "
                      "'terminate'", pm);
    const char *po = g->preempt_order;
    if (!rc && po && skv__mgr_admin_preempt_order(po) < 0)
        rc = skv__err(err, SKV_EINVAL, "preempt_order '%s' is not "
                      "'lowest-priority' or 'newest'", po);
    if (!rc && g->pending_timeout_ms > (uint64_t)INT64_MAX)
        rc = skv__err(err, SKV_ERANGE, "pending_timeout_ms too large");
    for (size_t i = 0; !rc && i < g->n_session_types; i++) {
        const char *t = g->session_types[i];
        if (!t || (strcmp(t, "interactive") != 0 && strcmp(t, "batch") != 0 &&
                   strcmp(t, "inference") != 0))
            rc = skv__err(err, SKV_EINVAL, "session type '%s' is not "
                          "interactive, batch or inference", t ? t : "");
    }
    if (rc)
        skv__err_prefix(err, "resource group '%s'", g->name);
    return rc;
}

/* The stored scheduler and selector: 1 when the group exists. */
static int old_row(skv__mgr_admin_ctx *ctx, gchange *c, skv_error *err)
{
    int rc = skv__mgr_store_admin_group_sched(ctx->db, c->g->name,
                                              c->old_sched,
                                              sizeof c->old_sched, c->old_sel,
                                              sizeof c->old_sel, err);
    if (rc > 0 && !c->old_sched[0])
        snprintf(c->old_sched, sizeof c->old_sched, "fifo");
    if (rc > 0 && !c->old_sel[0])
        snprintf(c->old_sel, sizeof c->old_sel, "%s", DEFAULT_SELECTOR);
    return rc;
}

/* The settings after the change: the request's, else the stored ones
 * (create: off, 0, requeue). */
static void merge_preempt(gchange *c)
{
    const skv_proto_resource_group *g = c->g;
    skv__mgr_store_preempt p = {0, 0, "requeue", "lowest-priority"};
    if (c->op != SKV_PROTO_ADMIN_CREATE)
        p = c->old_p;
    if (g->preemption)
        p.on = strcmp(g->preemption, "on") == 0;
    if (g->preempt_min_runtime_ms)
        p.min_runtime_ms = g->preempt_min_runtime_ms < 0
                               ? 0 : g->preempt_min_runtime_ms;
    if (g->preempt_mode)
        snprintf(p.mode, sizeof p.mode, "%s", g->preempt_mode);
    if (g->preempt_order)
        snprintf(p.order, sizeof p.order, "%s", g->preempt_order);
    c->new_p = p;
}

/* A limit of the request as a column change: 0 on the wire keeps the
 * stored value (create: none), < 0 sets none, > 0 sets it; -1: keep. */
static int64_t limit_change(int64_t v, uint32_t op)
{
    if (v > 0)
        return v;
    return v < 0 || op == SKV_PROTO_ADMIN_CREATE ? 0 : -1;
}

static int prepare(skv__mgr_admin_ctx *ctx, gchange *c, skv_error *err)
{
    const skv_proto_resource_group *g = c->g;
    int rc = old_row(ctx, c, err);
    if (rc < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE && rc)
        return skv__err(err, SKV_EEXIST, "resource group '%s' exists already",
                        g->name);
    if (c->op != SKV_PROTO_ADMIN_CREATE && !rc)
        return skv__err(err, SKV_ENOENT, "resource group '%s' does not exist",
                        g->name);
    if (rc && (rc = skv__mgr_store_admin_group_preempt(ctx->db, g->name,
                                                       &c->old_p, err)) < 0)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_DELETE)
        return skv__mgr_admin_quota_busy(ctx, NULL, g->name, err);
    rc = check_fields(g, err);
    if (!rc)
        rc = skv__mgr_admin_gops_check(g, err);
    if (!rc)
        rc = skv__mgr_store_group_ops(ctx->db, g->name, &c->old_o, err);
    if (rc)
        return rc;
    if (c->op == SKV_PROTO_ADMIN_CREATE)
        skv__mgr_store_gops_default(&c->old_o);
    skv__mgr_admin_gops_merge(g, &c->old_o, &c->new_o);
    c->new_sched = g->scheduler && g->scheduler[0] ? g->scheduler
                   : c->op == SKV_PROTO_ADMIN_CREATE ? "fifo" : c->old_sched;
    c->new_sel = g->selector && g->selector[0] ? g->selector
                 : c->op == SKV_PROTO_ADMIN_CREATE ? DEFAULT_SELECTOR
                                                   : c->old_sel;
    merge_preempt(c);
    c->new_l.idle_timeout_ms = limit_change(g->idle_timeout_ms, c->op);
    c->new_l.max_lifetime_ms = limit_change(g->max_lifetime_ms, c->op);
    /* A victim is requeued in its original place: under 'fifo' it would
     * be placed again ahead of the session that evicted it, over and
     * over. Priority order puts the preemptor first. */
    if (c->new_p.on > 0 && strcmp(c->new_sched, "fifo") == 0)
        return skv__err(err, SKV_EINVAL, "resource group '%s': preemption "
                        "needs a scheduler that orders by priority (the "
                        "'fifo' scheduler orders by submission): use "
                        "--scheduler priority", g->name);
    if (c->op == SKV_PROTO_ADMIN_CREATE || g->n_session_types) {
        c->types = skv__mgr_admin_join(g->session_types, g->n_session_types);
        if (!c->types)
            return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    }
    return 0;
}

int skv__mgr_admin_on_group(skv__mgr_admin_ctx *ctx,
                            const skv_proto_admin_resource_group *rq,
                            skv_proto_admin_resource_group_reply *rp,
                            skv_error *err)
{
    int rc = skv__mgr_admin_op_check(rq->op, "resource_group", err);
    if (rc)
        return rc;
    if (rq->op == SKV_PROTO_ADMIN_LIST) {
        rc = skv__mgr_store_admin_group_read(ctx->db, rp, rq->group.name,
                                             err);
        if (!rc)
            rc = skv__mgr_admin_gops_fill(ctx->db, rp, err);
    } else {
        gchange c;
        memset(&c, 0, sizeof c);
        c.g = &rq->group;
        c.op = rq->op;
        c.rp = rp;
        rc = skv__mgr_admin_name_check("resource group name", rq->group.name,
                                       err);
        if (!rc)
            rc = prepare(ctx, &c, err);
        if (!rc)
            rc = skv__mgr_admin_run(ctx, apply, mirror, &c, err);
        skv__free(c.types);
    }
    if (rc)
        skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, rp);
    return rc;
}
