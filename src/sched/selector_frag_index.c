/* The free-state class index of a group with a fragmentation selector.
 *
 * The scan in place.c scores every agent for every kernel; a frag/fgd
 * score costs ~200 ns, so a decision over 10,000 agents costs ~2 ms.
 * Everything the scan reads about an agent (fit through the map, the
 * score) is a function of its free state: capacity, use, devices, model,
 * architecture, schedulable. Agents with equal free state form a class;
 * a class's score for a request shape is computed once and cached (the
 * class key never changes, only its members do), and a placement or
 * release only moves the agents it touched to another class. A decision
 * then costs O(classes), not O(agents).
 *
 * Same decisions as the scan, draw for draw: with ties=random the scan adds
 * to each scored agent's score the low 20 bits of the next draw of the
 * selector's splitmix64 generator, in group order. A draw's value depends
 * only on its position (the generator adds a constant per draw), so when
 * several agents tie for the best score one walk over the group's class
 * ids gives each tied agent its position among the scored agents; with a
 * single best agent no draw matters. The generator then advances by the
 * number of agents the scan would have scored.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "selector_frag.h"
#include "selector_frag_index.h"

#define FC_CACHE 16u        /* cached shapes per class (direct-mapped) */
#define FC_SHAPES 4096u     /* distinct request shapes before a reset */
#define FC_SHEAD 8192u      /* shape hash buckets */

typedef struct fc_ent {
    uint32_t shape;         /* SKV__NONE: empty */
    int64_t val;            /* selector base score or REJECT */
} fc_ent;

typedef struct fcls {
    uint64_t hash;
    uint32_t next;          /* hash chain */
    uint32_t apos;          /* position in the active list */
    uint32_t *mem;          /* agent table indexes, unordered */
    uint32_t nmem, capmem;
    char *arch, *model;
    bool schedulable;
    skv_qty cap[NSL], used[NSL];
    uint32_t ndev, dev_slot_mask, whole_slot_mask;
    skv_sched_device_view dev[SKV_SCHED_DEVICES_MAX]; /* ids not kept */
    fc_ent cache[FC_CACHE];
} fcls;

/* What the scan over classes reads first, packed: most classes do not
 * fit most requests late in a replay, and this rules them out without
 * touching the class, its member agent or the map. */
#define FC_HOT_SLOTS 3
typedef struct fhot {
    skv_qty free[FC_HOT_SLOTS]; /* pooled free of slots 0..2 (MAX: device
                                   slot, unlimited or not this agent's) */
    uint32_t nfree;             /* entirely free devices */
} fhot;

typedef struct fshape {
    skv_qty req[NSL];
    uint64_t hash;
    uint32_t next;
} fshape;

struct skv__fidx {
    bool valid;
    void *sel_state;        /* the selector the cached scores are from */
    fcls **cls;             /* by class id; NULL: free id */
    uint32_t capcls;
    uint32_t *freel, nfree;
    uint32_t *head, mask;   /* class hash buckets */
    uint32_t *active, nactive;
    fhot *hot;              /* by active position */
    uint32_t *cid, ncid;    /* class id by group position (+1 sentinel) */
    uint32_t *dirty, ndirty;
    uint32_t *mk;           /* per class: members left out of this decision */
    uint32_t *excl, nexcl, capexcl; /* agents left out of this decision */
    uint32_t *rv, nrv;      /* the group's reserved agents in this pass */
    uint32_t rv_epoch, rv_n;/* the pass epoch and reservation count of rv */
    uint8_t *fl;            /* per class: 1 scored, 2 tied (decision) */
    uint32_t *tied, ntied, *scored, nscored;
    uint64_t *pos;          /* tied agents: rank << 32 | group position */
    fshape *shapes;
    uint32_t nshapes, *shead;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = mix(h, (unsigned char)*s);
    return mix(h, s ? 0x100 : 0x200);
}

static uint64_t key_hash(const skv__agent *a)
{
    uint64_t h = mix_str(mix_str(0xcbf29ce484222325ull, a->arch), a->gpu_model);
    h = mix(h, a->schedulable);
    for (int j = 0; j < NSL; j++)
        h = mix(mix(h, (uint64_t)a->cap[j]), (uint64_t)a->d.used[j]);
    h = mix(mix(mix(h, a->d.ndev), a->d.dev_slot_mask), a->d.whole_slot_mask);
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        const skv_sched_device_view *d = &a->d.dev[i];
        h = mix(h, (uint64_t)d->whole_slot << 16 | (uint64_t)d->share_slot << 8 |
                       d->whole_taken);
        h = mix(mix(h, (uint64_t)d->share_capacity), (uint64_t)d->share_used);
    }
    return h ^ (h >> 31);
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool key_eq(const fcls *c, const skv__agent *a)
{
    if (c->schedulable != a->schedulable || c->ndev != a->d.ndev ||
        c->dev_slot_mask != a->d.dev_slot_mask ||
        c->whole_slot_mask != a->d.whole_slot_mask ||
        memcmp(c->cap, a->cap, sizeof(c->cap)) ||
        memcmp(c->used, a->d.used, sizeof(c->used)) ||
        !str_eq(c->arch, a->arch) || !str_eq(c->model, a->gpu_model))
        return false;
    for (uint32_t i = 0; i < c->ndev; i++) {
        const skv_sched_device_view *x = &c->dev[i], *y = &a->d.dev[i];
        if (x->whole_slot != y->whole_slot || x->share_slot != y->share_slot ||
            x->whole_taken != y->whole_taken ||
            x->share_capacity != y->share_capacity || x->share_used != y->share_used)
            return false;
    }
    return true;
}

static void cls_free(fcls *c)
{
    if (!c)
        return;
    skv__free(c->mem);
    skv__free(c->arch);
    skv__free(c->model);
    skv__free(c);
}

static void hot_fill(fhot *h, const skv__agent *a)
{
    for (int j = 0; j < FC_HOT_SLOTS; j++)
        h->free[j] = (a->d.dev_slot_mask & (1u << j)) || a->cap[j] == SKV_QTY_UNLIMITED
                         ? SKV_QTY_MAX : a->cap[j] - a->d.used[j];
    h->nfree = skv__sched_free_devices(a);
}

/* Whole devices a request needs at least (as min_free in place.c). */
static uint32_t whole_need(const skv_sched *s, const skv_qty *req)
{
    uint64_t n = 0;
    for (int j = 0; j < NSL; j++)
        if (s->whole_mask & (1u << j))
            n += (uint64_t)req[j] / SKV_QTY_SCALE;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* False when the map surely refuses req (pooled_fits in dmap.c, and k
 * whole units need k entirely free devices); true: ask the map. */
static bool hot_may_fit(const fhot *h, const skv_qty *req, uint32_t need)
{
    return h->nfree >= need && req[0] <= h->free[0] && req[1] <= h->free[1] &&
           req[2] <= h->free[2];
}

/* A new, empty class with a's key; SKV__NONE when out of memory. */
static uint32_t cls_new(skv__fidx *ix, const skv__agent *a, uint64_t h)
{
    if (ix->nfree == 0)
        return SKV__NONE;
    fcls *c = skv__calloc(1, sizeof(*c));
    if (!c || (a->arch && !(c->arch = skv__strdup(a->arch))) ||
        (a->gpu_model && !(c->model = skv__strdup(a->gpu_model)))) {
        cls_free(c);
        return SKV__NONE;
    }
    c->hash = h;
    c->schedulable = a->schedulable;
    memcpy(c->cap, a->cap, sizeof(c->cap));
    memcpy(c->used, a->d.used, sizeof(c->used));
    c->ndev = a->d.ndev;
    c->dev_slot_mask = a->d.dev_slot_mask;
    c->whole_slot_mask = a->d.whole_slot_mask;
    memcpy(c->dev, a->d.dev, c->ndev * sizeof(*c->dev));
    for (uint32_t i = 0; i < c->ndev; i++)
        c->dev[i].id = NULL;
    for (uint32_t i = 0; i < FC_CACHE; i++)
        c->cache[i].shape = SKV__NONE;
    uint32_t id = ix->freel[--ix->nfree];
    ix->cls[id] = c;
    c->next = ix->head[h & ix->mask];
    ix->head[h & ix->mask] = id;
    c->apos = ix->nactive;
    hot_fill(&ix->hot[c->apos], a);
    ix->active[ix->nactive++] = id;
    return id;
}

/* Drop an empty class: out of its chain, the active list and the table. */
static void cls_drop(skv__fidx *ix, uint32_t id)
{
    fcls *c = ix->cls[id];
    uint32_t *p = &ix->head[c->hash & ix->mask];
    while (*p != id)
        p = &ix->cls[*p]->next;
    *p = c->next;
    uint32_t last = ix->active[--ix->nactive];
    ix->active[c->apos] = last;
    ix->hot[c->apos] = ix->hot[ix->nactive];
    ix->cls[last]->apos = c->apos;
    cls_free(c);
    ix->cls[id] = NULL;
    ix->freel[ix->nfree++] = id;
}

static uint32_t cls_find(const skv__fidx *ix, const skv__agent *a, uint64_t h)
{
    for (uint32_t id = ix->head[h & ix->mask]; id != SKV__NONE; id = ix->cls[id]->next)
        if (ix->cls[id]->hash == h && key_eq(ix->cls[id], a))
            return id;
    return SKV__NONE;
}

static void member_del(skv__fidx *ix, skv_sched *s, skv__agent *a)
{
    fcls *c = ix->cls[a->fcls];
    uint32_t last = c->mem[--c->nmem];
    c->mem[a->fpos] = last;
    s->agents[last]->fpos = a->fpos;
    if (c->nmem == 0)
        cls_drop(ix, a->fcls);
    a->fcls = SKV__NONE;
}

/* Put agent ai in the class of its current free state. */
static int classify(skv__fidx *ix, skv_sched *s, uint32_t ai)
{
    skv__agent *a = s->agents[ai];
    uint64_t h = key_hash(a);
    if (a->fcls != SKV__NONE && ix->cls[a->fcls]->hash == h &&
        key_eq(ix->cls[a->fcls], a))
        return 0;
    if (a->fcls != SKV__NONE)
        member_del(ix, s, a);
    uint32_t id = cls_find(ix, a, h);
    if (id == SKV__NONE && (id = cls_new(ix, a, h)) == SKV__NONE)
        return SKV_ENOMEM;
    fcls *c = ix->cls[id];
    if (c->nmem == c->capmem) {
        uint32_t nc = c->capmem ? c->capmem * 2 : 4;
        uint32_t *nm = skv__reallocarray(c->mem, nc, sizeof(*nm));
        if (!nm) {
            if (c->nmem == 0)
                cls_drop(ix, id);
            return SKV_ENOMEM;
        }
        c->mem = nm;
        c->capmem = nc;
    }
    a->fcls = id;
    a->fpos = c->nmem;
    c->mem[c->nmem++] = ai;
    ix->cid[a->gpos] = id;
    return 0;
}

static void clear(skv__fidx *ix)
{
    for (uint32_t i = 0; i < ix->capcls; i++)
        cls_free(ix->cls[i]);
    skv__free(ix->cls);
    skv__free(ix->freel);
    skv__free(ix->head);
    skv__free(ix->active);
    skv__free(ix->hot);
    skv__free(ix->cid);
    skv__free(ix->dirty);
    skv__free(ix->mk);
    skv__free(ix->excl);
    skv__free(ix->rv);
    skv__free(ix->fl);
    skv__free(ix->tied);
    skv__free(ix->scored);
    skv__free(ix->pos);
    skv__free(ix->shapes);
    skv__free(ix->shead);
    memset(ix, 0, sizeof(*ix));
}

void skv__fidx_free(skv__fidx *ix)
{
    if (!ix)
        return;
    clear(ix);
    skv__free(ix);
}

/* Arrays sized for the group: each agent is in exactly one class and
 * empty classes are dropped, so ids never exceed agents + 1 (a move
 * creates the new class before the old one empties). */
static int alloc_arrays(skv__fidx *ix, uint32_t n)
{
    uint32_t nb = 16;
    while (nb < 2 * (n + 2))
        nb *= 2;
    ix->capcls = n + 2;
    ix->mask = nb - 1;
    ix->cls = skv__calloc(ix->capcls, sizeof(*ix->cls));
    ix->freel = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->head = skv__calloc(nb, sizeof(uint32_t));
    ix->active = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->hot = skv__calloc(ix->capcls, sizeof(fhot));
    ix->cid = skv__calloc(n + 1, sizeof(uint32_t));
    ix->dirty = skv__calloc(n + 1, sizeof(uint32_t));
    ix->mk = skv__calloc(ix->capcls + 1, sizeof(uint32_t));
    ix->rv = skv__calloc(n + 1, sizeof(uint32_t));
    ix->fl = skv__calloc(ix->capcls + 1, 1);
    ix->tied = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->scored = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->pos = skv__calloc(n + 1, sizeof(uint64_t));
    ix->shapes = skv__calloc(FC_SHAPES, sizeof(*ix->shapes));
    ix->shead = skv__calloc(FC_SHEAD, sizeof(uint32_t));
    if (!ix->cls || !ix->freel || !ix->head || !ix->active || !ix->hot || !ix->cid ||
        !ix->dirty || !ix->mk || !ix->rv || !ix->fl || !ix->tied || !ix->scored || !ix->pos ||
        !ix->shapes || !ix->shead)
        return SKV_ENOMEM;
    memset(ix->head, 0xFF, nb * sizeof(uint32_t));
    memset(ix->shead, 0xFF, FC_SHEAD * sizeof(uint32_t));
    for (uint32_t i = 0; i < ix->capcls; i++)
        ix->freel[i] = ix->capcls - 1 - i;
    ix->nfree = ix->capcls;
    ix->ncid = n;
    return 0;
}

static int build(skv__fidx *ix, skv_sched *s, skv__group *g)
{
    clear(ix);
    int rc = alloc_arrays(ix, g->nagents);
    for (uint32_t p = 0; rc == 0 && p < g->nagents; p++) {
        skv__agent *a = s->agents[g->agents[p]];
        a->fcls = SKV__NONE;
        a->fdirty = false;
        rc = classify(ix, s, g->agents[p]);
    }
    if (rc) {
        clear(ix);
        return rc;
    }
    ix->sel_state = g->sel_state;
    ix->valid = true;
    return 0;
}

void skv__fidx_touch(skv_sched *s, skv__agent *a)
{
    skv__group *g = s->groups[a->group];
    skv__fidx *ix = g->fidx;
    if (!ix || !ix->valid || a->fdirty)
        return;
    a->fdirty = true;
    ix->dirty[ix->ndirty++] = g->agents[a->gpos];
}

void skv__fidx_invalidate(skv__group *g)
{
    if (g && g->fidx) {
        g->fidx->valid = false;
        g->fidx->ndirty = 0;
    }
}

/* Up to date with the group: built, and the touched agents reclassified. */
static int prepare(skv_sched *s, skv__group *g)
{
    if (!g->fidx && !(g->fidx = skv__calloc(1, sizeof(*g->fidx))))
        return SKV_ENOMEM;
    skv__fidx *ix = g->fidx;
    if (!ix->valid || ix->sel_state != g->sel_state || ix->ncid != g->nagents)
        return build(ix, s, g);
    for (uint32_t i = 0; i < ix->ndirty; i++) {
        s->agents[ix->dirty[i]]->fdirty = false;
        if (classify(ix, s, ix->dirty[i])) {
            skv__fidx_invalidate(g);
            return SKV_ENOMEM;
        }
    }
    ix->ndirty = 0;
    return 0;
}

/* Id of a request shape; the table is reset (and every class's cache
 * emptied) when full, so it stays bounded on traces with many shapes. */
static uint32_t shape_id(skv__fidx *ix, const skv_qty *req)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int j = 0; j < NSL; j++)
        h = mix(h, (uint64_t)req[j]);
    h ^= h >> 29;
    uint32_t b = (uint32_t)(h & (FC_SHEAD - 1));
    for (uint32_t id = ix->shead[b]; id != SKV__NONE; id = ix->shapes[id].next)
        if (ix->shapes[id].hash == h &&
            memcmp(ix->shapes[id].req, req, sizeof(ix->shapes[id].req)) == 0)
            return id;
    if (ix->nshapes == FC_SHAPES) {
        ix->nshapes = 0;
        memset(ix->shead, 0xFF, FC_SHEAD * sizeof(uint32_t));
        for (uint32_t i = 0; i < ix->nactive; i++)
            for (uint32_t e = 0; e < FC_CACHE; e++)
                ix->cls[ix->active[i]]->cache[e].shape = SKV__NONE;
    }
    uint32_t id = ix->nshapes++;
    memcpy(ix->shapes[id].req, req, sizeof(ix->shapes[id].req));
    ix->shapes[id].hash = h;
    ix->shapes[id].next = ix->shead[b];
    ix->shead[b] = id;
    return id;
}

/* The session's own constraints the index handles: schedulable,
 * architecture and GPU models (part of the class key). */
static bool class_ok(const skv__session *x, const fcls *c)
{
    if (!c->schedulable)
        return false;
    if (x->arch && !str_eq(x->arch, c->arch))
        return false;
    if (!x->nmodels)
        return true;
    for (size_t i = 0; i < x->nmodels; i++)
        if (c->model && strcmp(x->models[i], c->model) == 0)
            return true;
    return false;
}

/* The class's score for the shape: fit through a member's map, then the
 * selector's base score, as candidate() in place.c computes them. */
static int64_t class_value(skv__pass *P, fcls *c, uint32_t sid,
                           const skv_qty *req, const skv_sched_kernel_view *kv)
{
    fc_ent *e = &c->cache[sid & (FC_CACHE - 1)];
    if (e->shape == sid)
        return e->val;
    skv__agent *a = P->s->agents[c->mem[0]];
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    int64_t v = SKV_SCHED_SCORE_REJECT;
    if (skv__dmap_trial(&a->d, req, sh, NULL) == 0) {
        skv_sched_agent_view av;
        skv__sched_agent_view(&av, P->s, a);
        v = skv__frag_selector_base(P->g->sel_state, &av, kv);
    }
    e->shape = sid;
    e->val = v;
    return v;
}

static bool eligible(const skv__pass *P, const skv__session *x)
{
    return skv__frag_selector_indexed(P->g->sel, P->g->sel_state) &&
           !(x->mode == SKV_SCHED_SINGLE_NODE && x->nk > 1) &&
           !x->ndesignated && !x->nneed_labels && !P->o->filter;
}

/* The group's agents reserved in this pass (found once per reservation:
 * the pass records none, and there are at most max_reservations). */
static void reserved(skv__fidx *ix, const skv__pass *P)
{
    if (P->ignore_resv || P->nresv == 0) {
        ix->nrv = 0;
        return;
    }
    if (ix->rv_epoch == P->epoch && ix->rv_n == P->nresv)
        return;
    ix->nrv = 0;
    for (uint32_t p = 0; p < P->g->nagents; p++)
        if (P->s->agents[P->g->agents[p]]->resv_epoch == P->epoch)
            ix->rv[ix->nrv++] = P->g->agents[p];
    ix->rv_epoch = P->epoch;
    ix->rv_n = P->nresv;
}

static void exclude(skv__fidx *ix, const skv__agent *a, uint32_t ai)
{
    ix->mk[a->fcls]++;
    /* out of the walk: its position maps to the never-scored id */
    ix->cid[a->gpos] = ix->capcls;
    ix->excl[ix->nexcl++] = ai;
}

static void restore(skv__fidx *ix, const skv_sched *s)
{
    for (uint32_t i = 0; i < ix->nexcl; i++) {
        const skv__agent *a = s->agents[ix->excl[i]];
        ix->mk[a->fcls]--;
        ix->cid[a->gpos] = a->fcls;
    }
    ix->nexcl = 0;
}

/* A reserved agent blocks x unless x holds the reservation or backfills
 * (as resv_blocks in place.c); the scan counts it when x fits there. */
static void exclude_reserved(skv__fidx *ix, skv__pass *P, uint32_t si,
                             uint32_t k, skv__miss *miss)
{
    const skv__session *x = P->s->sess[si];
    uint32_t hpos = 0;
    for (uint32_t i = 0; i < ix->nrv; i++) {
        const skv__agent *a = P->s->agents[ix->rv[i]];
        skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
        if (a->resv_epoch != P->epoch || a->resv_sess == si ||
            ix->cid[a->gpos] == ix->capcls ||
            (x->est_dur > 0 && a->resv_start != INT64_MAX &&
             P->now + x->est_dur <= a->resv_start))
            continue;
        exclude(ix, a, ix->rv[i]);
        if (!skv__pass_agent_ok(x, a) ||
            skv__dmap_trial(&a->d, x->k[k].req, sh, NULL) != 0)
            continue;
        miss->resv_blocked++;
        if (a->gpos >= hpos) {   /* the scan reports the last in group order */
            hpos = a->gpos;
            miss->resv_holder = a->resv_sess;
        }
    }
}

/* Agents that already took a kernel of this attempt (one per agent). */
static void exclude_marked(skv__fidx *ix, const skv_sched *s,
                           const skv__session *x, uint32_t k)
{
    if (!x->one_per_agent)
        return;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t ai = x->k[j].a.agent;
        if (ai != SKV__NONE && s->agents[ai]->mark_epoch == s->stamp &&
            ix->cid[s->agents[ai]->gpos] != ix->capcls)
            exclude(ix, s->agents[ai], ai);
    }
}

/* Room to leave out every marked and reserved agent. */
static int excl_room(skv__fidx *ix, const skv__session *x)
{
    uint32_t need = x->nk + ix->nrv;
    if (need <= ix->capexcl)
        return 0;
    uint32_t *ne = skv__reallocarray(ix->excl, need, sizeof(*ne));
    if (!ne)
        return SKV_ENOMEM;
    ix->excl = ne;
    ix->capexcl = need;
    return 0;
}

typedef struct best {
    int64_t score;
    uint64_t scored;        /* agents the scan would score */
    uint64_t tied;          /* of which at the best score */
} best;

static void scan_classes(skv__pass *P, skv__fidx *ix, const skv__session *x,
                         uint32_t k, const skv_sched_kernel_view *kv, best *b)
{
    uint32_t sid = shape_id(ix, x->k[k].req);
    uint32_t need = whole_need(P->s, x->k[k].req);
    memset(b, 0, sizeof(*b));
    ix->ntied = ix->nscored = 0;
    for (uint32_t i = 0; i < ix->nactive; i++) {
        if (!hot_may_fit(&ix->hot[i], x->k[k].req, need))
            continue;
        uint32_t id = ix->active[i];
        fcls *c = ix->cls[id];
        uint32_t avail = c->nmem - ix->mk[id];
        if (!avail || !class_ok(x, c))
            continue;
        int64_t v = class_value(P, c, sid, x->k[k].req, kv);
        if (v == SKV_SCHED_SCORE_REJECT)
            continue;
        ix->scored[ix->nscored++] = id;
        b->scored += avail;
        if (ix->ntied == 0 || v > b->score) {
            b->score = v;
            ix->ntied = 0;
            b->tied = 0;
        }
        if (v == b->score) {
            ix->tied[ix->ntied++] = id;
            b->tied += avail;
        }
    }
}

/* Lowest group position among the unmarked members of the tied classes. */
static uint32_t lowest_tied(const skv__fidx *ix, const skv_sched *s)
{
    uint32_t win = SKV__NONE, wpos = UINT32_MAX;
    for (uint32_t t = 0; t < ix->ntied; t++) {
        const fcls *c = ix->cls[ix->tied[t]];
        for (uint32_t m = 0; m < c->nmem; m++) {
            const skv__agent *a = s->agents[c->mem[m]];
            if (a->gpos < wpos && ix->cid[a->gpos] != ix->capcls) {
                wpos = a->gpos;
                win = c->mem[m];
            }
        }
    }
    return win;
}

/* Ties at random: the draw each tied agent gets in the scan (its position
 * among the scored agents), highest low 20 bits wins, then group order. */
static uint32_t random_tied(skv__fidx *ix, const skv__group *g, uint64_t rng)
{
    for (uint32_t i = 0; i < ix->nscored; i++)
        ix->fl[ix->scored[i]] = 1;
    for (uint32_t i = 0; i < ix->ntied; i++)
        ix->fl[ix->tied[i]] = 3;
    /* first the tied agents' ranks, without branches (the classes
     * interleave in group order: a branch per agent mispredicts) */
    uint64_t j = 0, n = 0;
    for (uint32_t p = 0; p < g->nagents; p++) {
        uint32_t f = ix->fl[ix->cid[p]];
        ix->pos[n] = j << 32 | p;
        n += f >> 1;
        j += f & 1;
    }
    int64_t bestd = -1;
    uint32_t wpos = 0;
    for (uint64_t i = 0; i < n; i++) {
        int64_t d = (int64_t)(skv__rng_at(rng, ix->pos[i] >> 32) & 0xFFFFF);
        if (d > bestd) {
            bestd = d;
            wpos = (uint32_t)ix->pos[i];
        }
    }
    for (uint32_t i = 0; i < ix->nscored; i++)
        ix->fl[ix->scored[i]] = 0;
    return g->agents[wpos];
}

uint32_t skv__fidx_choose(skv__pass *P, uint32_t si, uint32_t k,
                          const skv_sched_kernel_view *kv, skv__miss *miss,
                          bool *done)
{
    skv_sched *s = P->s;
    skv__group *g = P->g;
    const skv__session *x = s->sess[si];
    *done = false;
    if (!eligible(P, x) || prepare(s, g) != 0)
        return SKV__NONE;
    skv__fidx *ix = g->fidx;
    reserved(ix, P);
    if (excl_room(ix, x) != 0)
        return SKV__NONE;
    *done = true;
    exclude_marked(ix, s, x, k);
    exclude_reserved(ix, P, si, k, miss);
    best b;
    scan_classes(P, ix, x, k, kv, &b);
    bool random = skv__frag_selector_ties(g->sel_state) == SKV__FRAG_TIES_RANDOM;
    uint64_t *rng = skv__frag_selector_rng(g->sel_state);
    uint32_t win = SKV__NONE;
    if (b.tied == 1 || (b.tied > 1 && !random))
        win = lowest_tied(ix, s);
    else if (b.tied > 1)
        win = random_tied(ix, g, *rng);
    if (random)   /* one draw per agent the scan scores */
        *rng += b.scored * 0x9e3779b97f4a7c15ull;
    restore(ix, s);
    return win;
}
