/* Allocation maps: where a feasible amount goes (FILL, EVENLY, INTERLEAVE,
 * single-device placement, NUMA preference tiers). Works in the map's
 * scratch arrays; the caller has already checked feasibility, so every
 * routine here places exactly the amount it is given.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

#define NONE SIZE_MAX
#define ANY_NODE UINT32_MAX

void skv__alloc_tiers(skv_alloc_map *m, const skv__alloc_ctx *ctx)
{
    uint32_t t = 0;
    for (size_t n = 0; n < m->nnodes; n++)
        m->node_tier[n] = SKV__ALLOC_OUT;
    /* Preferred nodes get tiers 0, 1, ... in list order; the rest share
     * the last tier. */
    for (size_t i = 0; i < ctx->nprefer; i++) {
        long pos = skv__alloc_node_find(m, ctx->prefer[i]);
        if (pos >= 0)
            m->node_tier[pos] = t++;
    }
    for (size_t n = 0; n < m->nnodes; n++)
        if (m->node_tier[n] == SKV__ALLOC_OUT)
            m->node_tier[n] = t;
    m->ntiers = t + 1;
    if (ctx->subset) {
        for (size_t d = 0; d < m->ndevs; d++)
            m->tier[d] = SKV__ALLOC_OUT;
        for (size_t i = 0; i < ctx->nsubset; i++) {
            size_t d = ctx->subset[i];
            if (skv__alloc_numa_ok(ctx, m->devs[d].numa))
                m->tier[d] = m->node_tier[m->devs[d].node];
        }
        return;
    }
    for (size_t d = 0; d < m->ndevs; d++)
        m->tier[d] = skv__alloc_numa_ok(ctx, m->devs[d].numa)
                         ? m->node_tier[m->devs[d].node]
                         : SKV__ALLOC_OUT;
}

static inline bool elig(const skv_alloc_map *m, size_t s, size_t d)
{
    return m->tier[d] != SKV__ALLOC_OUT && skv__alloc_slot_open(m, s, d);
}

/* FILL order: most used first, then least free (the tightest fit). */
static inline bool fill_better(const skv__alloc_slot *sl, size_t a, size_t b)
{
    if (sl->used[a] != sl->used[b])
        return sl->used[a] > sl->used[b];
    return sl->cap[a] - sl->used[a] < sl->cap[b] - sl->used[b];
}

/* EVENLY order: least used first, then most free. */
static inline bool even_better(const skv__alloc_slot *sl, size_t a, size_t b)
{
    if (sl->used[a] != sl->used[b])
        return sl->used[a] < sl->used[b];
    return sl->cap[a] - sl->used[a] > sl->cap[b] - sl->used[b];
}

/* The device that takes all of q alone: lowest tier, then by strategy, then
 * device order (ties keep the earlier device). NONE when no device can. */
static size_t pick_single(const skv_alloc_map *m, size_t s, skv_qty q,
                          skv_alloc_strategy strategy)
{
    const skv__alloc_slot *sl = &m->slots[s];
    size_t best = NONE;
    for (size_t d = 0; d < m->ndevs; d++) {
        if (!elig(m, s, d) || skv__alloc_free_at(sl, d) < q)
            continue;
        if (best == NONE || m->tier[d] < m->tier[best]) {
            best = d;
            continue;
        }
        if (m->tier[d] > m->tier[best])
            continue;
        bool better = strategy == SKV_ALLOC_FILL ? fill_better(sl, d, best)
                                                 : even_better(sl, d, best);
        if (better)
            best = d;
    }
    return best;
}

static inline bool fill_candidate(const skv_alloc_map *m, size_t s, size_t d,
                                  uint32_t tier, uint32_t node)
{
    return m->tier[d] == tier && m->slots[s].plan[d] == 0 && elig(m, s, d) &&
           (node == ANY_NODE || m->devs[d].node == node);
}

/* FILL: drain devices one after the other in FILL order. node ANY_NODE
 * means every node of the tier. Devices with equal (used, free) keep their
 * key while others are drained, so each round takes the whole run of
 * devices sharing the best key in device order: the same result as picking
 * the best device again and again, in O(devices * distinct keys). */
static void place_fill(skv_alloc_map *m, size_t s, uint32_t tier,
                       uint32_t node, skv_qty amount)
{
    skv__alloc_slot *sl = &m->slots[s];
    while (amount > 0) {
        size_t best = NONE;
        for (size_t d = 0; d < m->ndevs; d++)
            if (fill_candidate(m, s, d, tier, node) &&
                (best == NONE || fill_better(sl, d, best)))
                best = d;
        if (best == NONE)
            return; /* unreachable: the caller checked the free amount */
        skv_qty bu = sl->used[best], bc = sl->cap[best];
        for (size_t d = best; d < m->ndevs && amount > 0; d++) {
            if (!fill_candidate(m, s, d, tier, node) || sl->used[d] != bu ||
                sl->cap[d] != bc)
                continue;
            skv_qty f = skv__alloc_free_at(sl, d);
            skv_qty take = f < amount ? f : amount;
            sl->plan[d] = take;
            amount -= take;
        }
    }
}

static skv_qty clamp_level(const skv__alloc_slot *sl, size_t d, skv_qty level)
{
    skv_qty a = level - sl->used[d];
    if (a <= 0)
        return 0;
    skv_qty f = sl->cap[d] - sl->used[d];
    return a < f ? a : f;
}

/* Amount the tier's devices take when usage is raised to level. */
static skv_qty level_sum(const skv_alloc_map *m, size_t s, uint32_t tier,
                         skv_qty level)
{
    skv_qty sum = 0;
    for (size_t d = 0; d < m->ndevs; d++)
        if (m->tier[d] == tier && elig(m, s, d))
            sum += clamp_level(&m->slots[s], d, level);
    return sum;
}

/* EVENLY: water-filling. Find the highest usage level L (on the quantum
 * grid) whose fill does not exceed amount, raise every device to L, then
 * give one quantum each to the devices sitting at L, in device order. */
static void place_even(skv_alloc_map *m, size_t s, uint32_t tier,
                       skv_qty amount)
{
    skv__alloc_slot *sl = &m->slots[s];
    skv_qty q = sl->quantum, hi = 0, lo = 0;
    for (size_t d = 0; d < m->ndevs; d++)
        if (m->tier[d] == tier && elig(m, s, d) && sl->cap[d] / q > hi)
            hi = sl->cap[d] / q;
    while (lo < hi) {
        skv_qty mid = lo + (hi - lo + 1) / 2;
        if (level_sum(m, s, tier, mid * q) <= amount)
            lo = mid;
        else
            hi = mid - 1;
    }
    skv_qty level = lo * q, rest = amount;
    for (size_t d = 0; d < m->ndevs; d++) {
        if (m->tier[d] != tier || !elig(m, s, d))
            continue;
        sl->plan[d] = clamp_level(sl, d, level);
        rest -= sl->plan[d];
    }
    for (size_t d = 0; d < m->ndevs && rest > 0; d++) {
        if (m->tier[d] != tier || !elig(m, s, d) ||
            sl->used[d] + sl->plan[d] != level ||
            sl->plan[d] >= skv__alloc_free_at(sl, d))
            continue;
        sl->plan[d] += q;
        rest -= q;
    }
}

/* INTERLEAVE: the same amount from every NUMA node of the tier (water-
 * filling on the amount taken per node), then FILL inside each node. */
static void place_interleave(skv_alloc_map *m, size_t s, uint32_t tier,
                             skv_qty amount)
{
    skv__alloc_slot *sl = &m->slots[s];
    skv_qty q = sl->quantum, hi = 0, lo = 0;
    for (size_t n = 0; n < m->nnodes; n++)
        m->node_free[n] = 0;
    for (size_t d = 0; d < m->ndevs; d++)
        if (m->tier[d] == tier && elig(m, s, d))
            m->node_free[m->devs[d].node] += skv__alloc_free_at(sl, d);
    for (size_t n = 0; n < m->nnodes; n++)
        if (m->node_free[n] / q > hi)
            hi = m->node_free[n] / q;
    while (lo < hi) {
        skv_qty mid = lo + (hi - lo + 1) / 2, sum = 0;
        for (size_t n = 0; n < m->nnodes; n++)
            sum += m->node_free[n] < mid * q ? m->node_free[n] : mid * q;
        if (sum <= amount)
            lo = mid;
        else
            hi = mid - 1;
    }
    skv_qty rest = amount;
    for (size_t n = 0; n < m->nnodes; n++) {
        m->node_amt[n] = m->node_free[n] < lo * q ? m->node_free[n] : lo * q;
        rest -= m->node_amt[n];
    }
    for (size_t n = 0; n < m->nnodes && rest > 0; n++) {
        if (m->node_free[n] > m->node_amt[n]) {
            m->node_amt[n] += q;
            rest -= q;
        }
    }
    for (size_t n = 0; n < m->nnodes; n++)
        if (m->node_amt[n] > 0)
            place_fill(m, s, tier, (uint32_t)n, m->node_amt[n]);
}

static bool wants_single(const skv__alloc_slot *sl, const skv__alloc_ctx *ctx)
{
    if (ctx->flags & SKV_ALLOC_ONE_DEVICE)
        return true;
    return sl->mode == SKV_ALLOC_FRACTIONAL &&
           ((sl->flags & SKV_ALLOC_SLOT_ANTIFRAG) ||
            (ctx->flags & SKV_ALLOC_ANTIFRAG));
}

size_t skv__alloc_plan(skv_alloc_map *m, const skv__alloc_want *w,
                       const skv__alloc_ctx *ctx)
{
    size_t s = w->slot;
    skv__alloc_slot *sl = &m->slots[s];
    memset(sl->plan, 0, m->ndevs * sizeof(skv_qty));
    if (wants_single(sl, ctx)) {
        size_t d = pick_single(m, s, w->qty, ctx->strategy);
        if (d != NONE) {
            sl->plan[d] = w->qty;
            return 1;
        }
    }
    for (uint32_t t = 0; t < m->ntiers; t++)
        m->tier_free[t] = 0;
    for (size_t d = 0; d < m->ndevs; d++)
        if (elig(m, s, d))
            m->tier_free[m->tier[d]] += skv__alloc_free_at(sl, d);
    skv_qty rest = w->qty;
    for (uint32_t t = 0; t < m->ntiers && rest > 0; t++) {
        skv_qty a = m->tier_free[t] < rest ? m->tier_free[t] : rest;
        if (a == 0)
            continue;
        if (ctx->strategy == SKV_ALLOC_EVENLY)
            place_even(m, s, t, a);
        else if (ctx->strategy == SKV_ALLOC_INTERLEAVE)
            place_interleave(m, s, t, a);
        else
            place_fill(m, s, t, ANY_NODE, a);
        rest -= a;
    }
    size_t used = 0;
    for (size_t d = 0; d < m->ndevs; d++)
        used += sl->plan[d] != 0;
    return used;
}
