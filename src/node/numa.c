/* The node mapper: cores after the accelerators, memory after the cores,
 * as the NUMA policy says.
 * SPDX-License-Identifier: Apache-2.0 */
#include "node_internal.h"

#define NODES_MAX 64 /* nodes ordered by preference; more share one tier */

void skv__node_mask_set(uint64_t *mask, int node)
{
    if (node >= 0 && node <= SKV_ALLOC_NUMA_MAX)
        mask[node / 64] |= UINT64_C(1) << (node % 64);
}

static void mask_constraint(skv_alloc_constraints *c, uint64_t *mask,
                            const int *nodes, size_t n)
{
    memset(mask, 0, SKV__NODE_MASK_WORDS * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        skv__node_mask_set(mask, nodes[i]);
    c->numa_mask = mask;
    c->numa_mask_words = SKV__NODE_MASK_WORDS;
}

bool skv__node_fits_on(const skv_alloc_map *m, size_t slot, skv_qty want,
                       int node)
{
    uint64_t mask[SKV__NODE_MASK_WORDS];
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    mask_constraint(&c, mask, &node, 1);
    return skv_alloc_map_check_slot(m, slot, want, &c, NULL) == 0;
}

void skv__node_collect_nodes(int *list, size_t *count, size_t cap,
                             const skv_alloc_map *m,
                             const skv_alloc_result *r)
{
    int ids[NODES_MAX];
    skv_qty w[NODES_MAX];
    size_t k = 0;
    skv_alloc_entry e;
    for (size_t i = 0; skv_alloc_result_at(r, i, &e) == 0; i++) {
        int node = skv_alloc_map_device_numa(m, e.device);
        size_t j = 0;
        while (j < k && ids[j] != node)
            j++;
        if (j == k) {
            if (k == NODES_MAX)
                continue;
            ids[k] = node;
            w[k++] = 0;
        }
        w[j] += e.qty;
    }
    /* Heaviest first, then lowest id; insertion sort over a few nodes. */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && (w[j] > w[j - 1] ||
                                     (w[j] == w[j - 1] && ids[j] < ids[j - 1]));
             j--) {
            int t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
            skv_qty tw = w[j];
            w[j] = w[j - 1];
            w[j - 1] = tw;
        }
    for (size_t i = 0; i < k; i++) {
        bool seen = false;
        for (size_t j = 0; j < *count && !seen; j++)
            seen = list[j] == ids[i];
        if (!seen && *count < cap)
            list[(*count)++] = ids[i];
    }
}

/* Free amount of slot per NUMA node of the topology, into ids/free
 * (node order of the topology). Returns the node count (<= NODES_MAX). */
static size_t free_per_node(const skv_node *n, const skv_alloc_map *m,
                            size_t slot, int *ids, skv_qty *free_amt)
{
    size_t k = skv_topo_numa_count(n->topo);
    k = k > NODES_MAX ? NODES_MAX : k;
    for (size_t i = 0; i < k; i++) {
        ids[i] = skv_topo_numa_at(n->topo, i)->id;
        free_amt[i] = 0;
    }
    for (size_t d = 0; d < skv_alloc_map_device_count(m); d++) {
        int node = skv_alloc_map_device_numa(m, d);
        for (size_t i = 0; i < k; i++)
            if (ids[i] == node)
                free_amt[i] += skv_alloc_map_available(m, slot, d);
    }
    return k;
}

/* No earlier step chose a node: the one node where want fits (and, for
 * cores, the memory too), tightest first; else every node, most free first,
 * as a preference order. Returns how many nodes were written to order;
 * *single tells whether order[0] alone fits. */
static size_t choose_nodes(const skv_node *n, const skv_alloc_map *m,
                           size_t slot, skv_qty want, const skv__node_step *st,
                           bool also_mem, int *order, bool *single)
{
    int ids[NODES_MAX];
    skv_qty fr[NODES_MAX];
    size_t k = free_per_node(n, m, slot, ids, fr);
    long best = -1;
    bool best_mem = false;
    for (size_t i = 0; i < k; i++) {
        if (!skv__node_fits_on(m, slot, want, ids[i]))
            continue;
        bool mem = !also_mem || n->mem < 0 || st->mem_want == 0 ||
                   skv__node_fits_on(n->p[n->mem].map, n->mem_slot,
                                     st->mem_want, ids[i]);
        if (best < 0 || (mem && !best_mem) ||
            (mem == best_mem && fr[i] < fr[best])) {
            best = (long)i;
            best_mem = mem;
        }
    }
    *single = best >= 0;
    if (best >= 0) {
        order[0] = ids[best];
        return 1;
    }
    for (size_t i = 0; i < k; i++) { /* most free first, stable by id */
        size_t j = i;
        for (size_t x = i + 1; x < k; x++)
            if (fr[x] > fr[j])
                j = x;
        int ti = ids[i];
        skv_qty tf = fr[i];
        ids[i] = ids[j];
        fr[i] = fr[j];
        ids[j] = ti;
        fr[j] = tf;
        order[i] = ids[i];
    }
    return k;
}

/* Allocate on `nodes`: with confine, inside them when it fits there (one
 * node: FILL; several: INTERLEAVE, as they all hold part of the work);
 * otherwise, or when it does not fit, preferring them in order and
 * spilling to the other nodes (FILL: the fewest nodes). */
static int alloc_near(skv_alloc_result **out, skv_alloc_map *m, size_t slot,
                      skv_qty want, const int *nodes, size_t k, bool confine,
                      skv_error *err)
{
    uint64_t mask[SKV__NODE_MASK_WORDS];
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    if (confine) {
        mask_constraint(&c, mask, nodes, k);
        c.strategy = k == 1 ? SKV_ALLOC_FILL : SKV_ALLOC_INTERLEAVE;
        if (skv_alloc_map_check_slot(m, slot, want, &c, NULL) == 0)
            return skv_alloc_map_alloc_slot(out, m, slot, want, &c, err);
    }
    c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    c.strategy = SKV_ALLOC_FILL;
    c.numa_prefer = nodes;
    c.numa_prefer_count = k;
    return skv_alloc_map_alloc_slot(out, m, slot, want, &c, err);
}

static int alloc_interleaved(skv_alloc_result **out, skv_alloc_map *m,
                             size_t slot, skv_qty want, skv_error *err)
{
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    c.strategy = SKV_ALLOC_INTERLEAVE;
    return skv_alloc_map_alloc_slot(out, m, slot, want, &c, err);
}

int skv__node_place_cpu(skv_alloc_result **out, skv_node *n,
                        skv__node_step *st, skv_error *err)
{
    skv_alloc_map *m = n->p[n->cpu].map;
    int rc;
    if (st->policy == SKV_NODE_INTERLEAVED) {
        rc = alloc_interleaved(out, m, n->cpu_slot, st->cpu_want, err);
    } else if (st->naccel_nodes > 0) {
        rc = alloc_near(out, m, n->cpu_slot, st->cpu_want, st->accel_nodes,
                        st->naccel_nodes, true, err);
    } else {
        int order[NODES_MAX];
        bool single;
        size_t k = choose_nodes(n, m, n->cpu_slot, st->cpu_want, st, true,
                                order, &single);
        rc = alloc_near(out, m, n->cpu_slot, st->cpu_want, order, k, single,
                        err);
    }
    if (rc == 0)
        skv__node_collect_nodes(st->core_nodes, &st->ncore_nodes,
                                SKV__ARRAY_LEN(st->core_nodes), m, *out);
    return rc;
}

int skv__node_place_mem(skv_alloc_result **out, skv_node *n,
                        const skv__node_step *st, skv_error *err)
{
    skv_alloc_map *m = n->p[n->mem].map;
    if (st->policy == SKV_NODE_INTERLEAVED)
        return alloc_interleaved(out, m, n->mem_slot, st->mem_want, err);
    if (st->ncore_nodes > 0)
        return alloc_near(out, m, n->mem_slot, st->mem_want, st->core_nodes,
                          st->ncore_nodes, true, err);
    if (st->naccel_nodes > 0)
        return alloc_near(out, m, n->mem_slot, st->mem_want, st->accel_nodes,
                          st->naccel_nodes, true, err);
    int order[NODES_MAX];
    bool single;
    size_t k = choose_nodes(n, m, n->mem_slot, st->mem_want, st, false, order,
                            &single);
    return alloc_near(out, m, n->mem_slot, st->mem_want, order, k, single,
                      err);
}
