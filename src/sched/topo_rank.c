/* Layout-aware agent choice (topo_rank.h). The selectors score agents by
 * free capacity, blind to where the free devices sit: two agents with two
 * free GPUs each score alike although one pair shares a PCIe switch and
 * the other spans both sockets. The pass takes the selector's best
 * candidates (the first SKV__TOPO_RERANK_MAX by score, then group order:
 * the agents it would take next) and of those the one whose devices for
 * the kernel are in the closest proximity class (the worst link among
 * them: same switch, host bridge, NUMA node, across sockets), the
 * selector's order on equal classes. Deterministic, bounded (16 affinity
 * picks per multi-GPU decision), and today's choice wherever no agent has
 * a layout (every rank is then NONE: the first candidate wins).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "topo_rank.h"

#include "selector_frag.h"
#include "sokovan/topo.h"

bool skv__topo_rank_wanted(const skv_sched *s, const skv__group *g,
                           const skv__session *x, const skv_qty *req,
                           skv__topo_want *w)
{
    if (x->mode == SKV_SCHED_SINGLE_NODE && x->nk > 1)
        return false;   /* the gang's devices are judged together */
    /* random ties are the selector's own (seeded, replayed draw for
     * draw): they stay */
    if (g->sel && g->sel->score == skv__frag_selector_score &&
        skv__frag_selector_ties(g->sel_state) == SKV__FRAG_TIES_RANDOM)
        return false;
    size_t found = 0;
    for (int j = 0; j < NSL; j++) {
        if (!req[j] || !(s->whole_mask & (1u << j)))
            continue;
        if (req[j] % SKV_QTY_SCALE || req[j] / SKV_QTY_SCALE < 2)
            return false;
        w->slot = (uint8_t)j;
        w->k = (size_t)(req[j] / SKV_QTY_SCALE);
        found++;
    }
    return found == 1 && w->k <= SKV_SCHED_DEVICES_MAX;
}

/* The link class of devices x and y: the matrix, or by NUMA node. */
static uint32_t link_of(const skv__agent *a, size_t x, size_t y)
{
    if (a->links)
        return a->links[x * a->d.ndev + y];
    return a->dnuma[x] >= 0 && a->dnuma[x] == a->dnuma[y] ? SKV_TOPO_LINK_NODE
                                                          : SKV_TOPO_LINK_SYS;
}

uint32_t skv__topo_rank(const skv__agent *a, const skv__topo_want *w)
{
    size_t pick[SKV_SCHED_DEVICES_MAX];
    if (!a->dnuma || !a->map || a->mslot[w->slot] == SKV_SCHED_NO_SLOT ||
        !skv__sched_topo_pick(a, a->mslot[w->slot], w->k, pick))
        return SKV__TOPO_RANK_NONE;
    uint32_t worst = 0;
    for (size_t i = 0; i < w->k; i++)
        for (size_t j = i + 1; j < w->k; j++) {
            uint32_t l = link_of(a, pick[i], pick[j]);
            worst = l > worst ? l : worst;
        }
    return worst;
}

/* [L] = the most devices within link class L of one device (itself
 * included), once per agent: k devices cannot all be within L of each
 * other unless some device has k - 1 within L. */
static const uint8_t *reach(skv__agent *a)
{
    if (a->topo_reach[SKV_TOPO_LINK_PIX])
        return a->topo_reach;
    for (uint32_t l = SKV_TOPO_LINK_PIX; l <= SKV_TOPO_LINK_SYS; l++)
        for (size_t x = 0; x < a->d.ndev; x++) {
            size_t n = 1;
            for (size_t y = 0; y < a->d.ndev; y++)
                n += y != x && link_of(a, x, y) <= l;
            if (n > a->topo_reach[l])
                a->topo_reach[l] = (uint8_t)n;
        }
    return a->topo_reach;
}

/* No rank of a for w can be below this. */
static uint32_t floor_of(skv__agent *a, const skv__topo_want *w)
{
    if (!a->dnuma || !a->d.ndev)
        return SKV__TOPO_RANK_NONE;
    const uint8_t *r = reach(a);
    for (uint32_t l = SKV_TOPO_LINK_PIX; l <= SKV_TOPO_LINK_SYS; l++)
        if (r[l] >= w->k)
            return l;
    return SKV__TOPO_RANK_NONE;
}

/* A candidate only wins with a rank below the best so far: one whose
 * floor is not below it is not ranked (an affinity pick saved; idle
 * agents of one shape cost one pick per decision). */
size_t skv__topo_rerank(const skv_sched *s, const uint32_t *tied, size_t n,
                        const skv__topo_want *w)
{
    size_t best = 0;
    uint32_t best_rank = 0;
    for (size_t i = 0; i < n; i++) {
        skv__agent *a = s->agents[tied[i]];
        if (i > 0 && floor_of(a, w) >= best_rank)
            continue;
        uint32_t r = skv__topo_rank(a, w);
        if (i == 0 || r < best_rank) {
            best_rank = r;
            best = i;
        }
    }
    return best;
}

void skv__topo_top_add(skv__topo_top *t, uint32_t ai, int64_t sc)
{
    size_t at = t->n;
    while (at > 0 && t->sc[at - 1] < sc)
        at--;
    if (at == SKV__TOPO_RERANK_MAX)
        return;
    size_t n = t->n < SKV__TOPO_RERANK_MAX ? t->n : SKV__TOPO_RERANK_MAX - 1;
    memmove(&t->ai[at + 1], &t->ai[at], (n - at) * sizeof t->ai[0]);
    memmove(&t->sc[at + 1], &t->sc[at], (n - at) * sizeof t->sc[0]);
    t->ai[at] = ai;
    t->sc[at] = sc;
    t->n = n + 1;
}
