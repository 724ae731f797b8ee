/* The node mapper: choosing whole accelerators that are close to each
 * other, on the fewest NUMA nodes.
 * SPDX-License-Identifier: Apache-2.0 */
#include "node_internal.h"

bool skv__node_whole_slot(const skv_alloc_map *m, size_t s)
{
    skv_alloc_slot_spec spec;
    if (skv_alloc_map_slot_spec(m, s, &spec) != 0 ||
        spec.mode != SKV_ALLOC_DISCRETE || spec.kind == SKV_SLOT_BYTES ||
        spec.quantum != SKV_QTY_SCALE)
        return false;
    for (size_t d = 0; d < skv_alloc_map_device_count(m); d++) {
        skv_qty c = skv_alloc_map_capacity(m, s, d);
        if (c != 0 && c != SKV_QTY_SCALE)
            return false;
    }
    return true;
}

/* PCIe proximity of two devices of plugin p: the topology's when both are
 * known accelerators, else by NUMA node. */
static int link_of(const skv_node *n, const skv__node_plugin *p, size_t a,
                   size_t b)
{
    if (a == b)
        return SKV_TOPO_LINK_SELF;
    if (p->accel[a] >= 0 && p->accel[b] >= 0)
        return (int)skv_topo_accel_link(n->topo, (size_t)p->accel[a],
                                        (size_t)p->accel[b]);
    int na = p->numa[a];
    return na >= 0 && na == p->numa[b]
               ? SKV_TOPO_LINK_NODE
               : SKV_TOPO_LINK_SYS;
}

static int64_t bw_of(const skv_node *n, const skv__node_plugin *p, size_t a,
                     size_t b)
{
    if (p->accel[a] < 0 || p->accel[b] < 0)
        return 0;
    uint64_t bw = skv_topo_accel_nvlink_bw(n->topo, (size_t)p->accel[a],
                                           (size_t)p->accel[b]);
    return bw > INT32_MAX ? INT32_MAX : (int64_t)bw;
}

/* Sort key of a candidate or set: links (lower is closer), NVLink
 * bandwidth (higher is better), broken neighbours (lower packs better). */
typedef struct score {
    int64_t link, bw, broken;
} score;

static bool score_less(score a, score b)
{
    if (a.link != b.link)
        return a.link < b.link;
    if (a.bw != b.bw)
        return a.bw > b.bw;
    return a.broken < b.broken;
}

/* Free devices outside the set that sit behind the same PCIe switch as a
 * member: taking the set would leave them without their partner. */
static int64_t broken(const skv_node *n, const skv__node_plugin *p,
                      const size_t *set, size_t k, const size_t *free_devs,
                      size_t nfree)
{
    int64_t count = 0;
    for (size_t i = 0; i < nfree; i++) {
        bool in = false, near = false;
        for (size_t j = 0; j < k && !in; j++) {
            in = set[j] == free_devs[i];
            near = near || link_of(n, p, set[j], free_devs[i]) <=
                               SKV_TOPO_LINK_PIX;
        }
        count += !in && near;
    }
    return count;
}

/* Grow a set from seed, each time adding the pool device closest to the
 * members so far (link and bandwidth sums kept incrementally). */
static score grow(skv_node *n, const skv__node_plugin *p, const size_t *pool,
                  size_t npool, size_t seed, size_t k, size_t *set)
{
    const int64_t member = -(INT64_C(1) << 40);
    score sc = {0, 0, 0};
    int64_t *acc = n->acc, *bw = n->accbw;
    for (size_t i = 0; i < npool; i++) {
        acc[i] = i == seed ? member : link_of(n, p, pool[i], pool[seed]);
        bw[i] = bw_of(n, p, pool[i], pool[seed]);
    }
    set[0] = pool[seed];
    for (size_t m = 1; m < k; m++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < npool; i++) {
            if (acc[i] < 0)
                continue;
            if (best == SIZE_MAX || acc[i] < acc[best] ||
                (acc[i] == acc[best] && bw[i] > bw[best]))
                best = i;
        }
        sc.link += acc[best];
        sc.bw += bw[best];
        set[m] = pool[best];
        for (size_t i = 0; i < npool; i++) {
            acc[i] += link_of(n, p, pool[i], pool[best]);
            bw[i] += bw_of(n, p, pool[i], pool[best]);
        }
        acc[best] = member;
    }
    return sc;
}

static void best_set(skv_node *n, const skv__node_plugin *p,
                     const size_t *pool, size_t npool, size_t k,
                     const size_t *free_devs, size_t nfree)
{
    score best = {0, 0, 0};
    bool have = false;
    for (size_t seed = 0; seed < npool; seed++) {
        score sc = grow(n, p, pool, npool, seed, k, n->trial);
        sc.broken = broken(n, p, n->trial, k, free_devs, nfree);
        if (!have || score_less(sc, best)) {
            best = sc;
            have = true;
            memcpy(n->pick, n->trial, k * sizeof(size_t));
        }
        if (k == npool)
            break; /* every seed grows the same set */
    }
    /* Device order for the caller's subset. */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && n->pick[j - 1] > n->pick[j]; j--) {
            size_t t = n->pick[j];
            n->pick[j] = n->pick[j - 1];
            n->pick[j - 1] = t;
        }
}

/* Whether the cores and memory of the request fit on node too. */
static bool rest_fits(const skv_node *n, const skv__node_step *st, int node)
{
    if (st->policy == SKV_NODE_INTERLEAVED)
        return true;
    if (n->cpu >= 0 && st->cpu_want > 0 &&
        !skv__node_fits_on(n->p[n->cpu].map, n->cpu_slot, st->cpu_want, node))
        return false;
    return n->mem < 0 || st->mem_want == 0 ||
           skv__node_fits_on(n->p[n->mem].map, n->mem_slot, st->mem_want,
                             node);
}

/* Free devices per NUMA node (first-seen order), at most 64 nodes; the
 * rest are not counted (and so never chosen as a whole node). */
typedef struct node_count {
    int id[64];
    size_t free[64];
    size_t n;
} node_count;

static void count_nodes(node_count *c, const skv__node_plugin *p,
                        const size_t *devs, size_t nfree)
{
    c->n = 0;
    for (size_t i = 0; i < nfree; i++) {
        int node = p->numa[devs[i]];
        size_t j = 0;
        while (j < c->n && c->id[j] != node)
            j++;
        if (j == c->n) {
            if (c->n == 64)
                continue;
            c->id[c->n] = node;
            c->free[c->n++] = 0;
        }
        c->free[j]++;
    }
}

/* The one node to take all k from: cores/memory fit there too first, then
 * the fewest free devices (best fit), then the lowest id. -2 when none. */
static int single_node(const skv_node *n, const skv__node_step *st,
                       const node_count *c, size_t k)
{
    int best = -2;
    size_t best_free = 0;
    bool best_rest = false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->free[i] < k)
            continue;
        bool rest = rest_fits(n, st, c->id[i]);
        bool tighter = c->free[i] < best_free ||
                       (c->free[i] == best_free && c->id[i] < best);
        if (best == -2 || (rest && !best_rest) ||
            (rest == best_rest && tighter)) {
            best = c->id[i];
            best_free = c->free[i];
            best_rest = rest;
        }
    }
    return best;
}

/* Fewest nodes: take whole nodes, most free devices first (then lowest id),
 * until k; returns the pool of their free devices. */
static size_t fewest_nodes(const skv_node *n, const skv__node_plugin *p,
                           node_count *c, size_t k, size_t nfree, size_t *pool)
{
    bool taken[64] = {false};
    size_t got = 0, npool = 0;
    while (got < k) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < c->n; i++)
            if (!taken[i] && (best == SIZE_MAX || c->free[i] > c->free[best] ||
                              (c->free[i] == c->free[best] &&
                               c->id[i] < c->id[best])))
                best = i;
        if (best == SIZE_MAX)
            break;
        taken[best] = true;
        got += c->free[best];
    }
    for (size_t i = 0; i < nfree; i++) {
        int node = p->numa[n->devs[i]];
        for (size_t j = 0; j < c->n; j++)
            if (taken[j] && c->id[j] == node) {
                pool[npool++] = n->devs[i];
                break;
            }
    }
    return npool;
}

bool skv__node_pick_devices(skv_node *n, size_t pi, size_t s, size_t k,
                            const skv__node_step *st)
{
    const skv__node_plugin *p = &n->p[pi];
    size_t nd = skv_alloc_map_device_count(p->map), nfree = 0;
    for (size_t d = 0; d < nd; d++)
        if (skv_alloc_map_available(p->map, s, d) >= SKV_QTY_SCALE)
            n->devs[nfree++] = d;
    if (k == 0 || nfree < k)
        return false;
    size_t npool = 0;
    node_count c;
    count_nodes(&c, p, n->devs, nfree);
    int node = single_node(n, st, &c, k);
    if (node != -2) {
        for (size_t i = 0; i < nfree; i++)
            if (p->numa[n->devs[i]] == node)
                n->pool[npool++] = n->devs[i];
    } else {
        npool = fewest_nodes(n, p, &c, k, nfree, n->pool);
    }
    if (npool < k)
        return false; /* more than 64 nodes: plain map placement */
    best_set(n, p, n->pool, npool, k, n->devs, nfree);
    return true;
}
