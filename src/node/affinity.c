/* Choosing whole accelerators that are close to each other, on the fewest
 * NUMA nodes (skv_affinity.h): the node mapper's algorithm, shared with the
 * scheduler's per-agent maps.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_affinity.h"
#include "sokovan/topo.h"

static int link_of(const skv__aff *f, size_t a, size_t b)
{
    return a == b ? SKV_TOPO_LINK_SELF : f->link(f->ctx, a, b);
}

static int64_t bw_of(const skv__aff *f, size_t a, size_t b)
{
    return f->bw && a != b ? f->bw(f->ctx, a, b) : 0;
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
static int64_t broken(const skv__aff *f, const size_t *set, size_t k,
                      size_t nfree)
{
    int64_t count = 0;
    for (size_t i = 0; i < nfree; i++) {
        bool in = false, near = false;
        for (size_t j = 0; j < k && !in; j++) {
            in = set[j] == f->devs[i];
            near = near || link_of(f, set[j], f->devs[i]) <= SKV_TOPO_LINK_PIX;
        }
        count += !in && near;
    }
    return count;
}

/* Grow a set from seed, each time adding the pool device closest to the
 * members so far (link and bandwidth sums kept incrementally). */
static score grow(skv__aff *f, size_t npool, size_t seed, size_t k,
                  size_t *set)
{
    const int64_t member = -(INT64_C(1) << 40);
    const size_t *pool = f->pool;
    score sc = {0, 0, 0};
    int64_t *acc = f->acc, *bw = f->accbw;
    for (size_t i = 0; i < npool; i++) {
        acc[i] = i == seed ? member : link_of(f, pool[i], pool[seed]);
        bw[i] = bw_of(f, pool[i], pool[seed]);
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
            acc[i] += link_of(f, pool[i], pool[best]);
            bw[i] += bw_of(f, pool[i], pool[best]);
        }
        acc[best] = member;
    }
    return sc;
}

static void best_set(skv__aff *f, size_t npool, size_t k, size_t nfree)
{
    score best = {0, 0, 0};
    bool have = false;
    for (size_t seed = 0; seed < npool; seed++) {
        score sc = grow(f, npool, seed, k, f->trial);
        sc.broken = broken(f, f->trial, k, nfree);
        if (!have || score_less(sc, best)) {
            best = sc;
            have = true;
            memcpy(f->pick, f->trial, k * sizeof(size_t));
        }
        if (k == npool)
            break; /* every seed grows the same set */
    }
    /* Device order for the caller's subset. */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && f->pick[j - 1] > f->pick[j]; j--) {
            size_t t = f->pick[j];
            f->pick[j] = f->pick[j - 1];
            f->pick[j - 1] = t;
        }
}

/* Free devices per NUMA node (first-seen order), at most 64 nodes; the
 * rest are not counted (and so never chosen as a whole node). */
typedef struct node_count {
    int id[64];
    size_t free[64];
    size_t n;
} node_count;

static void count_nodes(node_count *c, const skv__aff *f, size_t nfree)
{
    c->n = 0;
    for (size_t i = 0; i < nfree; i++) {
        int node = f->numa[f->devs[i]];
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
static int single_node(const skv__aff *f, const node_count *c, size_t k)
{
    int best = -2;
    size_t best_free = 0;
    bool best_rest = false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->free[i] < k)
            continue;
        bool rest = !f->rest_fits || f->rest_fits(f->ctx, c->id[i]);
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
static size_t fewest_nodes(skv__aff *f, node_count *c, size_t k, size_t nfree)
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
        int node = f->numa[f->devs[i]];
        for (size_t j = 0; j < c->n; j++)
            if (taken[j] && c->id[j] == node) {
                f->pool[npool++] = f->devs[i];
                break;
            }
    }
    return npool;
}

bool skv__aff_pick(skv__aff *f, size_t nfree, size_t k)
{
    if (k == 0 || nfree < k)
        return false;
    size_t npool = 0;
    node_count c;
    count_nodes(&c, f, nfree);
    int node = single_node(f, &c, k);
    if (node != -2) {
        for (size_t i = 0; i < nfree; i++)
            if (f->numa[f->devs[i]] == node)
                f->pool[npool++] = f->devs[i];
    } else {
        npool = fewest_nodes(f, &c, k, nfree);
    }
    if (npool < k)
        return false; /* more than 64 nodes: plain map placement */
    best_set(f, npool, k, nfree);
    return true;
}
