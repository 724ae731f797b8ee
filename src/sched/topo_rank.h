/* Layout-aware agent choice (topo_rank.c): among the agents a selector
 * rates equal for a multi-GPU kernel, the one whose closest free devices
 * are closest (same PCIe switch, then same NUMA node, then across
 * sockets). Private to src/sched.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SCHED_TOPO_RANK_H
#define SKV_SCHED_TOPO_RANK_H

#include "sched_int.h"

/* At most this many tied agents (in group order) are ranked per decision:
 * the cost stays bounded when thousands of idle agents tie. */
#define SKV__TOPO_RERANK_MAX 16

/* What a kernel asks of the layout: k >= 2 whole devices of one slot. */
typedef struct skv__topo_want {
    uint8_t slot;
    size_t k;
} skv__topo_want;

/* Whether ties among the group's agents are re-ranked by layout for req
 * (a kernel placed alone, not a single-node gang's total): true with *w
 * filled when req takes >= 2 whole devices of exactly one whole slot and
 * the group's selector does not break ties at random. */
bool skv__topo_rank_wanted(const skv_sched *s, const skv__group *g,
                           const skv__session *x, const skv_qty *req,
                           skv__topo_want *w);

/* The rank of agent a for w (lower: closer): the worst link class among
 * the devices the layout would give (skv__sched_topo_pick), then their
 * summed link classes. An agent without a layout, or where they do not
 * fit, ranks last (SKV__TOPO_RANK_NONE). */
#define SKV__TOPO_RANK_NONE UINT32_MAX
uint32_t skv__topo_rank(const skv__agent *a, const skv__topo_want *w);

/* Of tied agents (group order, n <= SKV__TOPO_RERANK_MAX), the index of
 * the lowest rank, the first one on equal ranks. */
size_t skv__topo_rerank(const skv_sched *s, const uint32_t *tied, size_t n,
                        const skv__topo_want *w);

#endif
