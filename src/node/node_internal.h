/* Private to src/node/: the node mapper's layout and the steps of one
 * allocation (accelerators, cores, memory).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_NODE_INTERNAL_H
#define SKV_NODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/node.h"

#define SKV__NODE_MASK_WORDS ((SKV_ALLOC_NUMA_MAX + 1) / 64)

typedef enum skv__node_role {
    SKV__NODE_ACCEL = 0,
    SKV__NODE_CPU = 1,
    SKV__NODE_MEM = 2
} skv__node_role;

typedef struct skv__node_plugin {
    skv_plugin *plugin;
    skv_alloc_map *map;
    skv__node_role role;
    int *accel;             /* [devices] topology accelerator index or -1 */
    int *numa;              /* [devices] NUMA node (cached: hot in picks) */
    const char **pci;       /* [devices] PCI bus id ("" none), borrowed */
} skv__node_plugin;

struct skv_node {
    const skv_topo *topo;
    skv_slot_registry *reg;
    skv__node_plugin *p;
    size_t np;
    long cpu;               /* plugin index of the cores, -1 none */
    long mem;               /* plugin index of the memory, -1 none */
    size_t cpu_slot, mem_slot;
    bool cpu_is_topo;       /* cpu device i is skv_topo_core_at(topo, i) */
    /* scratch, sized at creation */
    skv_qty *want;          /* [np * SKV_ALLOC_MAP_SLOTS_MAX] */
    size_t *devs;           /* [max devices] candidate devices */
    size_t *pick;           /* [max devices] chosen devices */
    size_t *trial;          /* [max devices] */
    size_t *pool;           /* [max devices] */
    int64_t *acc;           /* [max devices] */
    int64_t *accbw;         /* [max devices] */
    int *ints;              /* [max(PUs, devices) + 1] */
    size_t max_devs;
};

typedef struct skv__node_res {
    size_t plugin;
    skv_alloc_result *r;
} skv__node_res;

struct skv_node_placement {
    int released;
    size_t nres;
    skv__node_res *res;
    size_t namounts;
    skv_node_amount *amounts;
    char *cpuset;
    char *mems;
    skv_container_config *cfg;
};

/* What one allocation is doing: the chosen policy and the NUMA nodes the
 * earlier steps landed on (weights per node id, for ordering). */
typedef struct skv__node_step {
    skv_node_policy policy;
    skv_qty cpu_want;
    skv_qty mem_want;
    int accel_nodes[64];    /* distinct nodes of accelerator amounts */
    size_t naccel_nodes;
    int core_nodes[64];     /* distinct nodes of the cores, most cores first */
    size_t ncore_nodes;
} skv__node_step;

/* ---- devices.c ---- */
/* Choose k whole devices of plugin pi, slot s into n->pick (device order).
 * Returns false when fewer than k are free (let the map report it). */
bool skv__node_pick_devices(skv_node *n, size_t pi, size_t s, size_t k,
                            const skv__node_step *st);
/* Whether every device of slot s holds 0 or 1 whole unit (GPU-like). */
bool skv__node_whole_slot(const skv_alloc_map *m, size_t s);

/* ---- numa.c ---- */
void skv__node_mask_set(uint64_t *mask, int node);
/* Whether want of slot fits map inside one node. */
bool skv__node_fits_on(const skv_alloc_map *m, size_t slot, skv_qty want,
                       int node);
/* Cores, then memory, following the earlier steps. */
int skv__node_place_cpu(skv_alloc_result **out, skv_node *n,
                        skv__node_step *st, skv_error *err);
int skv__node_place_mem(skv_alloc_result **out, skv_node *n,
                        const skv__node_step *st, skv_error *err);
/* Add the distinct NUMA nodes of r (device numa of map) to list/count,
 * weighting by amount; the list ends sorted by weight desc, id asc. */
void skv__node_collect_nodes(int *list, size_t *count, size_t cap,
                             const skv_alloc_map *m,
                             const skv_alloc_result *r);

/* ---- fixed.c ---- */
/* Check the caller's fixed amounts, mark their plugins in fixed_plugin
 * ([np], zeroed) and take those plugins' slots out of the request. */
int skv__node_fixed_prepare(skv_node *n, const skv_device_amount *fx,
                            size_t nfx, bool *fixed_plugin, skv_error *err);
/* Claim the fixed amounts of plugin pi as one result. */
int skv__node_fixed_claim(skv_alloc_result **out, skv_node *n, size_t pi,
                          const skv_device_amount *fx, size_t nfx,
                          skv_error *err);

/* ---- result.c ---- */
/* Fill amounts, cpuset, mems and (unless no_config) the configuration. */
int skv__node_finish(skv_node_placement *a, skv_node *n,
                     const skv__node_step *st, bool no_config,
                     skv_error *err);

#endif
