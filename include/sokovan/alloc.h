/*
 * sokovan/alloc.h - allocation maps: which device gives how much of which
 * slot. Pure, deterministic bookkeeping without I/O, so that the agent (on
 * its machine) and the manager (on its per-agent view) run the same code and
 * reach the same placement.
 *
 * A map holds devices (string id, NUMA node, a capacity per slot; devices
 * may have different capacities) and slots:
 *   - DISCRETE slots hand out whole units (cores, whole GPUs); the quantum
 *     is one unit (1000 milli-units) unless set otherwise.
 *   - FRACTIONAL slots hand out shares of a device in steps of a quantum
 *     (default 10 milli-units = 0.01 for counts, 1 byte for bytes).
 *   - SKV_SLOT_UNIQUE slots are discrete; every device has 0 or 1 unit and
 *     a request must be exactly 1 unit.
 * Slots sharing a non-zero exclusive group are mutually exclusive per device:
 * a device holding any amount of one of them offers none of the others
 * (a GPU handed out whole as cuda.device is not shared as cuda.shares, and
 * the reverse). A request may not name two slots of the same group.
 *
 * Placement of one slot's amount Q (each slot of a request independently):
 *   1. eligible devices: in the device subset and NUMA mask (if given),
 *      capacity > 0, not blocked by the exclusive group;
 *   2. single device: with SKV_ALLOC_ONE_DEVICE, or anti-fragmentation on a
 *      fractional slot, Q goes to one device with free >= Q when one exists
 *      (ONE_DEVICE fails with SKV_ENOSPC otherwise);
 *   3. otherwise devices are taken tier by tier (NUMA preference order, see
 *      skv_alloc_constraints), and within a tier by the strategy:
 *      FILL       most-used first (then least free, then device order), each
 *                 device drained before the next: packs onto few devices;
 *      EVENLY     water-filling on the used amount: the least-used devices
 *                 receive first, so usage levels out; ties by device order;
 *      INTERLEAVE equal amounts from each NUMA node of the tier (nodes in
 *                 ascending id for the remainder), FILL within a node.
 * A request succeeds or fails as a whole. Feasibility is exactly "the
 * eligible free capacity is >= Q" (ONE_DEVICE: "some eligible device has
 * free >= Q"), so skv_alloc_map_check() answers what alloc would do, cheaply.
 *
 * Errors: unknown slot, kind mismatch, negative or unlimited amount, an
 * amount finer than the quantum, a UNIQUE request other than 1, two slots of
 * one exclusive group: SKV_EINVAL. More than the slot's total capacity in the
 * map (could never fit): SKV_ERANGE. Not enough free eligible capacity now:
 * SKV_ENOSPC. Failed calls leave the map unchanged.
 *
 * Cost: check is O(devices) and never allocates; alloc is O(devices x
 * distinct (used, free) pairs) for FILL or O(devices x 64) for EVENLY and
 * INTERLEAVE and allocates only the result object; release never
 * allocates.
 *
 * Thread-safety: a map may be read from many threads at once (check,
 * queries, snapshot, dup, equal, result encoding); alloc, claim, release and
 * every add/set need exclusive access (alloc uses scratch space inside the
 * map). Results are independent objects under the default rule. Distinct
 * maps are independent.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_ALLOC_H
#define SOKOVAN_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/slots.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SKV_ALLOC_MAP_SLOTS_MAX 32        /* slots in one map */
#define SKV_ALLOC_MAP_DEVICES_MAX 4096    /* devices in one map */
#define SKV_ALLOC_DEVICE_ID_MAX 128       /* id length including the NUL */
#define SKV_ALLOC_NUMA_MAX 4095           /* highest NUMA node id */
#define SKV_ALLOC_ALL ((size_t)-1)        /* "every device" in queries */
#define SKV_ALLOC_FRACTION_QUANTUM 10     /* default fractional quantum: 0.01 */

typedef enum skv_alloc_mode {
    SKV_ALLOC_DISCRETE = 1,   /* whole units */
    SKV_ALLOC_FRACTIONAL = 2  /* shares in steps of the quantum */
} skv_alloc_mode;

typedef enum skv_alloc_strategy {
    SKV_ALLOC_DEFAULT = 0,    /* constraints only: use the map's strategy */
    SKV_ALLOC_FILL = 1,       /* pack: most-used devices first */
    SKV_ALLOC_EVENLY = 2,     /* spread: least-used devices first */
    SKV_ALLOC_INTERLEAVE = 3  /* equal amounts per NUMA node */
} skv_alloc_strategy;

/* "fill", "evenly", "interleave"; "?" for others. */
SKV_EXTERN const char *skv_alloc_strategy_name(skv_alloc_strategy s);
/* Parse those names (and "default"). SKV_EINVAL naming the text. */
SKV_EXTERN int skv_alloc_strategy_parse(skv_alloc_strategy *out,
                                        const char *text, skv_error *err);

typedef struct skv_alloc_map skv_alloc_map;
typedef struct skv_alloc_result skv_alloc_result;

/* ---- building a map ------------------------------------------------------ */

#define SKV_ALLOC_MAP_OPTIONS_VERSION 1u
typedef struct skv_alloc_map_options {
    unsigned version;               /* SKV_ALLOC_MAP_OPTIONS_VERSION */
    skv_alloc_strategy strategy;    /* FILL, EVENLY or INTERLEAVE */
} skv_alloc_map_options;
#define SKV_ALLOC_MAP_OPTIONS_INIT \
    {SKV_ALLOC_MAP_OPTIONS_VERSION, SKV_ALLOC_FILL}

/* opts NULL: the defaults above. */
SKV_EXTERN int skv_alloc_map_new(skv_alloc_map **out,
                                 const skv_alloc_map_options *opts,
                                 skv_error *err);
SKV_EXTERN void skv_alloc_map_free(skv_alloc_map *map);
/* An independent copy, allocations included (results of the original can
 * be released on the copy). */
SKV_EXTERN int skv_alloc_map_dup(skv_alloc_map **out, const skv_alloc_map *map,
                                 skv_error *err);

/* Slot flags. */
#define SKV_ALLOC_SLOT_ANTIFRAG 0x1u /* fractional: a request that fits one
                                        device is placed on one device */

#define SKV_ALLOC_SLOT_SPEC_VERSION 1u
typedef struct skv_alloc_slot_spec {
    unsigned version;           /* SKV_ALLOC_SLOT_SPEC_VERSION */
    const char *name;           /* a valid slot name (skv_slot_name_check) */
    skv_slot_kind kind;         /* COUNT, BYTES or UNIQUE */
    skv_alloc_mode mode;        /* DISCRETE or FRACTIONAL */
    skv_qty quantum;            /* 0: the default of mode and kind:
                                   DISCRETE count/unique 1000, bytes 1;
                                   FRACTIONAL count 10, bytes 1 */
    unsigned exclusive_group;   /* 0: none */
    unsigned flags;             /* SKV_ALLOC_SLOT_* */
} skv_alloc_slot_spec;
#define SKV_ALLOC_SLOT_SPEC_INIT \
    {SKV_ALLOC_SLOT_SPEC_VERSION, NULL, SKV_SLOT_COUNT, SKV_ALLOC_DISCRETE, \
     0, 0, 0}

/* Add a slot (copied). Duplicate name: SKV_EEXIST; UNIQUE with FRACTIONAL
 * mode, a negative quantum, a count quantum that neither divides nor is a
 * multiple of one unit (1000), too many slots: SKV_EINVAL. Existing devices get
 * capacity 0 in the new slot. index_out (may be NULL): the slot's index;
 * slot indexes are 0, 1, ... in order of addition. */
SKV_EXTERN int skv_alloc_map_add_slot(skv_alloc_map *map, size_t *index_out,
                                      const skv_alloc_slot_spec *spec,
                                      skv_error *err);

/* Add a device with capacity 0 in every slot. id: 1..127 printable ASCII
 * characters without spaces, unique in the map (else SKV_EINVAL/SKV_EEXIST).
 * numa_node: -1 (unknown) .. SKV_ALLOC_NUMA_MAX. Device indexes are 0, 1,
 * ... in order of addition; that is "device order" for tie-breaks. */
SKV_EXTERN int skv_alloc_map_add_device(skv_alloc_map *map, size_t *index_out,
                                        const char *id, int numa_node,
                                        skv_error *err);

/* Set a device's capacity in a slot. Must be a multiple of the quantum
 * (SKV_EINVAL), at least what is in use there (SKV_EBUSY), 0 or 1 unit for
 * UNIQUE slots, and keep the slot's total <= SKV_QTY_MAX (SKV_ERANGE).
 * Unknown slot name: SKV_ENOENT; device index out of range: SKV_ERANGE. */
SKV_EXTERN int skv_alloc_map_set_capacity(skv_alloc_map *map, size_t device,
                                          const char *slot, skv_qty capacity,
                                          skv_error *err);

/* ---- queries (never fail; out-of-range indexes read as 0 / NULL / -1) ---- */

SKV_EXTERN size_t skv_alloc_map_slot_count(const skv_alloc_map *map);
/* Name of slot index; NULL out of range. Borrowed while the map lives. */
SKV_EXTERN const char *skv_alloc_map_slot_name(const skv_alloc_map *map,
                                               size_t slot);
/* The slot's specification (name borrowed; quantum resolved, never 0).
 * SKV_ERANGE when out of range. */
SKV_EXTERN int skv_alloc_map_slot_spec(const skv_alloc_map *map, size_t slot,
                                       skv_alloc_slot_spec *out);
/* SKV_ENOENT when the map has no such slot. */
SKV_EXTERN int skv_alloc_map_slot_index(const skv_alloc_map *map,
                                        const char *name, size_t *out);

SKV_EXTERN size_t skv_alloc_map_device_count(const skv_alloc_map *map);
/* Borrowed while the map lives; NULL out of range. */
SKV_EXTERN const char *skv_alloc_map_device_id(const skv_alloc_map *map,
                                               size_t device);
/* -1 for unknown or out of range. */
SKV_EXTERN int skv_alloc_map_device_numa(const skv_alloc_map *map,
                                         size_t device);
/* SKV_ENOENT when no device has that id. */
SKV_EXTERN int skv_alloc_map_device_index(const skv_alloc_map *map,
                                          const char *id, size_t *out);
SKV_EXTERN skv_alloc_strategy skv_alloc_map_strategy(const skv_alloc_map *map);

/* Per slot and device, or summed over devices with device = SKV_ALLOC_ALL:
 * capacity, amount in use, capacity - used, and "available": what a request
 * for this slot could take there now (0 on devices blocked by the exclusive
 * group). */
SKV_EXTERN skv_qty skv_alloc_map_capacity(const skv_alloc_map *map,
                                          size_t slot, size_t device);
SKV_EXTERN skv_qty skv_alloc_map_used(const skv_alloc_map *map, size_t slot,
                                      size_t device);
SKV_EXTERN skv_qty skv_alloc_map_free_qty(const skv_alloc_map *map,
                                          size_t slot, size_t device);
SKV_EXTERN skv_qty skv_alloc_map_available(const skv_alloc_map *map,
                                           size_t slot, size_t device);

/* Totals over all devices as slot vectors: entries are set (replaced) in
 * the caller's vectors; either may be NULL. */
SKV_EXTERN int skv_alloc_map_totals(skv_slots *capacity, skv_slots *used,
                                    const skv_alloc_map *map, skv_error *err);

/* 1 when both maps have the same slots, devices, capacities and usage. */
SKV_EXTERN int skv_alloc_map_equal(const skv_alloc_map *a,
                                   const skv_alloc_map *b);

/* ---- allocating --------------------------------------------------------- */

/* Constraint flags. */
#define SKV_ALLOC_ONE_DEVICE 0x1u /* each slot's amount on a single device */
#define SKV_ALLOC_ANTIFRAG 0x2u   /* anti-fragmentation for every fractional
                                     slot of this request */

#define SKV_ALLOC_CONSTRAINTS_VERSION 1u
/* Optional restrictions of one request. Pointers are only read during the
 * call. */
typedef struct skv_alloc_constraints {
    unsigned version;               /* SKV_ALLOC_CONSTRAINTS_VERSION */
    skv_alloc_strategy strategy;    /* SKV_ALLOC_DEFAULT: the map's */
    unsigned flags;                 /* SKV_ALLOC_ONE_DEVICE ... */
    /* Allowed NUMA nodes: bit (n % 64) of word n / 64 allows node n. NULL:
     * no restriction. With a mask, devices of unknown node are excluded. */
    const uint64_t *numa_mask;
    size_t numa_mask_words;
    /* Preferred NUMA nodes, best first: devices are taken in tiers, first
     * from numa_prefer[0], then [1], ..., then every other allowed node
     * (-1 names the unknown node). NULL: one tier. Duplicates: SKV_EINVAL. */
    const int *numa_prefer;
    size_t numa_prefer_count;
    /* Device subset (indexes): only these devices are eligible; the order
     * does not matter. NULL: all. Out of range or duplicates: SKV_EINVAL. */
    const size_t *devices;
    size_t device_count;
} skv_alloc_constraints;
#define SKV_ALLOC_CONSTRAINTS_INIT \
    {SKV_ALLOC_CONSTRAINTS_VERSION, SKV_ALLOC_DEFAULT, 0, NULL, 0, NULL, 0, \
     NULL, 0}

/* Would skv_alloc_map_alloc(request, c) succeed? Returns exactly what it
 * would return (0, SKV_ENOSPC, SKV_ERANGE, SKV_EINVAL) without changing the
 * map or allocating memory. Every slot of request must be a slot of the map
 * (zero amounts are ignored); c may be NULL. */
SKV_EXTERN int skv_alloc_map_check(const skv_alloc_map *map,
                                   const skv_slots *request,
                                   const skv_alloc_constraints *c,
                                   skv_error *err);
/* The same for one slot by index (no name lookups). */
SKV_EXTERN int skv_alloc_map_check_slot(const skv_alloc_map *map, size_t slot,
                                        skv_qty qty,
                                        const skv_alloc_constraints *c,
                                        skv_error *err);

/* Allocate request; *out receives the amounts taken (free it with
 * skv_alloc_result_free after releasing it, or keep it to release later).
 * On failure the map is unchanged and *out is untouched. */
SKV_EXTERN int skv_alloc_map_alloc(skv_alloc_result **out, skv_alloc_map *map,
                                   const skv_slots *request,
                                   const skv_alloc_constraints *c,
                                   skv_error *err);
SKV_EXTERN int skv_alloc_map_alloc_slot(skv_alloc_result **out,
                                        skv_alloc_map *map, size_t slot,
                                        skv_qty qty,
                                        const skv_alloc_constraints *c,
                                        skv_error *err);

/* Give back exactly what result took. The result is marked released (a
 * second release is SKV_ESTATE) but stays the caller's to free. An entry out
 * of the map's range (SKV_EINVAL) or more than the map has in use
 * (SKV_ESTATE): nothing is released. */
SKV_EXTERN int skv_alloc_map_release(skv_alloc_map *map, skv_alloc_result *r,
                                     skv_error *err);

/* ---- results ------------------------------------------------------------ */

/* One amount of one slot on one device (indexes into the map). */
typedef struct skv_alloc_entry {
    size_t slot;
    size_t device;
    skv_qty qty;
} skv_alloc_entry;

SKV_EXTERN void skv_alloc_result_free(skv_alloc_result *r);
/* Entries ordered by slot index, then device index; no zero amounts. */
SKV_EXTERN size_t skv_alloc_result_count(const skv_alloc_result *r);
/* SKV_ERANGE past the end. */
SKV_EXTERN int skv_alloc_result_at(const skv_alloc_result *r, size_t index,
                                   skv_alloc_entry *out);
/* Amount of slot on device (0 when none); device SKV_ALLOC_ALL: the sum. */
SKV_EXTERN skv_qty skv_alloc_result_get(const skv_alloc_result *r, size_t slot,
                                        size_t device);
/* 1 once released. */
SKV_EXTERN int skv_alloc_result_released(const skv_alloc_result *r);

/* Take exactly these amounts (e.g. allocations that existed before an agent
 * restart). Entries may come in any order; the same (slot, device) may
 * repeat (amounts add). Index out of range, amount not a multiple of the
 * quantum: SKV_EINVAL; more than a device has free: SKV_ENOSPC; a device
 * held through an exclusive partner slot: SKV_EBUSY. All or nothing. */
SKV_EXTERN int skv_alloc_map_claim(skv_alloc_result **out, skv_alloc_map *map,
                                   const skv_alloc_entry *entries, size_t n,
                                   skv_error *err);

/* Encode a result by names: msgpack array of [slot, device id, qty]
 * (free *out_buf with skv_free). */
SKV_EXTERN int skv_alloc_result_encode(void **out_buf, size_t *out_len,
                                       const skv_alloc_map *map,
                                       const skv_alloc_result *r,
                                       skv_error *err);
/* Decode untrusted bytes against map's names into a result that is NOT
 * taken from the map (use it to release usage restored by a snapshot).
 * Malformed data, unknown names, bad amounts: SKV_EPROTO. */
SKV_EXTERN int skv_alloc_result_decode(skv_alloc_result **out,
                                       const skv_alloc_map *map,
                                       const void *buf, size_t len,
                                       skv_error *err);
/* Decode and claim in one step (agent restart from stored allocations). */
SKV_EXTERN int skv_alloc_map_claim_encoded(skv_alloc_result **out,
                                           skv_alloc_map *map, const void *buf,
                                           size_t len, skv_error *err);

/* ---- snapshot ----------------------------------------------------------- */

/* The whole map (options, slots, devices, capacities, usage) as msgpack
 * (free *out_buf with skv_free). */
SKV_EXTERN int skv_alloc_map_snapshot(void **out_buf, size_t *out_len,
                                      const skv_alloc_map *map,
                                      skv_error *err);
/* Rebuild a map from untrusted snapshot bytes; malformed, truncated,
 * trailing bytes, inconsistent usage (over capacity, exclusivity broken,
 * not a multiple of the quantum), limits exceeded: SKV_EPROTO. */
SKV_EXTERN int skv_alloc_map_restore(skv_alloc_map **out, const void *buf,
                                     size_t len, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_ALLOC_H */
