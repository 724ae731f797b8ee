/* Gang placement: every kernel of a session on agents chosen by the
 * group's selector through the agents' allocation maps, or nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "pass_int.h"
#include "selector_frag_index.h"
#include "topo_rank.h"

static bool in_list(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

/* The agent carries every required label with the required value. */
static bool labels_ok(const skv__session *x, const skv__agent *a)
{
    for (size_t i = 0; i < x->nneed_labels; i++) {
        bool found = false;
        for (size_t j = 0; j < a->nlabels && !found; j++)
            found = !strcmp(a->labels[j].key, x->need_labels[i].key) &&
                    !strcmp(a->labels[j].value, x->need_labels[i].value);
        if (!found)
            return false;
    }
    return true;
}

bool skv__pass_agent_ok_constrained(const skv__session *x, const skv__agent *a)
{
    if (x->arch && strcmp(x->arch, a->arch) != 0)
        return false;
    if (x->nmodels && !in_list(x->models, x->nmodels, a->gpu_model))
        return false;
    if (x->ndesignated && !in_list(x->designated, x->ndesignated, a->id))
        return false;
    return labels_ok(x, a);
}

static void kview(skv_sched_kernel_view *kv, const skv_sched *s,
                  const skv__session *x, uint32_t k)
{
    kv->session_id = x->id;
    kv->kernel = k;
    kv->n_kernels = x->nk;
    kv->role = x->k[k].role;
    kv->priority = x->priority;
    kv->type = x->type;
    kv->n_slots = s->nslots;
    kv->request = x->k[k].req;
}

/* Single-node gangs: do all kernels fit on this agent together? */
static bool all_fit(skv__agent *a, const skv__session *x)
{
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    /* apply one by one on a private copy of the map */
    skv__dstate d = a->d;
    skv_sched_device_view dev[SKV_SCHED_DEVICES_MAX];
    if (a->d.ndev)
        memcpy(dev, a->d.dev, sizeof(*dev) * a->d.ndev);
    d.dev = dev;
    for (uint32_t k = 0; k < x->nk; k++) {
        size_t n;
        if (skv__dmap_trial(&d, x->k[k].req, sh, &n))
            return false;
        skv__dmap_apply(&d, x->k[k].req, sh, n);
    }
    return true;
}

static bool resv_blocks(const skv__pass *P, const skv__agent *a,
                        const skv__session *x, uint32_t si)
{
    if (P->ignore_resv || a->resv_epoch != P->epoch || a->resv_sess == si)
        return false;
    /* backfill: allowed when estimated to end before the reservation */
    return !(x->est_dur > 0 && a->resv_start != INT64_MAX &&
             P->now + x->est_dur <= a->resv_start);
}

typedef struct pick {
    uint32_t agent;
    int64_t score;
    uint32_t gpos;
} pick;

/* Score of agent ai for kernel k, or REJECT when it may not take it. */
static int64_t candidate(skv__pass *P, uint32_t si, uint32_t k,
                         const skv_sched_kernel_view *kv, uint32_t ai,
                         skv__miss *miss)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    skv__agent *a = s->agents[ai];
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    if ((x->one_per_agent && a->mark_epoch == s->stamp) ||
        !skv__pass_agent_ok(x, a))
        return SKV_SCHED_SCORE_REJECT;
    bool fits = (x->mode == SKV_SCHED_SINGLE_NODE && x->nk > 1)
                    ? all_fit(a, x)
                    : skv__dmap_trial(&a->d, x->k[k].req, sh, NULL) == 0;
    if (!fits)
        return SKV_SCHED_SCORE_REJECT;
    if (resv_blocks(P, a, x, si)) {
        miss->resv_blocked++;
        miss->resv_holder = a->resv_sess;
        return SKV_SCHED_SCORE_REJECT;
    }
    if (P->o->filter && !P->o->filter(x->id, k, a->id, P->o->filter_payload))
        return SKV_SCHED_SCORE_REJECT;
    skv_sched_agent_view av;
    skv__sched_agent_view(&av, s, a);
    return P->g->sel->score(P->g->sel_state, &av, kv);
}

/* Whole devices the kernel needs at least (prunes lower buckets). */
static uint32_t min_free(const skv_sched *s, const skv__session *x, uint32_t k)
{
    const skv_qty *req = (x->mode == SKV_SCHED_SINGLE_NODE && x->nk > 1)
                             ? x->total : x->k[k].req;
    uint64_t n = 0;
    /* whole-device slots are never pooled on any agent (agent.c enforces
     * it), so k whole units need k free devices */
    for (int j = 0; j < NSL; j++)
        if (s->whole_mask & (1u << j))
            n += (uint64_t)req[j] / SKV_QTY_SCALE;
    return n > SKV_SCHED_DEVICES_MAX ? SKV_SCHED_DEVICES_MAX + 1 : (uint32_t)n;
}

/* The hint makes every agent of a level equal to the selector: when the
 * first fitting agent has a layout to judge by, the first fitting ones of
 * the level (up to SKV__TOPO_RERANK_MAX from first) are ranked by it
 * (groups without layouts pay nothing). The extra candidates leave the
 * miss as the first fit left it. */
static uint32_t level_rerank(skv__pass *P, uint32_t si, uint32_t k,
                             const skv_sched_kernel_view *kv,
                             const skv__bucket *bk, uint32_t first,
                             skv__miss *miss)
{
    const skv__session *x = P->s->sess[si];
    skv__topo_want w;
    if (!P->s->agents[bk->ag[first]]->dnuma ||
        !skv__topo_rank_wanted(P->s, P->g, x, x->k[k].req, &w))
        return bk->ag[first];
    uint32_t tied[SKV__TOPO_RERANK_MAX] = {bk->ag[first]};
    size_t n = 1;
    skv__miss keep = *miss;
    for (uint32_t i = first + 1; i < bk->n && n < SKV__TOPO_RERANK_MAX; i++)
        if (candidate(P, si, k, kv, bk->ag[i], miss) != SKV_SCHED_SCORE_REJECT)
            tied[n++] = bk->ag[i];
    *miss = keep;
    return tied[skv__topo_rerank(P->s, tied, n, &w)];
}

/* What the free-device index can rule out for kernel k: agents with fewer
 * than lo free devices, agents without device room when it asks for any
 * device slot, agents whose shared room is below need (the largest shared
 * amount). */
typedef struct prune {
    uint32_t lo;
    bool devices;
    skv_qty need;
} prune;

static prune prune_of(const skv_sched *s, const skv__session *x, uint32_t k)
{
    prune p = {min_free(s, x, k), false, 0};
    const skv_qty *req = (x->mode == SKV_SCHED_SINGLE_NODE && x->nk > 1)
                             ? x->total : x->k[k].req;
    for (int j = 0; j < NSL; j++) {
        p.devices |= req[j] && ((s->whole_mask | s->share_mask) & (1u << j));
        if ((s->share_mask & (1u << j)) && req[j] > p.need)
            p.need = req[j];
    }
    return p;
}

static uint32_t choose_hinted(skv__pass *P, uint32_t si, uint32_t k,
                              const skv_sched_kernel_view *kv, skv__miss *miss)
{
    bool pack = P->g->sel->hints & SKV_SCHED_SEL_HINT_PACK;
    prune pr = prune_of(P->s, P->s->sess[si], k);
    uint32_t lo = pr.lo;
    bool devices = pr.devices;
    skv_qty need = pr.need;
    /* levels: agents without device room last (only device-free kernels
     * can use them), then by free devices in the hint's order */
    for (uint32_t step = 0; step < SKV__NBUCKETS; step++) {
        uint32_t b = step == SKV__NBUCKETS - 1 ? SKV__BUCKET_FULL
                     : pack ? step : SKV__BUCKET_FULL - 1 - step;
        if (b < lo || (b == SKV__BUCKET_FULL && devices))
            continue;
        const skv__bucket *bk = &P->g->bucket[b];
        /* a skipped agent's trial would fail (no share fits more than
         * the room of every shareable device), so the first agent taken is
         * the one the plain scan takes; the packed bucket is mostly such
         * agents, whose trials were most of a pass */
        for (uint32_t i = 0; i < bk->n; i++)
            if ((bk->room[i] >= need || !skv__sched_room_skip) &&
                candidate(P, si, k, kv, bk->ag[i], miss) != SKV_SCHED_SCORE_REJECT)
                return level_rerank(P, si, k, kv, bk, i, miss);
    }
    return SKV__NONE;
}

bool skv__sched_rr_walk = true;

/* The index's verdict on a, as choose_hinted reads it per bucket: its
 * trial would fail, so skipping it leaves the scan's choice (a walk that
 * finds nothing, the common case of a full cluster, then reads one byte
 * and one room per agent instead of trying each). */
static bool rr_ruled_out(const skv__group *g, const skv__agent *a,
                         const prune *pr)
{
    if (a->bkey == SKV__BUCKET_FULL ? pr->devices : a->bkey < pr->lo)
        return true;
    return g->bucket[a->bkey].room[a->bpos] < pr->need;
}

/* roundrobin scores an agent by its distance after the cursor in group
 * order (builtin.c), all distinct, so the plain scan's choice is the first
 * agent that fits walking from the cursor, and its topology candidates the
 * next ones that fit (up to SKV__TOPO_RERANK_MAX, in score order): stop
 * there instead of trying the whole group, passing over agents the
 * free-device index rules out untried. The scan's miss counts every
 * reserved agent that would fit, so a pass holding reservations scans. */
static bool rr_choose(skv__pass *P, uint32_t si, uint32_t k,
                      const skv_sched_kernel_view *kv, skv__miss *miss,
                      uint32_t *out)
{
    const skv__group *g = P->g;
    uint32_t cursor;
    if (!skv__sched_rr_walk || !skv__sel_rr_cursor(g, &cursor) ||
        (!P->ignore_resv && P->nresv))
        return false;
    const skv__session *x = P->s->sess[si];
    skv__topo_want w;
    bool rank = skv__topo_rank_wanted(P->s, g, x, x->k[k].req, &w);
    uint32_t top[SKV__TOPO_RERANK_MAX];
    size_t n = 0, want = rank ? SKV__TOPO_RERANK_MAX : 1;
    uint32_t start = g->nagents ? cursor % g->nagents : 0;
    prune pr = prune_of(P->s, x, k);
    for (uint32_t d = 0; d < g->nagents && n < want; d++) {
        uint32_t pos = start + d < g->nagents ? start + d
                                              : start + d - g->nagents;
        if (!rr_ruled_out(g, P->s->agents[g->agents[pos]], &pr) &&
            candidate(P, si, k, kv, g->agents[pos], miss) !=
                SKV_SCHED_SCORE_REJECT)
            top[n++] = g->agents[pos];
    }
    *out = n == 0 ? SKV__NONE
         : n == 1 ? top[0] : top[skv__topo_rerank(P->s, top, n, &w)];
    return true;
}

static uint32_t choose(skv__pass *P, uint32_t si, uint32_t k, skv__miss *miss)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    skv__group *g = P->g;
    skv_sched_kernel_view kv;
    kview(&kv, s, x, k);
    if (g->sel->hints & (SKV_SCHED_SEL_HINT_PACK | SKV_SCHED_SEL_HINT_SPREAD))
        return choose_hinted(P, si, k, &kv, miss);
    uint32_t rr;
    if (rr_choose(P, si, k, &kv, miss, &rr))
        return rr;
    bool done;   /* frag/fgd: the same choice from free-state classes */
    uint32_t fast = skv__fidx_choose(P, si, k, &kv, miss, &done);
    if (done)
        return fast;
    pick best = {SKV__NONE, 0, 0};
    skv__topo_top top = {.n = 0};
    for (uint32_t i = 0; i < g->nagents; i++) {
        uint32_t ai = g->agents[i];
        int64_t sc = candidate(P, si, k, &kv, ai, miss);
        if (sc == SKV_SCHED_SCORE_REJECT)
            continue;
        const skv__agent *a = s->agents[ai];
        skv__topo_top_add(&top, ai, sc);
        if (best.agent == SKV__NONE || sc > best.score ||
            (sc == best.score && a->gpos < best.gpos))
            best = (pick){ai, sc, a->gpos};
    }
    skv__topo_want w;
    if (top.n > 1 && skv__topo_rank_wanted(s, g, x, x->k[k].req, &w))
        return top.ai[skv__topo_rerank(s, top.ai, top.n, &w)];
    return best.agent;
}

bool skv__pass_fits_on(skv__pass *P, uint32_t si, uint32_t ai)
{
    skv__session *x = P->s->sess[si];
    skv_sched_kernel_view kv;
    skv__miss miss;
    memset(&miss, 0, sizeof(miss));
    miss.resv_holder = SKV__NONE;
    if (x->one_per_agent) /* as skv__pass_place: no agent taken yet */
        P->s->stamp++;
    kview(&kv, P->s, x, 0);
    return candidate(P, si, 0, &kv, ai, &miss) != SKV_SCHED_SCORE_REJECT;
}

static int apply_kernel(skv__pass *P, skv__session *x, uint32_t k, uint32_t ai)
{
    skv__agent *a = P->s->agents[ai];
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    size_t n = 0;
    skv__kalloc *ka = &x->k[k].a;
    ka->dev = NULL;
    ka->res = NULL;
    ka->nres = 0;
    int rc = P->trial_only ? skv__dmap_trial(&a->d, x->k[k].req, sh, &n)
                           : skv__sched_map_alloc(a, ka, x->k[k].req, sh, &n);
    if (rc)
        return rc; /* the map refused what the mirror predicted: no fit */
    if (n) {
        ka->dev = skv__malloc(n * sizeof(*sh));
        if (!ka->dev) {
            skv__sched_map_release(a, ka);
            return SKV_ENOMEM;
        }
        memcpy(ka->dev, sh, n * sizeof(*sh));
    }
    ka->ndev = (uint16_t)n;
    ka->agent = ai;
    skv__sched_agent_apply(P->s, a, x->k[k].req, sh, n);
    a->mark_epoch = P->s->stamp;
    return 0;
}

void skv__pass_unplace(skv__pass *P, uint32_t si)
{
    skv__session *x = P->s->sess[si];
    for (uint32_t k = x->nk; k-- > 0;) {
        skv__kalloc *ka = &x->k[k].a;
        if (ka->agent == SKV__NONE)
            continue;
        skv__agent *a = P->s->agents[ka->agent];
        skv__sched_map_release(a, ka);
        skv__sched_agent_release(P->s, a, x->k[k].req, ka->dev, ka->ndev);
        skv__free(ka->dev);
        ka->dev = NULL;
        ka->ndev = 0;
        ka->agent = SKV__NONE;
    }
}

int skv__pass_place(skv__pass *P, uint32_t si, skv__miss *miss)
{
    skv__session *x = P->s->sess[si];
    memset(miss, 0, sizeof(*miss));
    miss->resv_holder = SKV__NONE;
    P->s->stamp++;
    uint32_t first = SKV__NONE;
    for (uint32_t k = 0; k < x->nk; k++) {
        uint32_t ai;
        if (x->mode == SKV_SCHED_SINGLE_NODE && k > 0)
            ai = first; /* all_fit checked the whole gang there */
        else
            ai = choose(P, si, k, miss);
        int rc = ai == SKV__NONE ? SKV_ENOSPC : apply_kernel(P, x, k, ai);
        if (rc) {
            miss->kernel = k;
            skv__pass_unplace(P, si);
            return rc;
        }
        if (k == 0)
            first = ai;
    }
    return 0;
}

void skv__pass_notify(skv__pass *P, uint32_t si)
{
    skv__session *x = P->s->sess[si];
    if (!P->g->sel->placed)
        return;
    for (uint32_t k = 0; k < x->nk; k++) {
        skv_sched_kernel_view kv;
        skv_sched_agent_view av;
        kview(&kv, P->s, x, k);
        skv__sched_agent_view(&av, P->s, P->s->agents[x->k[k].a.agent]);
        P->g->sel->placed(P->g->sel_state, &av, &kv);
    }
}
