/* Internal: choosing k whole accelerators that are close to each other, on
 * the fewest NUMA nodes. One algorithm for the node mapper (src/node, over
 * the machine's hwloc topology) and the scheduler's per-agent maps
 * (src/sched, over the layout an agent registered), so the manager decides
 * as the node mapper would on the machine itself.
 *
 * The caller describes the devices through callbacks (PCIe proximity as an
 * skv_topo_link, NVLink bandwidth, whether the rest of the request fits a
 * NUMA node) and lends scratch arrays of ndev entries.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_AFFINITY_H
#define SKV_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct skv__aff {
    const int *numa;        /* [ndev] NUMA node per device, -1 unknown */
    /* PCIe proximity (skv_topo_link: lower is closer) of devices a, b. */
    int (*link)(const void *ctx, size_t a, size_t b);
    /* NVLink bandwidth between a and b (higher is better); NULL: none. */
    int64_t (*bw)(const void *ctx, size_t a, size_t b);
    /* Whether the cores and memory of the request fit on node too (a node
     * where they do is preferred); NULL: always. */
    bool (*rest_fits)(const void *ctx, int node);
    const void *ctx;
    /* scratch lent by the caller, [ndev] each; free devices go in devs */
    size_t *devs, *pool, *trial, *pick;
    int64_t *acc, *accbw;
} skv__aff;

/* Choose k of the nfree devices listed in f->devs (ascending) into
 * f->pick[0..k) (ascending): the devices of one NUMA node when k fit on one
 * (a node where rest_fits first, then the tightest, then the lowest id),
 * else of the fewest nodes; within them the set with the closest links,
 * then the most NVLink bandwidth, then the fewest free PCIe-switch partners
 * left alone. false when fewer than k are free (or more than 64 nodes hold
 * them): let the caller's plain placement decide. */
bool skv__aff_pick(skv__aff *f, size_t nfree, size_t k);

#endif
