/* Gang-aware preemption: choose whole victim sessions (lower priority, or
 * borrowing beyond their owner's guarantee while the waiter's owner is
 * under its own), preemptible and past the minimum runtime, so that the
 * waiting session fits; fewest victims and least lost work first. The maps
 * are changed only temporarily and restored exactly.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_int.h"
#include "selector_frag.h"

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

/* The group's RUNNING preemptible sessions, once per group and pass: no
 * session starts running inside a pass (placed ones are SCHEDULED), and
 * victims marked meanwhile are filtered by eligible(), so the list stays
 * exact for the whole pass. Without it every waiter that does not fit
 * walked every agent's allocations: a pass over 100k pending sessions
 * on 10,000 agents took 30 s with nothing running at all. */
static int running_list(skv__pass *P)
{
    skv_sched *s = P->s;
    uint32_t cap = 0;
    P->running_built = true;
    s->stamp++;
    for (uint32_t i = 0; i < P->g->nagents; i++) {
        const skv__agent *a = s->agents[P->g->agents[i]];
        for (uint32_t j = 0; j < a->nallocs; j++) {
            uint32_t vi = a->allocs[j].sess;
            skv__session *w = s->sess[vi];
            if (w->mark == s->stamp)
                continue;
            w->mark = s->stamp;
            if (w->state != SKV_SCHED_RUNNING || !w->preemptible)
                continue;
            if (skv__sched_push((void **)&P->running, &P->nrunning, &cap,
                                sizeof(vi), &vi, NULL)) {
                skv__free(P->running);
                P->running = NULL;
                P->nrunning = 0;
                P->running_built = false;
                return SKV_ENOMEM;
            }
        }
    }
    return 0;
}

/* The candidates in a total order (cmp_tail ends at the unique submit
 * sequence), so the order they are gathered in does not matter. */
static int collect(skv__pass *P, uint32_t si, cand **out, uint32_t *n)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    int32_t aged = skv__pass_aged(P->g, x, P->now);
    uint32_t cap = 0, len = 0;
    cand *v = NULL;
    if (!P->running_built && running_list(P))
        return SKV_ENOMEM;
    for (uint32_t i = 0; i < P->nrunning; i++) {
        uint32_t vi = P->running[i];
        cand c;
        if (!eligible(P, x, s->sess[vi], aged, &c))
            continue;
        c.sess = vi;
        if (skv__sched_push((void **)&v, &len, &cap, sizeof(c), &c, NULL)) {
            skv__free(v);
            return SKV_ENOMEM;
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

bool skv__preempt_reference = false;

/* Whether the waiter fits on one of the group's agents victim vi holds. */
static bool fits_victim(skv__pass *P, uint32_t si, uint32_t vi)
{
    const skv__session *v = P->s->sess[vi];
    for (uint32_t k = 0; k < v->nk; k++) {
        uint32_t ai = v->k[k].a.agent;
        if (ai != SKV__NONE && P->s->groups[P->s->agents[ai]->group] == P->g &&
            skv__pass_fits_on(P, si, ai))
            return 1;
    }
    return 0;
}

/* fits() for a waiter that fits no agent without victims (plan checked
 * it) and lands on one agent: only agents whose victims are released
 * changed, so the whole-group trial can only succeed on one of them. The
 * agents of c[from..to) are tried (dropped victims are SKV__NONE). */
static int fits_local(skv__pass *P, uint32_t si, const cand *c, uint32_t from,
                      uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        if (c[i].sess != SKV__NONE && fits_victim(P, si, c[i].sess))
            return 1;
    return 0;
}

/* Greedy in candidate order until the waiter fits, then drop every victim
 * the waiter can do without (latest first). Returns the count kept in
 * c[0..], or 0 when no set works; maps are restored either way. local:
 * fit checks on the victims' agents only (fits_local's condition holds);
 * the greedy step then needs only the agents of the victim just released,
 * since the others were tried with the same state before. */
static int choose(skv__pass *P, uint32_t si, cand *c, uint32_t n, bool local)
{
    uint32_t used = 0;
    int f = 0;
    while (used < n && f == 0) {
        victim_maps(P->s, c[used++].sess, true);
        f = local ? fits_local(P, si, c, used - 1, used) : fits(P, si);
    }
    if (f != 1) {
        while (used)
            victim_maps(P->s, c[--used].sess, false);
        return f < 0 ? f : 0;
    }
    uint32_t kept = 0;
    for (uint32_t i = used; i-- > 0;) {
        victim_maps(P->s, c[i].sess, false);
        f = local ? fits_local(P, si, c, 0, used) : fits(P, si);
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

/* One agent's plan: victims among sub[0..m) (candidates on the agent, in
 * candidate order), kept in best when better. */
static int plan_one(skv__pass *P, uint32_t si, cand *sub, uint32_t m,
                    cand *best, int *nbest, bool local)
{
    int k = m ? choose(P, si, sub, m, local) : 0;
    if (k > 0 && better_plan(P, sub, k, best, *nbest)) {
        memcpy(best, sub, (size_t)k * sizeof(*sub));
        *nbest = k;
    }
    return k < 0 ? k : 0;
}

/* The reference: each agent's candidates found by asking every candidate
 * whether it runs there (agents x candidates), fits() a whole-group trial. */
static int plan_agents_scan(skv__pass *P, uint32_t si, cand *c, uint32_t n,
                            cand *best, int *nbest)
{
    const skv__session *x = P->s->sess[si];
    cand *sub = best + n;
    for (uint32_t i = 0; i < P->g->nagents; i++) {
        uint32_t ai = P->g->agents[i];
        if (!skv__pass_agent_ok(x, P->s->agents[ai]))
            continue;
        uint32_t m = 0;
        for (uint32_t j = 0; j < n; j++)
            if (on_agent(P->s->sess[c[j].sess], ai))
                sub[m++] = c[j];
        int rc = plan_one(P, si, sub, m, best, nbest, false);
        if (rc)
            return rc;
    }
    return 0;
}

/* The group position of the agent kernel k of v holds, or SKV__NONE when
 * it is outside the group or an earlier kernel holds the same agent. */
static uint32_t held_pos(const skv__pass *P, const skv__session *v, uint32_t k)
{
    uint32_t ai = v->k[k].a.agent;
    if (ai == SKV__NONE)
        return SKV__NONE;
    for (uint32_t j = 0; j < k; j++)
        if (v->k[j].a.agent == ai)
            return SKV__NONE;
    const skv__agent *a = P->s->agents[ai];
    return P->s->groups[a->group] == P->g ? a->gpos : SKV__NONE;
}

/* Candidate indexes grouped by the group position of each agent they hold,
 * in candidate order within an agent (a counting sort): at[pos] .. at[pos
 * + 1] in list. */
static int index_by_agent(const skv__pass *P, const cand *c, uint32_t n,
                          uint32_t **at_out, uint32_t **list_out)
{
    uint32_t na = P->g->nagents, total = 0;
    uint32_t *at = skv__calloc((size_t)na + 2, sizeof(*at));
    if (!at)
        return SKV_ENOMEM;
    for (uint32_t j = 0; j < n; j++) {
        const skv__session *v = P->s->sess[c[j].sess];
        for (uint32_t k = 0; k < v->nk; k++) {
            uint32_t pos = held_pos(P, v, k);
            if (pos != SKV__NONE) {
                at[pos + 2]++;
                total++;
            }
        }
    }
    for (uint32_t i = 2; i < na + 2; i++)
        at[i] += at[i - 1];
    uint32_t *list = skv__calloc(total ? total : 1, sizeof(*list));
    if (!list) {
        skv__free(at);
        return SKV_ENOMEM;
    }
    for (uint32_t j = 0; j < n; j++) { /* at[pos + 1]: fill cursor */
        const skv__session *v = P->s->sess[c[j].sess];
        for (uint32_t k = 0; k < v->nk; k++) {
            uint32_t pos = held_pos(P, v, k);
            if (pos != SKV__NONE)
                list[at[pos + 1]++] = j;
        }
    }
    *at_out = at;
    *list_out = list;
    return 0;
}

/* The per-agent plans from the index, each checked on its victims'
 * agents only: O(candidates) to gather, O(victims tried) per agent,
 * instead of the reference's agents x candidates and a whole-group trial
 * per step (about 1 s of CPU per preempting session on 10,000 agents). */
static int plan_agents_local(skv__pass *P, uint32_t si, cand *c, uint32_t n,
                             cand *best, int *nbest)
{
    const skv__session *x = P->s->sess[si];
    uint32_t *at, *list;
    if (index_by_agent(P, c, n, &at, &list))
        return SKV_ENOMEM;
    cand *sub = best + n;
    int rc = 0;
    for (uint32_t i = 0; !rc && i < P->g->nagents; i++) {
        if (at[i] == at[i + 1] ||
            !skv__pass_agent_ok(x, P->s->agents[P->g->agents[i]]))
            continue;
        uint32_t m = 0;
        for (uint32_t j = at[i]; j < at[i + 1]; j++)
            sub[m++] = c[list[j]];
        rc = plan_one(P, si, sub, m, best, nbest, true);
    }
    skv__free(at);
    skv__free(list);
    return rc;
}

/* Plan per agent (the waiter lands on one agent): victims among the
 * sessions there only, keeping the best plan (better_plan). The global
 * plan covers gangs spread over agents. A waiter that fits somewhere
 * without victims (only reservations kept it out) needs none: every plan
 * would drop all its victims again. */
/* frag with ties=random draws while it scores, once per agent a trial
 * scores: fewer trials would move its generator and so later choices.
 * Such a group plans the reference way. */
static bool scores_draw(const skv__group *g)
{
    return g->sel->score == skv__frag_selector_score &&
           skv__frag_selector_ties(g->sel_state) == SKV__FRAG_TIES_RANDOM;
}

static int plan(skv__pass *P, uint32_t si, cand *c, uint32_t n, cand *best)
{
    const skv__session *x = P->s->sess[si];
    int nbest = 0, rc;
    bool one = x->nk == 1 || x->mode == SKV_SCHED_SINGLE_NODE;
    bool local = one && !skv__preempt_reference && !scores_draw(P->g);
    if (local && (rc = fits(P, si)) != 0)
        return rc < 0 ? rc : 0;
    if (one) {
        rc = local ? plan_agents_local(P, si, c, n, best, &nbest)
                   : plan_agents_scan(P, si, c, n, best, &nbest);
        if (rc)
            return rc;
    }
    if (nbest == 0) {
        nbest = choose(P, si, c, n, local);
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
