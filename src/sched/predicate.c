/* Pass predicates: start time, dependencies (static within a pass) and
 * quota / concurrency / borrowing limits (re-checked per session, since
 * placements earlier in the pass change them).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "pass_int.h"

static void set(skv__session *x, skv_sched_reason_code c, int64_t now,
                const char *detail)
{
    skv__sched_reason_reset(&x->reason);
    x->reason.code = c;
    x->reason.evaluated_ms = now;
    x->reason.detail = detail;
}

bool skv__pass_static_ok(skv__pass *P, skv__session *x);
bool skv__pass_static_ok(skv__pass *P, skv__session *x)
{
    if (x->not_before > P->now) {
        set(x, SKV_SCHED_REASON_NOT_BEFORE, P->now, NULL);
        return false;
    }
    for (size_t i = 0; i < x->ndeps; i++) {
        uint32_t di = skv__hmap_get(&P->s->sess_ix, x->deps[i]);
        if (di == SKV__NONE) {
            set(x, SKV_SCHED_REASON_DEPENDENCY_UNKNOWN, P->now, x->deps[i]);
            return false;
        }
        skv_sched_state st = P->s->sess[di]->state;
        if (st == SKV_SCHED_FINISHED)
            continue;
        set(x, st > SKV_SCHED_FINISHED ? SKV_SCHED_REASON_DEPENDENCY_FAILED
                                       : SKV_SCHED_REASON_DEPENDENCY,
            P->now, x->deps[i]);
        return false;
    }
    return true;
}

static bool over_in(skv__session *x, const skv__owner *o, const skv_qty *use,
                    const skv_qty *lim, int64_t now)
{
    for (int k = 0; k < NSL; k++) {
        if (lim[k] == SKV_QTY_UNLIMITED || x->total[k] == 0)
            continue;
        skv_qty after = use[k] + x->total[k];
        if (after > lim[k]) {
            set(x, SKV_SCHED_REASON_QUOTA, now, o->name);
            x->reason.scope = o->scope;
            x->reason.slot = (uint8_t)k;
            x->reason.shortfall = after - lim[k];
            return true;
        }
    }
    return false;
}

static bool over(skv__session *x, const skv__owner *o, const skv_qty *lim,
                 int64_t now)
{
    return over_in(x, o, o->usage, lim, now);
}

/* The owner's quota in the session's group: its hard limit, and
 * guaranteed + borrow_limit as a ceiling (quota.c). */
static bool group_over(skv__session *x, const skv__owner *o,
                       const skv__gquota *q, int64_t now)
{
    if (!q->has_quota)
        return false;
    if (over_in(x, o, q->usage, q->limit, now))
        return true;
    skv_qty ceil[NSL];
    for (int k = 0; k < NSL; k++)
        ceil[k] = q->borrow[k] == SKV_QTY_UNLIMITED
                      ? SKV_QTY_UNLIMITED
                      : q->guaranteed[k] + q->borrow[k];
    return over_in(x, o, q->usage, ceil, now);
}

bool skv__pass_quota_ok(skv__pass *P, skv__session *x);
bool skv__pass_quota_ok(skv__pass *P, skv__session *x)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        const skv__owner *o = P->s->owners[x->owner[sc]];
        if (group_over(x, o, &o->gq[x->gq[sc]], P->now))
            return false;
        if (!o->has_policy)
            continue;
        if (o->max_concurrent && o->n_active >= o->max_concurrent) {
            set(x, SKV_SCHED_REASON_CONCURRENCY, P->now, o->name);
            x->reason.scope = o->scope;
            return false;
        }
        if (over(x, o, o->limit, P->now))
            return false;
        if (o->has_guarantee) {
            /* hierarchical queue: guaranteed + borrow_limit is a ceiling */
            skv_qty ceil[NSL];
            for (int k = 0; k < NSL; k++)
                ceil[k] = o->borrow[k] == SKV_QTY_UNLIMITED
                              ? SKV_QTY_UNLIMITED
                              : o->guaranteed[k] + o->borrow[k];
            if (over(x, o, ceil, P->now))
                return false;
        }
    }
    return true;
}
