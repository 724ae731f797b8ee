/* The node mapper: choosing whole accelerators that are close to each
 * other, on the fewest NUMA nodes (the algorithm is skv_affinity.h's; this
 * is its view of the machine's topology).
 * SPDX-License-Identifier: Apache-2.0 */
#include "node_internal.h"
#include "skv_affinity.h"

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

/* The callbacks of the shared algorithm (skv_affinity.h). */
typedef struct aff_ctx {
    const skv_node *n;
    const skv__node_plugin *p;
    const skv__node_step *st;
} aff_ctx;

static int aff_link(const void *ctx, size_t a, size_t b)
{
    const aff_ctx *c = ctx;
    return link_of(c->n, c->p, a, b);
}

static int64_t aff_bw(const void *ctx, size_t a, size_t b)
{
    const aff_ctx *c = ctx;
    return bw_of(c->n, c->p, a, b);
}

static bool aff_rest(const void *ctx, int node)
{
    const aff_ctx *c = ctx;
    return rest_fits(c->n, c->st, node);
}

bool skv__node_pick_devices(skv_node *n, size_t pi, size_t s, size_t k,
                            const skv__node_step *st)
{
    const skv__node_plugin *p = &n->p[pi];
    size_t nd = skv_alloc_map_device_count(p->map), nfree = 0;
    for (size_t d = 0; d < nd; d++)
        if (skv_alloc_map_available(p->map, s, d) >= SKV_QTY_SCALE)
            n->devs[nfree++] = d;
    aff_ctx c = {n, p, st};
    skv__aff f = {p->numa, aff_link, aff_bw, aff_rest, &c, n->devs, n->pool,
                  n->trial, n->pick, n->acc, n->accbw};
    return skv__aff_pick(&f, nfree, k);
}
