/* Backfill reservations: the blocked head gets the agents on which its
 * kernels fit soonest (by the estimated ends of what runs there); later
 * sessions may use those agents only when estimated to finish before.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_int.h"

typedef struct ending {
    int64_t end;
    uint32_t sess, kernel;
} ending;

static int cmp_end(const void *pa, const void *pb)
{
    const ending *a = pa, *b = pb;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    if (a->sess != b->sess)
        return a->sess < b->sess ? -1 : 1;
    return a->kernel < b->kernel ? -1 : (a->kernel > b->kernel);
}

static int64_t est_end(const skv__session *v)
{
    if (v->est_dur <= 0 || v->started > INT64_MAX - v->est_dur)
        return INT64_MAX;
    return v->started + v->est_dur;
}

/* When does req fit on a? -1: never (not even on the empty agent). */
static int64_t fit_time(skv__pass *P, const skv__agent *a, const skv_qty *req,
                        ending *buf)
{
    skv_sched *s = P->s;
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    if (skv__dmap_trial(&a->d, req, sh, NULL) == 0)
        return P->now;
    skv__dstate d = a->d;
    skv_sched_device_view dev[SKV_SCHED_DEVICES_MAX];
    if (a->d.ndev)
        memcpy(dev, a->d.dev, sizeof(*dev) * a->d.ndev);
    d.dev = dev;
    for (uint32_t i = 0; i < a->nallocs; i++) {
        const skv__session *v = s->sess[a->allocs[i].sess];
        buf[i] = (ending){est_end(v), a->allocs[i].sess, a->allocs[i].kernel};
    }
    if (a->nallocs)
        qsort(buf, a->nallocs, sizeof(*buf), cmp_end);
    for (uint32_t i = 0; i < a->nallocs; i++) {
        const skv__session *v = s->sess[buf[i].sess];
        const skv__kalloc *ka = &v->k[buf[i].kernel].a;
        skv__dmap_release(&d, v->k[buf[i].kernel].req, ka->dev, ka->ndev);
        if (skv__dmap_trial(&d, req, sh, NULL) == 0)
            return buf[i].end < P->now ? P->now : buf[i].end;
    }
    return -1;
}

static int scratch(skv__pass *P, uint32_t n, skv_error *err)
{
    if (n <= P->narefs_cap)
        return 0;
    void *b = skv__reallocarray(P->arefs, n, sizeof(ending));
    if (!b)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    P->arefs = b;
    P->narefs_cap = n;
    return 0;
}

/* Best unreserved agent for req: earliest fit, then fewer kernels running
 * there, then group order. */
static uint32_t best_agent(skv__pass *P, const skv__session *x,
                           const skv_qty *req, int64_t *when, skv_error *err,
                           int *rc)
{
    uint32_t best = SKV__NONE;
    int64_t bt = 0;
    for (uint32_t i = 0; i < P->g->nagents; i++) {
        const skv__agent *a = P->s->agents[P->g->agents[i]];
        if (a->resv_epoch == P->epoch || !skv__pass_agent_ok(x, a))
            continue;
        if ((*rc = scratch(P, a->nallocs, err)))
            return SKV__NONE;
        int64_t t = fit_time(P, a, req, (ending *)P->arefs);
        if (t < 0)
            continue;
        const skv__agent *b = best == SKV__NONE ? NULL : P->s->agents[best];
        if (!b || t < bt || (t == bt && a->nallocs < b->nallocs)) {
            best = P->g->agents[i];
            bt = t;
        }
    }
    *when = bt;
    return best;
}

bool skv__pass_reserve(skv__pass *P, uint32_t si, skv_error *err)
{
    skv__session *x = P->s->sess[si];
    uint32_t n = x->mode == SKV_SCHED_SINGLE_NODE ? 1 : x->nk;
    int64_t start = P->now;
    uint32_t *picked = skv__calloc(n, sizeof(uint32_t));
    if (!picked)
        return false;
    uint32_t k;
    int rc = 0;
    for (k = 0; k < n; k++) {
        const skv_qty *req = n == 1 && x->nk > 1 ? x->total : x->k[k].req;
        int64_t t;
        uint32_t ai = best_agent(P, x, req, &t, err, &rc);
        if (ai == SKV__NONE)
            break;
        picked[k] = ai;
        /* claim now so the next kernel takes another agent */
        P->s->agents[ai]->resv_epoch = P->epoch;
        if (t > start)
            start = t;
    }
    for (uint32_t j = 0; j < k; j++) {
        skv__agent *a = P->s->agents[picked[j]];
        if (k < n) {
            a->resv_epoch = 0; /* incomplete: release the claims */
            continue;
        }
        a->resv_sess = si;
        a->resv_start = start;
    }
    skv__free(picked);
    if (k < n || rc)
        return false;
    /* keep the resource detail of the miss: it says what is short */
    x->reason.code = SKV_SCHED_REASON_HAS_RESERVATION;
    x->reason.evaluated_ms = P->now;
    x->reason.reserved_at = start == INT64_MAX ? -1 : start;
    P->nresv++;
    return true;
}
