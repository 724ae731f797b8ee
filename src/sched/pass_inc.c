/* Incremental pass: the walk of a group whose order is static (fifo, lifo,
 * priority without aging) and that does not preempt, without trying the
 * sessions that cannot start.
 *
 * The full walk ranks and sorts every pending session on every pass, then
 * tries each: a place attempt over the agents and, when it fails, a second
 * scan for the reason. With a long queue on a full cluster nearly all of
 * that work ends in "does not fit". Here instead:
 *  - the order is kept across passes (the ranks cannot change): sessions
 *    new to the pending list are ranked once and merged in, and sessions
 *    that left it are dropped as the walk meets them;
 *  - plain sessions (one kernel, no placement constraint, no dependency)
 *    are indexed by request shape (class). Per class and per state of the
 *    group (every visit may change it) one scan over the agents says
 *    whether the shape fits an unreserved agent, fits only reserved agents
 *    (and until when a backfill may use them), or fits nowhere;
 *  - once the group's reservations are taken, a plain session of owners
 *    without policies whose class cannot start for its estimated duration
 *    is skipped: the full walk would try it and fail with no effect but
 *    its reason (no reservation is left to take, no agent is scored, so
 *    no selector state moves). Its reason is marked deferred and computed
 *    when asked (reason.c). Everything else is visited by the same visit
 *    function, in the same order, as in the full walk.
 * So the placements, reservations and selector calls are those of the full
 * walk; suite sched replays both side by side and compares every pass.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_inc_int.h"

void skv__inc_free(struct skv__inc *I)
{
    if (!I)
        return;
    skv__free(I->ord);
    skv__free(I->tmp);
    skv__free(I->cls);
    skv__free(I->ht);
    skv__free(I->fresh);
    skv__free(I);
}

/* Ranks that depend only on the session, so an order kept across passes
 * stays the order the full walk would sort. */
bool skv__pass_inc_eligible(const skv__pass *P)
{
    const skv__group *g = P->g;
    if ((P->o->version >= 2 && P->o->full_walk) || g->preemption)
        return false;
    return g->seq == &skv__seq_fifo || g->seq == &skv__seq_lifo ||
           (g->seq == &skv__seq_priority && g->aging_ms <= 0) ||
           g->seq == &skv__seq_drf || g->seq == &skv__seq_fairshare;
}

static uint32_t req_hash(const skv_qty *req)
{
    uint64_t h = 1469598103934665603ull;
    for (int j = 0; j < NSL; j++)
        h = (h ^ (uint64_t)req[j]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static int ht_grow(skv__inc *I, skv_error *err)
{
    uint32_t cap = I->ht_cap ? I->ht_cap * 2 : 64;
    uint32_t *ht = skv__malloc(cap * sizeof(*ht));
    if (!ht)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    memset(ht, 0xff, cap * sizeof(*ht));
    for (uint32_t c = 0; c < I->ncls; c++) {
        uint32_t i = req_hash(I->cls[c].req) & (cap - 1);
        while (ht[i] != SKV__NONE)
            i = (i + 1) & (cap - 1);
        ht[i] = c;
    }
    skv__free(I->ht);
    I->ht = ht;
    I->ht_cap = cap;
    return 0;
}

/* The class of a request shape, made on first sight. */
static int class_of(skv__inc *I, const skv_qty *req, uint32_t *out,
                    skv_error *err)
{
    if (2 * (I->ncls + 1) > I->ht_cap && ht_grow(I, err))
        return SKV_ENOMEM;
    uint32_t i = req_hash(req) & (I->ht_cap - 1);
    for (; I->ht[i] != SKV__NONE; i = (i + 1) & (I->ht_cap - 1))
        if (memcmp(I->cls[I->ht[i]].req, req, sizeof(I->cls[0].req)) == 0) {
            *out = I->ht[i];
            return 0;
        }
    int rc = skv__sched_room((void **)&I->cls, I->ncls, &I->cls_cap,
                             sizeof(*I->cls), err);
    if (rc)
        return rc;
    inc_cls *c = &I->cls[I->ncls];
    memset(c, 0, sizeof(*c));
    memcpy(c->req, req, sizeof(c->req));
    I->ht[i] = I->ncls;
    *out = I->ncls++;
    return 0;
}

/* No constraint on agents, nothing to wait for but room, and the first
 * place attempt looks at kernel 0 alone (one kernel, or a multi-node gang:
 * if kernel 0 fits no usable agent the attempt ends before touching any
 * map; a single-node gang is tried as a whole). */
static bool plain(const skv__session *x)
{
    return (x->nk == 1 || x->mode == SKV_SCHED_MULTI_NODE) && !x->arch &&
           !x->nmodels && !x->ndesignated && !x->nneed_labels && !x->ndeps;
}

/* account.c: si joined the pending list. No allocation here: when the
 * room made at the last pass is used up, the next pass scans the list. */
void skv__inc_fresh(struct skv__inc *I, uint32_t si)
{
    if (I->nfresh < I->fresh_cap)
        I->fresh[I->nfresh++] = si;
    else
        I->fresh_lost = true;
}

static int cmp_ord(const void *pa, const void *pb)
{
    const ord_ent *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

static int ensure(skv__inc *I, uint32_t n, skv_error *err)
{
    if (n <= I->cap)
        return 0;
    uint32_t cap = I->cap ? I->cap : 64;
    while (cap < n)
        cap *= 2;
    ord_ent *o = skv__reallocarray(I->ord, cap, sizeof(*o));
    if (o)
        I->ord = o;
    ord_ent *t = o ? skv__reallocarray(I->tmp, cap, sizeof(*t)) : NULL;
    if (!t)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    I->tmp = t;
    I->cap = cap;
    return 0;
}

/* Rank the sessions new to the pending list (after the kept order), sort
 * them, and merge them into the order. */
static int merge_new(skv__pass *P, skv__inc *I, skv_error *err)
{
    skv__group *g = P->g;
    uint32_t nn = 0;
    int rc = ensure(I, I->n + g->npending, err);
    const uint32_t *src = I->fresh_lost ? g->pending : I->fresh;
    uint32_t nsrc = I->fresh_lost ? g->npending : I->nfresh;
    for (uint32_t i = 0; rc == 0 && i < nsrc; i++) {
        uint32_t si = src[i];
        skv__session *x = si < P->s->nsess_tab ? P->s->sess[si] : NULL;
        if (!x || x->in_ord || x->state != SKV_SCHED_PENDING ||
            P->s->groups[x->group] != g)
            continue; /* left again, or listed twice */
        ord_ent *e = &I->tmp[I->n + nn];
        /* per owner: the owners' queues are by submit order (queue.c) */
        int64_t rank = I->per_owner ? (int64_t)x->owner[g->seq->scope]
                                    : skv__pass_rank(P, si);
        *e = (ord_ent){rank, x->seq, si, SKV__NONE, x->est_dur, x->not_before,
                       {0}, x->pend_gen, false, false};
        memcpy(e->owner, x->owner, sizeof(e->owner));
        if (plain(x))
            rc = class_of(I, x->k[0].req, &e->cls, err);
        nn++;
    }
    if (rc == 0 && nn == 0)
        I->nfresh = 0, I->fresh_lost = false;
    if (rc || nn == 0)
        return rc;
    ord_ent *nw = I->tmp + I->n;
    qsort(nw, nn, sizeof(*nw), cmp_ord);
    for (uint32_t i = 0; i < nn; i++)
        P->s->sess[nw[i].si]->in_ord = true;
    I->nfresh = 0;
    I->fresh_lost = false;
    /* merge from the back into ord (room for n + nn) */
    uint32_t a = I->n, b = nn, w = I->n + nn;
    while (b > 0) {
        if (a > 0 && cmp_ord(&I->ord[a - 1], &nw[b - 1]) > 0)
            I->ord[--w] = I->ord[--a];
        else
            I->ord[--w] = nw[--b];
    }
    I->n += nn;
    if (nn > I->nfresh_seen)
        I->nfresh_seen = nn;
    return 0;
}

/* The entry still stands for the session's present stay on the pending
 * list (a requeued session gets a new entry). */
bool skv__inc_live(const skv__pass *P, const ord_ent *e)
{
    const skv_sched *s = P->s;
    const skv__session *x = e->si < s->nsess_tab ? s->sess[e->si] : NULL;
    return x && x->seq == e->seq && x->pend_gen == e->gen &&
           x->state == SKV_SCHED_PENDING && s->groups[x->group] == P->g;
}

static int prepare(skv__pass *P, skv__inc **out, skv_error *err)
{
    skv__group *g = P->g;
    if (!g->inc && !(g->inc = skv__calloc(1, sizeof(*g->inc))))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv__inc *I = g->inc;
    if (I->seq != g->seq || I->aging_ms != g->aging_ms) {
        /* another order: start over (in_ord says "has an entry") */
        for (uint32_t i = 0; i < I->n; i++)
            if (skv__inc_live(P, &I->ord[i]))
                P->s->sess[I->ord[i].si]->in_ord = false;
        I->n = 0;
        I->fresh_lost = true; /* every pending session is new to it */
        I->seq = g->seq;
        I->aging_ms = g->aging_ms;
        I->per_owner = g->seq->flags & SKV_SCHED_SEQ_PER_OWNER;
    }
    I->ver++; /* the agents may have changed since the last pass */
    I->pass++;
    I->looked = 0;
    I->policies = false;
    for (uint32_t i = 0; i < P->s->nowners; i++)
        I->policies |= P->s->owners[i]->has_policy |
                       P->s->owners[i]->has_gquota;
    *out = I;
    int rc = merge_new(P, I, err);
    /* room for the arrivals until the next pass (a few per pass) */
    uint32_t want = 64;
    while (want < 2 * I->nfresh_seen)
        want *= 2;
    if (rc == 0 && want > I->fresh_cap) {
        uint32_t *f = skv__reallocarray(I->fresh, want, sizeof(*f));
        if (f) {
            I->fresh = f;
            I->fresh_cap = want;
        }
    }
    return rc;
}

/* Where does the class fit now? Kept until the next visit that changes
 * state (a placement or a reservation). Verdicts are asked only once the
 * pass has taken its reservations (skippable), and from then on until the
 * pass ends free capacity only shrinks and the reserved agents stay the
 * ones they are. So an agent the class did not fit stays unfit: the scans
 * of a class resume where the last one left off, and a pass looks at each
 * agent about once per class instead of once per placement (10,000 agents
 * filling in order made every verdict walk past all the full ones). */
static bool takes(const skv__agent *a, const inc_cls *k)
{
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    return a->schedulable && skv__dmap_trial(&a->d, k->req, sh, NULL) == 0;
}

static bool reserved(const skv__pass *P, const skv__agent *a)
{
    return !P->ignore_resv && a->resv_epoch == P->epoch;
}

/* An unreserved agent that takes the class, from the last one found. */
static bool scan_free(skv__pass *P, skv__inc *I, inc_cls *k)
{
    for (uint32_t i = k->free_from; i < P->g->nagents; i++) {
        const skv__agent *a = P->s->agents[P->g->agents[i]];
        I->looked++;
        if (!reserved(P, a) && takes(a, k)) {
            k->free_from = i;
            return true;
        }
    }
    k->free_from = P->g->nagents; /* none: none will this pass */
    return false;
}

/* No unreserved agent takes it: the reserved ones that do, and the latest
 * start of their reservations. Later scans look between the first and the
 * last of them, at reserved agents only. */
static void scan_reserved(skv__pass *P, skv__inc *I, inc_cls *k)
{
    uint32_t first = P->g->nagents, last = 0;
    k->fits = FITS_NONE;
    k->until = INT64_MIN;
    for (uint32_t i = k->scan_from; i < k->scan_to; i++) {
        const skv__agent *a = P->s->agents[P->g->agents[i]];
        I->looked++;
        if (!reserved(P, a) || !takes(a, k))
            continue;
        first = first < i ? first : i;
        last = i;
        k->fits = FITS_RESERVED;
        if (a->resv_start != INT64_MAX && a->resv_start > k->until)
            k->until = a->resv_start;
    }
    k->scan_from = first;
    k->scan_to = k->fits == FITS_NONE ? first : last + 1;
}

static void scan(skv__pass *P, skv__inc *I, inc_cls *k)
{
    if (k->pass != I->pass) {
        k->pass = I->pass;
        k->free_from = k->scan_from = 0;
        k->scan_to = P->g->nagents;
    }
    k->ver = I->ver;
    if (k->free_from < P->g->nagents && scan_free(P, I, k))
        k->fits = FITS_FREE;
    else
        scan_reserved(P, I, k);
}

/* May a session of est_dur backfill onto the class's reserved agents
 * (place.c, resv_blocks)? */
static bool backfills(const skv__pass *P, const inc_cls *k, int64_t est_dur)
{
    return k->fits == FITS_RESERVED && est_dur > 0 && k->until != INT64_MIN &&
           P->now + est_dur <= k->until;
}

/* The verdict for a session of est_dur. Within the pass a class that fits
 * nowhere stays so, and one that fits only reserved agents fits at most
 * those (all still reserved) later, so its latest reservation start can
 * only move earlier: a stale "reserved" that already rules out a backfill
 * rules it out now too, and skipping needs no new scan. Only a session
 * that the stale verdict would let backfill has it brought up to date. */
static const inc_cls *verdict(skv__pass *P, skv__inc *I, uint32_t c,
                              int64_t est_dur)
{
    inc_cls *k = &I->cls[c];
    if (k->ver == I->ver)
        return k;
    if (k->pass == I->pass &&
        (k->fits == FITS_NONE ||
         (k->fits == FITS_RESERVED && !backfills(P, k, est_dur))))
        return k;
    scan(P, I, k);
    return k;
}

static bool owners_free(const skv_sched *s, const ord_ent *e)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++)
        if (s->owners[e->owner[sc]]->has_policy ||
            s->owners[e->owner[sc]]->has_gquota)
            return false;
    return true;
}

/* Would the full walk's visit fail with no effect but its reason? Read
 * from the entry only: if the session has left, skipping it is right too
 * (the full walk would not see it). */
static bool skippable(skv__pass *P, skv__inc *I, const ord_ent *e)
{
    if (e->cls == SKV__NONE || e->not_before > P->now ||
        P->nresv < P->g->max_reservations ||
        (P->o->max_placements && P->placed >= P->o->max_placements) ||
        (I->policies && !owners_free(P->s, e)))
        return false;
    const inc_cls *k = verdict(P, I, e->cls, e->est_dur);
    /* reserved agents take a backfill that ends before they are needed */
    return k->fits != FITS_FREE && !backfills(P, k, e->est_dur);
}

void skv__pass_inc_forget(skv__group *g)
{
    for (uint32_t i = 0; g->inc && i < g->inc->n; i++)
        g->inc->ord[i].deferred = false;
}

/* Mark the reason deferred once; later skips touch nothing (nothing but a
 * pass sets a pending session's reason, and a visit clears the flag). The
 * time it was evaluated is the group's last pass (reason.c). */
static void defer(skv__pass *P, ord_ent *e)
{
    skv__session *x = P->s->sess[e->si];
    if (!x->reason.deferred) {
        skv__sched_reason_reset(&x->reason);
        x->reason.deferred = true;
        x->reason.code = SKV_SCHED_REASON_RESOURCES;
    }
    e->deferred = true;
}

/* 1: keep the entry, 0: drop it (the session left), < 0: error.
 * *visited: the visit function ran. */
int skv__inc_step(skv__pass *P, skv__inc *I, ord_ent *e, skv__pass_visit_fn fn,
                   bool *visited)
{
    *visited = false;
    if (skippable(P, I, e)) {
        if (e->deferred)
            return 1;
        if (!skv__inc_live(P, e))
            return 0;
        defer(P, e);
        return 1;
    }
    if (!skv__inc_live(P, e))
        return 0;
    skv__session *x = P->s->sess[e->si];
    e->deferred = false;
    if (!skv__pass_static_ok(P, x))
        return 1;
    uint32_t nresv = P->nresv;
    *visited = true;
    int rc = fn(P, e->si);
    if (rc != 0 || P->nresv != nresv)
        I->ver++; /* a placement or a reservation changes the verdicts */
    if (rc < 0)
        return rc;
    return x->state == SKV_SCHED_PENDING;
}

/* Entries of sessions that left while skipped linger; drop them when they
 * outnumber the pending list. */
static void sweep(skv__pass *P, skv__inc *I)
{
    if (I->n <= 2 * P->g->npending + 64)
        return;
    uint32_t w = 0;
    for (uint32_t i = 0; i < I->n; i++)
        if (skv__inc_live(P, &I->ord[i]))
            I->ord[w++] = I->ord[i];
    I->n = w;
}

int skv__pass_inc_walk(skv__pass *P, skv__pass_visit_fn fn, skv_error *err)
{
    skv__inc *I = NULL;
    int rc = prepare(P, &I, err);
    if (rc)
        return rc;
    sweep(P, I);
    if (I->per_owner)
        return skv__inc_walk_owners(P, I, fn, err);
    uint32_t w = 0, i = 0;
    bool visited;
    for (; i < I->n && rc >= 0; i++) {
        rc = skv__inc_step(P, I, &I->ord[i], fn, &visited);
        if (rc > 0 && w++ != i)
            I->ord[w - 1] = I->ord[i];
    }
    for (; i < I->n; i++) /* after an error: keep the rest as is */
        I->ord[w++] = I->ord[i];
    I->n = w;
    return rc < 0 ? rc : 0;
}

/* For the tests (suite sched): the agents the verdicts looked at in the
 * group's last incremental pass. What the resumed scans save shows here
 * and nowhere else (decisions are the same without them). */
int skv__pass_inc_looked(const skv_sched *s, const char *group, uint64_t *out,
                         skv_error *err)
{
    const skv__group *g = s && group && out ? skv__sched_group(s, group, NULL)
                                            : NULL;
    if (!g)
        return skv__err(err, SKV_ENOENT, "no resource group '%s'",
                        group ? group : "(null)");
    *out = g->inc ? g->inc->looked : 0;
    return 0;
}
