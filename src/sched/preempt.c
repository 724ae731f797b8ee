/* Gang-aware preemption: choose whole victim sessions (lower priority, or
 * borrowing beyond their owner's guarantee while the waiter's owner is
 * under its own), preemptible and past the minimum runtime, so that the
 * waiting session fits; fewest victims and least lost work first. The maps
 * are changed only temporarily and restored exactly.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_int.h"

typedef struct cand {
    uint32_t sess;
    int32_t prio;
    skv_sched_preempt_cause cause;
    int64_t lost;      /* runtime so far: the work a kill throws away */
    skv_qty size;      /* sum of its request, a tie-break */
    uint64_t seq;
} cand;

/* Smaller first, then the later submitted: the order is total, so the
 * choice is the same for the same input. */
static int cmp_tail(const cand *a, const cand *b)
{
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return a->seq > b->seq ? -1 : (a->seq < b->seq);
}

/* lowest-priority: the lowest priority, then the least work lost. */
static int cmp_by_priority(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    if (a->lost != b->lost)
        return a->lost < b->lost ? -1 : 1;
    return cmp_tail(a, b);
}

/* newest: the least work lost, then the lowest priority. */
static int cmp_by_newest(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->lost != b->lost)
        return a->lost < b->lost ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    return cmp_tail(a, b);
}

static bool under_guarantee(const skv__owner *o, const skv_qty *add)
{
    if (!o->has_guarantee)
        return false;
    for (int k = 0; k < NSL; k++)
        if (add[k] > 0 && o->usage[k] + add[k] > o->guaranteed[k])
            return false;
    return true;
}

static bool borrowing(const skv__owner *o)
{
    for (int k = 0; k < NSL; k++)
        if (o->usage[k] > (o->has_guarantee ? o->guaranteed[k] : 0))
            return true;
    return false;
}

/* Quota tree (quota.c): the waiter's owner stays within its guarantee of
 * every guaranteed slot it asks for, and asks for at least one. */
static bool gq_under(const skv__gquota *q, const skv_qty *add)
{
    if (!q->has_guarantee)
        return false;
    bool asks = false;
    for (int k = 0; k < NSL; k++) {
        if (!(q->gmask >> k & 1u) || add[k] <= 0)
            continue;
        if (q->usage[k] + add[k] > q->guaranteed[k])
            return false;
        asks = true;
    }
    return asks;
}

/* The slots that kept the waiter out (its resource reason, computed just
 * before preemption), or every slot when the reason does not list them. */
static uint32_t short_mask(const skv__session *x)
{
    uint32_t m = 0;
    if (x->reason.code == SKV_SCHED_REASON_RESOURCES && !x->reason.deferred)
        for (int i = 0; i < x->reason.nshort; i++)
            m |= 1u << x->reason.short_slot[i];
    return m ? m : UINT32_MAX;
}

/* The victim holds a slot the waiter is guaranteed and short of, and its
 * owner uses more of it than its own guarantee (none: 0): it borrows that
 * slot. */
static bool gq_borrows(const skv__gquota *qv, const skv__gquota *qx,
                       const skv__session *x, const skv_qty *held)
{
    uint32_t mask = qx->gmask & short_mask(x);
    for (int k = 0; k < NSL; k++) {
        if (!(mask >> k & 1u) || x->total[k] <= 0 || held[k] <= 0)
            continue;
        skv_qty own = qv->gmask >> k & 1u ? qv->guaranteed[k] : 0;
        if (qv->usage[k] > own)
            return true;
    }
    return false;
}

/* Guarantees are shares among siblings: compare the two sessions' owners
 * at the first scope (domain, project, user) where they differ. */
static bool tree_reclaimable(const skv_sched *s, const skv__session *x,
                             const skv__session *v)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        if (x->owner[sc] == v->owner[sc])
            continue;
        const skv__gquota *qx = &s->owners[x->owner[sc]]->gq[x->gq[sc]];
        const skv__gquota *qv = &s->owners[v->owner[sc]]->gq[v->gq[sc]];
        return gq_under(qx, x->total) && gq_borrows(qv, qx, x, v->total);
    }
    return false;
}

static bool reclaimable(const skv_sched *s, const skv__session *x,
                        const skv__session *v)
{
    if (tree_reclaimable(s, x, v))
        return true;
    static const skv_sched_scope scopes[] = {SKV_SCHED_SCOPE_PROJECT,
                                             SKV_SCHED_SCOPE_DOMAIN};
    for (size_t i = 0; i < 2; i++) {
        const skv__owner *ox = s->owners[x->owner[scopes[i]]];
        const skv__owner *ov = s->owners[v->owner[scopes[i]]];
        if (ox != ov && under_guarantee(ox, x->total) && borrowing(ov))
            return true;
    }
    return false;
}

static bool eligible(skv__pass *P, const skv__session *x, const skv__session *v,
                     int32_t aged, cand *c)
{
    if (v->state != SKV_SCHED_RUNNING || !v->preemptible || v->preempt_marked ||
        P->now - v->started < P->g->min_runtime_ms)
        return false;
    if (v->priority < aged)
        c->cause = SKV_SCHED_PREEMPT_PRIORITY;
    else if (reclaimable(P->s, x, v))
        c->cause = SKV_SCHED_PREEMPT_RECLAIM;
    else
        return false;
    c->prio = v->priority;
    c->lost = P->now - v->started;
    c->size = 0;
    for (int k = 0; k < NSL; k++)
        c->size += v->total[k] / (P->s->cap_total[k] > 0 && P->s->cap_total[k] !=
                                  SKV_QTY_UNLIMITED ? (P->s->cap_total[k] / 1000 + 1) : 1);
    c->seq = v->seq;
    return true;
}

static int collect(skv__pass *P, uint32_t si, cand **out, uint32_t *n)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    int32_t aged = skv__pass_aged(P->g, x, P->now);
    uint32_t cap = 0, len = 0;
    cand *v = NULL;
    s->stamp++;
    for (uint32_t i = 0; i < P->g->nagents; i++) {
        const skv__agent *a = s->agents[P->g->agents[i]];
        for (uint32_t j = 0; j < a->nallocs; j++) {
            uint32_t vi = a->allocs[j].sess;
            skv__session *w = s->sess[vi];
            if (w->mark == s->stamp)
                continue;
            w->mark = s->stamp;
            cand c;
            if (!eligible(P, x, w, aged, &c))
                continue;
            c.sess = vi;
            if (skv__sched_push((void **)&v, &len, &cap, sizeof(c), &c, NULL)) {
                skv__free(v);
                return SKV_ENOMEM;
            }
        }
    }
    if (len)
        qsort(v, len, sizeof(*v),
              P->g->preempt_order == SKV_SCHED_PREEMPT_ORDER_NEWEST
                  ? cmp_by_newest : cmp_by_priority);
    *out = v;
    *n = len;
    return 0;
}

static void victim_maps(skv_sched *s, uint32_t vi, bool release)
{
    skv__session *v = s->sess[vi];
    for (uint32_t k = 0; k < v->nk; k++) {
        skv__kalloc *ka = &v->k[k].a;
        skv__agent *a = s->agents[ka->agent];
        if (release)
            skv__sched_agent_release(s, a, v->k[k].req, ka->dev, ka->ndev);
        else
            skv__sched_agent_apply(s, a, v->k[k].req, ka->dev, ka->ndev);
    }
}

/* Does the waiter fit now? (trial only) */
static int fits(skv__pass *P, uint32_t si)
{
    skv__miss m;
    bool saved = P->trial_only;
    P->trial_only = true; /* the victims are only gone from the mirror */
    int rc = skv__pass_place(P, si, &m);
    P->trial_only = saved;
    if (rc == 0) {
        skv__pass_unplace(P, si);
        return 1;
    }
    return rc == SKV_ENOSPC ? 0 : rc;
}

/* Greedy in candidate order until the waiter fits, then drop every victim
 * the waiter can do without (latest first). Returns the count kept in
 * c[0..], or 0 when no set works; maps are restored either way. */
static int choose(skv__pass *P, uint32_t si, cand *c, uint32_t n)
{
    uint32_t used = 0;
    int f = 0;
    while (used < n && f == 0) {
        victim_maps(P->s, c[used++].sess, true);
        f = fits(P, si);
    }
    if (f != 1) {
        while (used)
            victim_maps(P->s, c[--used].sess, false);
        return f < 0 ? f : 0;
    }
    uint32_t kept = 0;
    for (uint32_t i = used; i-- > 0;) {
        victim_maps(P->s, c[i].sess, false);
        f = fits(P, si);
        if (f == 1) {
            c[i].sess = SKV__NONE; /* not needed */
            continue;
        }
        victim_maps(P->s, c[i].sess, true);
        if (f < 0)
            break;
    }
    for (uint32_t i = 0; i < used; i++)
        if (c[i].sess != SKV__NONE) {
            victim_maps(P->s, c[i].sess, false);
            c[kept++] = c[i];
        }
    return f < 0 ? f : (int)kept;
}

static bool on_agent(const skv__session *v, uint32_t ai)
{
    for (uint32_t k = 0; k < v->nk; k++)
        if (v->k[k].a.agent == ai)
            return true;
    return false;
}

static int64_t lost_sum(const cand *c, int n)
{
    int64_t t = 0;
    for (int i = 0; i < n; i++)
        t += c[i].lost;
    return t;
}

static int32_t prio_max(const cand *c, int n)
{
    int32_t m = c[0].prio;
    for (int i = 1; i < n; i++)
        m = c[i].prio > m ? c[i].prio : m;
    return m;
}

/* Whether plan a (na victims) beats plan b (nb): fewer victims; then,
 * under lowest-priority, a lower highest victim priority; then less work
 * lost. */
static bool better_plan(const skv__pass *P, const cand *a, int na,
                        const cand *b, int nb)
{
    if (nb == 0 || na != nb)
        return nb == 0 || na < nb;
    if (P->g->preempt_order == SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY &&
        prio_max(a, na) != prio_max(b, nb))
        return prio_max(a, na) < prio_max(b, nb);
    return lost_sum(a, na) < lost_sum(b, nb);
}

/* Plan per agent (the waiter lands on one agent): victims among the
 * sessions there only, keeping the best plan (better_plan). The global
 * plan covers gangs spread over agents. */
static int plan(skv__pass *P, uint32_t si, cand *c, uint32_t n, cand *best)
{
    const skv__session *x = P->s->sess[si];
    int nbest = 0;
    if (x->nk == 1 || x->mode == SKV_SCHED_SINGLE_NODE) {
        cand *sub = best + n;
        for (uint32_t i = 0; i < P->g->nagents; i++) {
            uint32_t ai = P->g->agents[i];
            if (!skv__pass_agent_ok(x, P->s->agents[ai]))
                continue;
            uint32_t m = 0;
            for (uint32_t j = 0; j < n; j++)
                if (on_agent(P->s->sess[c[j].sess], ai))
                    sub[m++] = c[j];
            int k = m ? choose(P, si, sub, m) : 0;
            if (k < 0)
                return k;
            if (k > 0 && better_plan(P, sub, k, best, nbest)) {
                memcpy(best, sub, (size_t)k * sizeof(*sub));
                nbest = k;
            }
        }
    }
    if (nbest == 0) {
        nbest = choose(P, si, c, n);
        if (nbest > 0)
            memcpy(best, c, (size_t)nbest * sizeof(*c));
    }
    return nbest;
}

int skv__pass_preempt(skv__pass *P, uint32_t si, skv_error *err)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    if (x->waiting_victims) {
        skv__sched_reason_reset(&x->reason);
        x->reason.code = SKV_SCHED_REASON_PREEMPTING;
        x->reason.evaluated_ms = P->now;
        return 1;
    }
    cand *c;
    uint32_t n;
    if (collect(P, si, &c, &n))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    cand *best = n ? skv__calloc(2 * (size_t)n, sizeof(*best)) : NULL;
    if (n && !best) {
        skv__free(c);
        return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    bool saved = P->ignore_resv;
    P->ignore_resv = true;
    int kept = n ? plan(P, si, c, n, best) : 0;
    P->ignore_resv = saved;
    skv__free(c);
    c = best;
    int rc = kept < 0 ? kept : 0;
    for (int i = 0; !rc && i < kept; i++)
        rc = skv__rb_add_preemption(P->rb, s, c[i].sess, si, c[i].cause, err);
    for (int i = 0; !rc && i < kept; i++) {
        skv__session *v = s->sess[c[i].sess];
        v->preempt_marked = true;
        v->victim_for = si;
        v->victim_for_seq = x->seq;
        x->waiting_victims++;
    }
    skv__free(c);
    if (rc)
        return rc == SKV_ENOMEM ? skv__err(err, rc, "out of memory") : rc;
    if (kept > 0) {
        x->preemptor = true;
        skv__sched_reason_reset(&x->reason);
        x->reason.code = SKV_SCHED_REASON_PREEMPTING;
        x->reason.evaluated_ms = P->now;
        return 1;
    }
    return 0;
}
