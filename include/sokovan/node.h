/*
 * sokovan/node.h - the node mapper: one machine's topology and compute
 * plugins turned into per-plugin allocation maps, and requests such as
 * "cuda.device=2,cpu=8,mem=32g" turned into exact devices, cores and NUMA
 * memory with the container configuration that enforces them.
 *
 * Roles: the plugin whose map has the slot "cpu" provides cores (the
 * built-in cpu plugin: device i is core i of the topology), the one with
 * "mem" provides memory per NUMA node, every other plugin is an accelerator.
 * A request is placed in the order accelerators -> cores -> memory, so that
 * cores follow the accelerators' NUMA nodes and memory follows the cores:
 *   - whole-device slots (discrete, one unit per device) take the devices
 *     closest to each other (PCIe switch / host bridge, then NVLink
 *     bandwidth) on the fewest NUMA nodes, preferring a node where the cores
 *     and memory of the request fit too, and devices whose close neighbours
 *     are already taken (so pairs behind one switch stay whole);
 *     fractional slots use the map's own placement (FILL, anti-fragmentation
 *     as the plugin declares);
 *   - SKV_NODE_PREFER_SINGLE ("prefer-single-node"): cores on the
 *     accelerators' node (else the one node where cores and memory fit, best
 *     fit first), spilling to further nodes only when they must; memory on
 *     the cores' node(s);
 *   - SKV_NODE_INTERLEAVED ("interleaved"): cores and memory spread evenly
 *     over all NUMA nodes (bandwidth-bound work).
 * The result carries the cpuset (PUs of the cores), the memory nodeset
 * (cpuset.mems: the nodes memory was taken from, or the cores' nodes when no
 * memory was requested), per-device amounts and the merged container
 * configuration of the plugins. An allocation is atomic: when a later step
 * fails, the earlier ones are rolled back.
 *
 * Thread-safety: a node object needs exclusive access for alloc and release
 * (its maps change); queries may run concurrently with each other. A node
 * borrows its topology and plugins: they must outlive it and must not be
 * used by other threads while it allocates. Allocation results follow the
 * default rule.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_NODE_H
#define SOKOVAN_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/alloc.h"
#include "sokovan/common.h"
#include "sokovan/plugin.h"
#include "sokovan/slots.h"
#include "sokovan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_node skv_node;
typedef struct skv_node_placement skv_node_placement;

typedef enum skv_node_policy {
    SKV_NODE_POLICY_DEFAULT = 0,    /* options only: prefer-single-node */
    SKV_NODE_PREFER_SINGLE = 1,     /* "prefer-single-node" */
    SKV_NODE_INTERLEAVED = 2        /* "interleaved" */
} skv_node_policy;

/* "prefer-single-node", "interleaved"; "?" for others. */
SKV_EXTERN const char *skv_node_policy_name(skv_node_policy policy);
/* Parse those names. SKV_EINVAL naming the text. */
SKV_EXTERN int skv_node_policy_parse(skv_node_policy *out, const char *text,
                                     skv_error *err);

/* Build the mapper over topo and plugins (borrowed; both must outlive the
 * node). Each plugin's slots are registered (a slot offered by two plugins:
 * SKV_EEXIST) and its map created (skv_plugin_create_map, FILL). At most
 * one plugin may offer "cpu" and one "mem" (SKV_EINVAL). */
SKV_EXTERN int skv_node_new(skv_node **out, const skv_topo *topo,
                            skv_plugin *const *plugins, size_t nplugins,
                            skv_error *err);
SKV_EXTERN void skv_node_free(skv_node *node);

SKV_EXTERN const skv_topo *skv_node_topo(const skv_node *node);
/* Every slot of every plugin, as registered. */
SKV_EXTERN const skv_slot_registry *skv_node_registry(const skv_node *node);
SKV_EXTERN size_t skv_node_plugin_count(const skv_node *node);
/* NULL past the end. */
SKV_EXTERN skv_plugin *skv_node_plugin_at(const skv_node *node, size_t index);
/* The allocation map of plugin index (NULL past the end). Read it freely;
 * change it only through skv_node_alloc/skv_node_release. */
SKV_EXTERN const skv_alloc_map *skv_node_map(const skv_node *node,
                                             size_t index);

/* ---- allocating ---------------------------------------------------------- */

#define SKV_NODE_NO_CONFIG 0x1u /* skip the plugins' container configuration
                                   (placement decisions only) */

/* Version 2 added the fixed amounts; version 1 structures are accepted. */
#define SKV_NODE_ALLOC_OPTIONS_VERSION 2u
typedef struct skv_node_alloc_options {
    unsigned version;           /* SKV_NODE_ALLOC_OPTIONS_VERSION */
    skv_node_policy policy;     /* DEFAULT: prefer-single-node */
    unsigned flags;             /* SKV_NODE_NO_CONFIG */
    /* v2: exact amounts to take ({device id of the plugin, slot, qty}),
     * e.g. the accelerators a cluster manager chose, or a whole placement
     * being restored after an agent restart. The slot names the plugin
     * (device ids are the plugin's own, "0", "1"...). Every slot of a
     * plugin named here is taken from these amounts only: the request's
     * amount of such a slot, when non-zero, must equal their sum
     * (SKV_EINVAL). The other plugins are placed as usual, after and near
     * the fixed ones (cores follow fixed accelerators' NUMA nodes, memory
     * fixed or placed cores). Unknown slot or device, zero or negative
     * amount: SKV_EINVAL; not free: the map's error (SKV_ENOSPC, SKV_EBUSY).
     * Borrowed during the call only. */
    const skv_device_amount *fixed;
    size_t nfixed;
} skv_node_alloc_options;
#define SKV_NODE_ALLOC_OPTIONS_INIT \
    {SKV_NODE_ALLOC_OPTIONS_VERSION, SKV_NODE_POLICY_DEFAULT, 0, NULL, 0}

/* Place request (slots of the node's plugins; zero amounts ignored).
 * opts NULL: defaults. Errors as in alloc.h (SKV_EINVAL bad request,
 * SKV_ERANGE never fits, SKV_ENOSPC not now), plus the plugins' container
 * configuration errors; on any failure the node is unchanged. */
SKV_EXTERN int skv_node_alloc(skv_node_placement **out, skv_node *node,
                              const skv_slots *request,
                              const skv_node_alloc_options *opts,
                              skv_error *err);
/* Give everything back. Released twice: SKV_ESTATE. The object stays the
 * caller's to free. */
SKV_EXTERN int skv_node_release(skv_node *node, skv_node_placement *a,
                                skv_error *err);
SKV_EXTERN void skv_node_placement_free(skv_node_placement *a);

/* One amount of the allocation. Strings are borrowed from the node. */
typedef struct skv_node_amount {
    const char *plugin;         /* "cuda", "cpu", "mem", ... */
    const char *slot;
    const char *device;         /* the plugin's device id */
    int numa_node;              /* -1 unknown */
    const char *pci_bus_id;     /* "" when none */
    skv_qty qty;
} skv_node_amount;

/* Amounts in placement order (accelerators, cores, memory; within a plugin
 * by slot, then device). SKV_ERANGE past the end. */
SKV_EXTERN size_t skv_node_placement_count(const skv_node_placement *a);
SKV_EXTERN int skv_node_placement_at(const skv_node_placement *a, size_t index,
                                 skv_node_amount *out);
/* The PUs of the cores taken ("0-3,24"), "" when none. */
SKV_EXTERN const char *skv_node_placement_cpuset(const skv_node_placement *a);
/* The memory nodeset ("0"), "" when neither memory nor cores were taken. */
SKV_EXTERN const char *skv_node_placement_mems(const skv_node_placement *a);
/* The merged container configuration (NULL with SKV_NODE_NO_CONFIG). Its
 * cpus and mems are the two strings above. */
SKV_EXTERN const skv_container_config *skv_node_placement_config(
    const skv_node_placement *a);
/* Distinct NUMA nodes of all amounts (ascending) into nodes (up to cap);
 * returns how many there are. */
SKV_EXTERN size_t skv_node_placement_numa_nodes(const skv_node_placement *a,
                                            int *nodes, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_NODE_H */
