/* The free-state class index of a group with a fragmentation selector.
 *
 * The scan in place.c scores every agent for every kernel; a frag/fgd
 * score costs ~200 ns, so a decision over 10,000 agents costs ~2 ms.
 * Everything the scan reads about an agent (fit through the map, the
 * score) is a function of its free state: capacity, use, devices, model,
 * architecture, schedulable. Agents with equal free state form a class;
 * a class's score for a request shape is computed once and kept in the
 * shape's score vector (the class key never changes, only its members
 * do), and a placement or
 * release only moves the agents it touched to another class. A decision
 * then costs O(classes), not O(agents).
 *
 * Same decisions as the scan, draw for draw: with ties=random the scan adds
 * to each scored agent's score the low 20 bits of the next draw of the
 * selector's splitmix64 generator, in group order. A draw's value depends
 * only on its position (the generator adds a constant per draw), so when
 * several agents tie for the best score the classes' position bitmaps give
 * each tied agent its rank among the scored agents (selector_frag_pset.c);
 * with a single best agent no draw matters. The generator then advances
 * by the number of agents the scan would have scored.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "selector_frag.h"
#include "selector_frag_index_int.h"
#include "topo_rank.h"

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
    skv__fpset_fini(&c->ps);
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
    h->sched = a->schedulable;
    h->dev_mask = a->d.dev_slot_mask;
    if (!a->schedulable)   /* fits nothing: never a candidate */
        h->free[0] = h->free[1] = h->free[2] = -1;
}

/* A free id: fits nothing, no members. */
static void hot_empty(fhot *h)
{
    memset(h, 0, sizeof(*h));
    h->free[0] = h->free[1] = h->free[2] = -1;
    h->w1 = UINT32_MAX;
}

/* The hot copy of the class's membership. */
static void hot_members(skv__fidx *ix, const fcls *c)
{
    fhot *h = &ix->hot[c->id];
    h->nmem = c->nmem;
    h->first = c->nmem ? c->ps.e[0].w * 64 + (uint32_t)__builtin_ctzll(c->ps.e[0].m) : 0;
    h->w1 = c->ps.n == 1 ? c->ps.e[0].w : UINT32_MAX;
    h->m1 = c->ps.n == 1 ? c->ps.e[0].m : 0;
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
    if (c->ndev) /* an agent without devices has no array (NULL) */
        memcpy(c->dev, a->d.dev, c->ndev * sizeof(*c->dev));
    for (uint32_t i = 0; i < c->ndev; i++)
        c->dev[i].id = NULL;
    uint32_t id = ix->freel[--ix->nfree];
    for (uint32_t i = 0; i < ix->nshapes; i++)
        if (ix->sval[i])
            ix->sval[i][id] = FC_UNSET;
    ix->cls[id] = c;
    c->next = ix->head[h & ix->mask];
    ix->head[h & ix->mask] = id;
    c->apos = ix->nactive;
    c->id = id;
    hot_fill(&ix->hot[id], a);
    if (ix->hot[id].nfree)
        ix->withfree[id / 64] |= 1ull << (id % 64);
    skv_qty av[NSL];
    skv__dmap_avail(&a->d, av);
    for (int j = 0; j < NSL; j++)   /* by slot: a tally reads 3-4 slots */
        ix->avail[(size_t)j * ix->capcls + id] = av[j];
    if (id >= ix->hiw)
        ix->hiw = id + 1;
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
    ix->cls[last]->apos = c->apos;
    hot_empty(&ix->hot[id]);
    ix->withfree[id / 64] &= ~(1ull << (id % 64));
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
    skv__fpset_del(&c->ps, a->gpos);
    if (c->nmem == 0)
        cls_drop(ix, a->fcls);
    else
        hot_members(ix, c);
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
    ix->gen++;
    if (a->fcls != SKV__NONE)
        member_del(ix, s, a);
    uint32_t id = cls_find(ix, a, h);
    if (id == SKV__NONE && (id = cls_new(ix, a, h)) == SKV__NONE)
        return SKV_ENOMEM;
    fcls *c = ix->cls[id];
    uint32_t *nm = c->mem;
    if (c->nmem == c->capmem) {
        uint32_t nc = c->capmem ? c->capmem * 2 : 4;
        if ((nm = skv__reallocarray(c->mem, nc, sizeof(*nm))) != NULL) {
            c->mem = nm;
            c->capmem = nc;
        }
    }
    if (!nm || skv__fpset_add(&c->ps, a->gpos) != 0) {
        if (c->nmem == 0)
            cls_drop(ix, id);
        return SKV_ENOMEM;
    }
    a->fcls = id;
    a->fpos = c->nmem;
    c->mem[c->nmem++] = ai;
    ix->cid[a->gpos] = id;
    hot_members(ix, c);
    return 0;
}

static void drop_scores(skv__fidx *ix)
{
    for (uint32_t i = 0; ix->sval && i < FC_SHAPES; i++) {
        skv__free(ix->sval[i]);
        ix->sval[i] = NULL;
    }
    ix->cbytes = 0;
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
    skv__free(ix->withfree);
    skv__free(ix->avail);
    skv__free(ix->cid);
    skv__free(ix->dirty);
    skv__free(ix->mk);
    skv__free(ix->excl);
    skv__free(ix->rv);
    skv__free(ix->tied);
    skv__free(ix->scored);
    skv__free(ix->scval);
    skv__free(ix->smask);
    skv__free(ix->tmask);
    skv__free(ix->shapes);
    skv__free(ix->shead);
    drop_scores(ix);
    skv__free(ix->sval);
    skv__free(ix->rcache);
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
    ix->withfree = skv__calloc(ix->capcls / 64 + 1, sizeof(uint64_t));
    ix->avail = skv__calloc((size_t)ix->capcls * NSL, sizeof(skv_qty));
    ix->cid = skv__calloc(n + 1, sizeof(uint32_t));
    ix->dirty = skv__calloc(n + 1, sizeof(uint32_t));
    ix->mk = skv__calloc(ix->capcls + 1, sizeof(uint32_t));
    ix->rv = skv__calloc(n + 1, sizeof(uint32_t));
    ix->tied = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->scored = skv__calloc(ix->capcls, sizeof(uint32_t));
    ix->scval = skv__calloc(ix->capcls, sizeof(int64_t));
    ix->nwords = (n + 63) / 64;
    ix->smask = skv__calloc(ix->nwords + 1, sizeof(uint64_t));
    ix->tmask = skv__calloc(ix->nwords + 1, sizeof(uint64_t));
    ix->shapes = skv__calloc(FC_SHAPES, sizeof(*ix->shapes));
    ix->shead = skv__calloc(FC_SHEAD, sizeof(uint32_t));
    ix->sval = skv__calloc(FC_SHAPES, sizeof(*ix->sval));
    if (!ix->cls || !ix->freel || !ix->head || !ix->active || !ix->hot || !ix->withfree ||
        !ix->avail || !ix->cid ||
        !ix->dirty || !ix->mk || !ix->rv || !ix->tied || !ix->scored || !ix->scval || !ix->smask ||
        !ix->tmask ||
        !ix->shapes || !ix->shead || !ix->sval)
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
        ix->layouts |= a->dnuma != NULL;
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

int skv__fidx_prepare(skv_sched *s, skv__group *g)
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
uint32_t skv__fidx_shape_id(skv__fidx *ix, const skv_qty *req)
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
        ix->gen++;   /* the reasons cached by shape id */
        memset(ix->shead, 0xFF, FC_SHEAD * sizeof(uint32_t));
        drop_scores(ix);
    }
    uint32_t id = ix->nshapes++;
    memcpy(ix->shapes[id].req, req, sizeof(ix->shapes[id].req));
    ix->shapes[id].hash = h;
    ix->shapes[id].next = ix->shead[b];
    ix->shead[b] = id;
    return id;
}

bool skv__fidx_class_ok(const skv__session *x, const fcls *c)
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

/* The score vector of shape sid (made on first use); NULL over the
 * budget: those scores are computed every time, still exact. */
int64_t *skv__fidx_shape_scores(skv__fidx *ix, uint32_t sid)
{
    if (ix->sval[sid])
        return ix->sval[sid];
    size_t bytes = (size_t)ix->capcls * sizeof(int64_t);
    if (ix->cbytes + bytes > FC_CACHE_BYTES)
        return NULL;
    int64_t *v = skv__reallocarray(NULL, ix->capcls, sizeof(*v));
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < ix->capcls; i++)
        v[i] = FC_UNSET;
    ix->cbytes += bytes;
    return ix->sval[sid] = v;
}

/* The class's score for the shape: fit through a member's map, then the
 * selector's base score, as candidate() in place.c computes them. */
static int64_t class_value(skv__pass *P, const fcls *c, int64_t *sv, uint32_t id,
                           const skv_qty *req, const skv_sched_kernel_view *kv)
{
    if (sv && sv[id] != FC_UNSET)
        return sv[id] == FC_NOFIT ? SKV_SCHED_SCORE_REJECT : sv[id];
    skv__agent *a = P->s->agents[c->mem[0]];
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    int64_t v = FC_NOFIT;   /* kept apart for the reason's tally */
    if (skv__dmap_trial(&a->d, req, sh, NULL) == 0) {
        skv_sched_agent_view av;
        skv__sched_agent_view(&av, P->s, a);
        v = skv__frag_selector_base(P->g->sel_state, &av, kv);
    }
    if (sv)
        sv[id] = v;
    return v == FC_NOFIT ? SKV_SCHED_SCORE_REJECT : v;
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

/* Class id as the scan over every agent would see its members. */
static inline void scan_one(skv__pass *P, skv__fidx *ix, const skv__session *x,
                            uint32_t k, const skv_sched_kernel_view *kv,
                            int64_t *sv, uint32_t need, bool constrained,
                            uint32_t id, best *b)
{
    const fhot *h = &ix->hot[id];
    if (!hot_may_fit(h, x->k[k].req, need))
        return;
    uint32_t avail = h->nmem - ix->mk[id];
    if (!avail || (constrained && !skv__fidx_class_ok(x, ix->cls[id])))
        return;
    int64_t v = class_value(P, ix->cls[id], sv, id, x->k[k].req, kv);
    if (v == SKV_SCHED_SCORE_REJECT)
        return;
    ix->scval[ix->nscored] = v;
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

/* Every class that may take kernel k; a request for whole devices only
 * among the classes with an entirely free one. */
static void scan_classes(skv__pass *P, skv__fidx *ix, const skv__session *x,
                         uint32_t k, const skv_sched_kernel_view *kv, best *b)
{
    uint32_t sid = skv__fidx_shape_id(ix, x->k[k].req);
    uint32_t need = whole_need(P->s, x->k[k].req);
    int64_t *sv = skv__fidx_shape_scores(ix, sid);
    memset(b, 0, sizeof(*b));
    ix->ntied = ix->nscored = 0;
    bool constrained = x->arch || x->nmodels;
    if (need == 0) {
        for (uint32_t id = 0; id < ix->hiw; id++)
            scan_one(P, ix, x, k, kv, sv, need, constrained, id, b);
        return;
    }
    for (uint32_t w = 0; w <= (ix->hiw - 1) / 64 && ix->hiw; w++)
        for (uint64_t m = ix->withfree[w]; m; m &= m - 1)
            scan_one(P, ix, x, k, kv, sv, need, constrained,
                     w * 64 + (uint32_t)__builtin_ctzll(m), b);
}

/* dst |= the members of class id (late in an openb replay most classes
 * are a node or two: their word is in the hot copy). */
static void hot_or(uint64_t *dst, const skv__fidx *ix, uint32_t id)
{
    const fhot *h = &ix->hot[id];
    if (h->w1 != UINT32_MAX)
        dst[h->w1] |= h->m1;
    else
        skv__fpset_or(dst, &ix->cls[id]->ps);
}

/* The scored and tied agents of this decision as group-position bitmaps:
 * their classes' members less the agents left out of it. */
static void tie_masks(skv__fidx *ix, const skv_sched *s, bool scored)
{
    memset(ix->smask, 0, ix->nwords * sizeof(uint64_t));
    memset(ix->tmask, 0, ix->nwords * sizeof(uint64_t));
    for (uint32_t i = 0; scored && i < ix->nscored; i++)
        hot_or(ix->smask, ix, ix->scored[i]);
    for (uint32_t i = 0; i < ix->ntied; i++)
        hot_or(ix->tmask, ix, ix->tied[i]);
    for (uint32_t i = 0; i < ix->nexcl; i++) {
        uint32_t p = s->agents[ix->excl[i]]->gpos;
        ix->smask[p / 64] &= ~(1ull << (p % 64));
        ix->tmask[p / 64] &= ~(1ull << (p % 64));
    }
}

/* The tied agent the scan picks: the lowest in group order, or with ties
 * at random the one whose draw (by its rank among the scored agents) has
 * the highest low 20 bits, then the lowest in group order. */
static uint32_t pick_tied(skv__fidx *ix, const skv_sched *s,
                          const skv__group *g, bool random, uint64_t rng)
{
    tie_masks(ix, s, random);
    uint32_t p = random ? skv__fpset_pick_random(ix->smask, ix->tmask, ix->nwords, rng)
                        : skv__fpset_first(ix->tmask, ix->nwords);
    return p < g->nagents ? g->agents[p] : SKV__NONE;
}

/* The highest class value below *above (any on the first call); false
 * when none is left. */
static bool next_value(const skv__fidx *ix, bool first, int64_t *above)
{
    bool any = false;
    int64_t v = 0;
    for (uint32_t i = 0; i < ix->nscored; i++) {
        int64_t x = ix->scval[i];
        if ((first || x < *above) && (!any || x > v)) {
            v = x;
            any = true;
        }
    }
    *above = v;
    return any;
}

/* The selector's best candidates as the scan lists them (topo_rank.h):
 * by value, then group order, the first SKV__TOPO_RERANK_MAX; one value
 * level at a time (its classes' members less the agents left out). */
static size_t top_agents(skv__fidx *ix, const skv_sched *s,
                         const skv__group *g, uint32_t *out)
{
    size_t n = 0;
    int64_t v = 0;
    for (bool first = true; n < SKV__TOPO_RERANK_MAX &&
                            next_value(ix, first, &v); first = false) {
        memset(ix->tmask, 0, ix->nwords * sizeof(uint64_t));
        for (uint32_t i = 0; i < ix->nscored; i++)
            if (ix->scval[i] == v)
                hot_or(ix->tmask, ix, ix->scored[i]);
        for (uint32_t i = 0; i < ix->nexcl; i++) {
            uint32_t p = s->agents[ix->excl[i]]->gpos;
            ix->tmask[p / 64] &= ~(1ull << (p % 64));
        }
        for (uint32_t i = 0; i < ix->nwords && n < SKV__TOPO_RERANK_MAX; i++)
            for (uint64_t m = ix->tmask[i]; m && n < SKV__TOPO_RERANK_MAX;
                 m &= m - 1) {
                uint32_t p = i * 64 + (uint32_t)__builtin_ctzll(m);
                if (p < g->nagents)
                    out[n++] = g->agents[p];
            }
    }
    return n;
}

/* The agent the scan takes when it ranks its best candidates by layout. */
static uint32_t pick_layout(skv__fidx *ix, const skv_sched *s,
                            const skv__group *g, const skv__topo_want *w)
{
    uint32_t top[SKV__TOPO_RERANK_MAX];
    size_t n = top_agents(ix, s, g, top);
    return n ? top[skv__topo_rerank(s, top, n, w)] : SKV__NONE;
}

uint32_t skv__fidx_choose(skv__pass *P, uint32_t si, uint32_t k,
                          const skv_sched_kernel_view *kv, skv__miss *miss,
                          bool *done)
{
    skv_sched *s = P->s;
    skv__group *g = P->g;
    const skv__session *x = s->sess[si];
    *done = false;
    if (!eligible(P, x) || skv__fidx_prepare(s, g) != 0)
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
    skv__topo_want w;
    if (b.scored > 1 && ix->layouts && !random &&
        skv__topo_rank_wanted(s, g, x, x->k[k].req, &w))
        win = pick_layout(ix, s, g, &w);
    else if (b.tied > 0)
        win = pick_tied(ix, s, g, random && b.tied > 1, *rng);
    if (random)   /* one draw per agent the scan scores */
        *rng += b.scored * 0x9e3779b97f4a7c15ull;
    restore(ix, s);
    return win;
}
