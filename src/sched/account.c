/* Accounting: linking a placed session into agents and owners, and taking
 * it out again. Every change of usage goes through these functions, so the
 * allocations recorded on kernels stay the one source of truth.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

void skv__sched_pending_add(skv_sched *s, uint32_t si)
{
    skv__session *x = s->sess[si];
    skv__group *g = s->groups[x->group];
    /* capacity was reserved by the caller */
    x->pend_pos = g->npending;
    x->in_ord = false; /* a new entry in the incremental order (pass_inc.c) */
    x->pend_gen++;
    if (g->inc)
        skv__inc_fresh(g->inc, si);
    g->pending[g->npending++] = si;
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++)
        s->owners[x->owner[sc]]->n_pending++;
}

void skv__sched_pending_del(skv_sched *s, uint32_t si)
{
    skv__session *x = s->sess[si];
    skv__group *g = s->groups[x->group];
    uint32_t last = g->pending[--g->npending];
    if (last != si) {
        g->pending[x->pend_pos] = last;
        s->sess[last]->pend_pos = x->pend_pos;
    }
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++)
        s->owners[x->owner[sc]]->n_pending--;
}

static bool first_on_agent(const skv__session *x, uint32_t k)
{
    for (uint32_t j = 0; j < k; j++)
        if (x->k[j].a.agent == x->k[k].a.agent)
            return false;
    return true;
}

static void unlink_kernel(skv_sched *s, skv__session *x, uint32_t k)
{
    skv__kalloc *ka = &x->k[k].a;
    skv__agent *a = s->agents[ka->agent];
    skv__aref last = a->allocs[--a->nallocs];
    if (ka->apos != a->nallocs) {
        a->allocs[ka->apos] = last;
        s->sess[last.sess]->k[last.kernel].a.apos = ka->apos;
    }
    if (first_on_agent(x, k))
        a->nsess--;
}

int skv__sched_commit(skv_sched *s, uint32_t si, int64_t now, skv_error *err)
{
    skv__session *x = s->sess[si];
    uint32_t k;
    for (k = 0; k < x->nk; k++) {
        skv__kalloc *ka = &x->k[k].a;
        skv__agent *a = s->agents[ka->agent];
        skv__aref ref = {si, k};
        if (skv__sched_push((void **)&a->allocs, &a->nallocs, &a->allocs_cap,
                            sizeof(ref), &ref, err))
            break;
        ka->apos = a->nallocs - 1;
        if (first_on_agent(x, k))
            a->nsess++;
    }
    if (k < x->nk) {
        while (k-- > 0)
            unlink_kernel(s, x, k);
        return SKV_ENOMEM;
    }
    skv__sched_pending_del(s, si);
    skv__sched_owner_charge(s, x, +1, now);
    x->state = SKV_SCHED_SCHEDULED;
    x->preemptor = false;
    x->started = now; /* until the agent confirms */
    skv__sched_reason_reset(&x->reason);
    return 0;
}

void skv__sched_release(skv_sched *s, uint32_t si, int64_t now)
{
    skv__session *x = s->sess[si];
    /* unlink in reverse so first_on_agent still sees the earlier kernels */
    for (uint32_t k = x->nk; k-- > 0;) {
        skv__kalloc *ka = &x->k[k].a;
        if (ka->agent == SKV__NONE)
            continue;
        skv__agent *a = s->agents[ka->agent];
        skv__sched_map_release(a, ka);
        skv__sched_agent_release(s, a, x->k[k].req, ka->dev, ka->ndev);
        unlink_kernel(s, x, k);
    }
    for (uint32_t k = 0; k < x->nk; k++) {
        skv__kalloc *ka = &x->k[k].a;
        skv__free(ka->dev);
        ka->dev = NULL;
        ka->ndev = 0;
        ka->agent = SKV__NONE;
    }
    skv__sched_owner_charge(s, x, -1, now);
}

void skv__sched_victim_gone(skv_sched *s, skv__session *x)
{
    if (!x->preempt_marked)
        return;
    x->preempt_marked = false;
    uint32_t wi = x->victim_for;
    x->victim_for = SKV__NONE;
    if (wi < s->nsess_tab && s->sess[wi] && s->sess[wi]->seq == x->victim_for_seq &&
        s->sess[wi]->waiting_victims > 0)
        s->sess[wi]->waiting_victims--;
}

void skv__sched_reason_reset(skv__reason *r)
{
    skv__free(r->detail_owned);
    memset(r, 0, sizeof(*r));
}
