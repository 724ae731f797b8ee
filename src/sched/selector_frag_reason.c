/* A pending session's resource reason from the class index: what
 * skv__pass_reason_resources (reason.c) tallies agent by agent, tallied
 * class by class with the class's member count.
 *
 * Why: on an openb replay past full, every pod that fits nowhere walks the
 * whole group for its reason (a shortfall per agent); at 9,704 nodes that
 * was a third of the replay. Members of a class have the same free state,
 * hence the same shortfall. The agent walk keeps the first
 * SKV_SCHED_REASON_SLOTS_MAX short slots in order of the first agent (then
 * slot index) short of them; a class's first member in group order is the
 * first word of its position set, so the same slots are kept.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_internal.h"
#include "selector_frag.h"
#include "selector_frag_index_int.h"

typedef struct slot_tally {
    uint64_t first;         /* first position << 8 | slot: the walk's order */
    uint32_t agents;
    skv_qty min;
} slot_tally;

/* Slot j is short by q on a class whose first member is at first. */
static inline void tally_short(slot_tally *t, int j, skv_qty q, uint32_t nmem,
                               uint64_t first)
{
    uint64_t f = first | (uint64_t)j;
    if (!t[j].agents || f < t[j].first)
        t[j].first = f;
    if (!t[j].agents || q < t[j].min)
        t[j].min = q;
    t[j].agents += nmem;
}

/* The slots the walk would have kept, in the order it met them. */
static void keep_first(skv__reason *r, const slot_tally *t)
{
    bool used[NSL] = {false};
    while (r->nshort < SKV_SCHED_REASON_SLOTS_MAX) {
        int at = -1;
        for (int j = 0; j < NSL; j++)
            if (t[j].agents && !used[j] && (at < 0 || t[j].first < t[at].first))
                at = j;
        if (at < 0)
            break;
        used[at] = true;
        r->short_slot[r->nshort] = (uint8_t)at;
        r->short_agents[r->nshort] = t[at].agents;
        r->short_min[r->nshort] = t[at].min;
        r->nshort++;
    }
}

/* A tally kept for its shape while the classes stay as they were. */
typedef struct fc_reason {
    uint64_t gen;           /* the index's gen + 1 it was made at; 0: none */
    uint32_t candidate;
    int nshort;
    uint8_t slot[SKV_SCHED_REASON_SLOTS_MAX];
    uint32_t agents[SKV_SCHED_REASON_SLOTS_MAX];
    skv_qty min[SKV_SCHED_REASON_SLOTS_MAX];
} fc_reason;

/* The class's own copy of its members' free state, as a map to ask. */
static void class_dstate(skv__dstate *d, const fcls *c)
{
    memcpy(d->used, c->used, sizeof(d->used));
    d->cap = c->cap;
    d->ndev = c->ndev;
    d->dev = (skv_sched_device_view *)c->dev; /* the shortfall only reads */
    d->dev_slot_mask = c->dev_slot_mask;
    d->whole_slot_mask = c->whole_slot_mask;
}

/* Whether the map refuses req on the class as a whole, remembered with
 * the class's scores for the shape (FC_NOFIT). */
static bool class_refuses(const skv__fidx *ix, uint32_t id, int64_t *sv,
                          const skv_qty *req)
{
    if (sv && sv[id] != FC_UNSET)
        return sv[id] == FC_NOFIT;
    skv__dstate d;
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    class_dstate(&d, ix->cls[id]);
    bool refuses = skv__dmap_trial(&d, req, sh, NULL) != 0;
    if (sv && refuses)
        sv[id] = FC_NOFIT;
    return refuses;
}

/* One class's shortfall for req on the requested slots, as
 * skv__dmap_shortfall computes it from the packed avail rows, tallied at
 * once (this loop runs once per class for every session that fits nowhere:
 * the replay's hottest). A request short on no slot that the map refuses
 * fails only as a whole: every device slot it uses is blamed (by 1). */
static void tally_one(const skv__fidx *ix, uint32_t id, int64_t *sv,
                      const skv_qty *req, const uint8_t *slots, int nslots,
                      slot_tally *t)
{
    const fhot *h = &ix->hot[id];
    uint64_t first = (uint64_t)h->first << 8;
    bool any = false;
    for (int i = 0; i < nslots; i++) {
        int j = slots[i];
        skv_qty av = ix->avail[(size_t)j * ix->capcls + id];
        if (req[j] > av) {
            any = true;
            tally_short(t, j, req[j] - av, h->nmem, first);
        }
    }
    if (!any && class_refuses(ix, id, sv, req))
        for (int i = 0; i < nslots; i++)
            if (h->dev_mask & (1u << slots[i]))
                tally_short(t, slots[i], 1, h->nmem, first);
}

static void tally(skv__fidx *ix, const skv__session *x, const skv_qty *req,
                  int64_t *sv, skv__reason *r)
{
    slot_tally t[NSL] = {{0, 0, 0}};
    uint8_t slots[NSL];
    int nslots = 0;
    for (int j = 0; j < NSL; j++)
        if (req[j])
            slots[nslots++] = (uint8_t)j;
    bool constrained = x->arch || x->nmodels;
    for (uint32_t id = 0; id < ix->hiw; id++) {
        const fhot *h = &ix->hot[id];
        if (!h->nmem || !h->sched ||
            (constrained && !skv__fidx_class_ok(x, ix->cls[id])))
            continue;   /* a free id, not schedulable, or refused by x */
        r->agents_candidate += h->nmem;
        tally_one(ix, id, sv, req, slots, nslots, t);
    }
    keep_first(r, t);
}

static void save(fc_reason *c, uint64_t gen, const skv__reason *r)
{
    c->gen = gen + 1;
    c->candidate = r->agents_candidate;
    c->nshort = r->nshort;
    memcpy(c->slot, r->short_slot, sizeof(c->slot));
    memcpy(c->agents, r->short_agents, sizeof(c->agents));
    memcpy(c->min, r->short_min, sizeof(c->min));
}

static void load(skv__reason *r, const fc_reason *c)
{
    r->agents_candidate = c->candidate;
    r->nshort = c->nshort;
    memcpy(r->short_slot, c->slot, sizeof(c->slot));
    memcpy(r->short_agents, c->agents, sizeof(c->agents));
    memcpy(r->short_min, c->min, sizeof(c->min));
}

/* Past full, most sessions that fit nowhere come between two such
 * sessions with no placement or release in between (84% on openb): the
 * classes are the same, so is the tally for the same request. Only
 * sessions without architecture or model constraints are kept (the key is
 * the request alone). */
bool skv__fidx_reason(skv__pass *P, const skv__session *x, const skv_qty *req,
                      skv__reason *r)
{
    skv__group *g = P->g;
    if (!g->fidx || !skv__frag_selector_indexed(g->sel, g->sel_state) ||
        x->ndesignated || x->nneed_labels || skv__fidx_prepare(P->s, g) != 0)
        return false;
    skv__fidx *ix = g->fidx;
    uint32_t sid = skv__fidx_shape_id(ix, req);
    int64_t *sv = skv__fidx_shape_scores(ix, sid);
    if (x->arch || x->nmodels ||
        (!ix->rcache && !(ix->rcache = skv__calloc(FC_SHAPES, sizeof(fc_reason))))) {
        tally(ix, x, req, sv, r);
        return true;
    }
    fc_reason *c = &ix->rcache[sid];
    if (c->gen == ix->gen + 1) {
        load(r, c);
        return true;
    }
    tally(ix, x, req, sv, r);
    save(c, ix->gen, r);
    return true;
}
