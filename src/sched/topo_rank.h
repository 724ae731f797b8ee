/* Layout-aware agent choice (topo_rank.c): of the agents a selector rates
 * best for a multi-GPU kernel (its first SKV__TOPO_RERANK_MAX), the one
 * whose devices for the kernel are closest (same PCIe switch, then same
 * NUMA node, then across sockets). Private to src/sched.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SCHED_TOPO_RANK_H
#define SKV_SCHED_TOPO_RANK_H

#include "sched_int.h"

/* At most this many of the selector's best candidates are ranked per
 * decision: the cost stays bounded however many agents there are. */
#define SKV__TOPO_RERANK_MAX 16

/* What a kernel asks of the layout: k >= 2 whole devices of one slot. */
typedef struct skv__topo_want {
    uint8_t slot;
    size_t k;
} skv__topo_want;

/* Whether the group's best candidates are re-ranked by layout for req
 * (a kernel placed alone, not a single-node gang's total): true with *w
 * filled when req takes >= 2 whole devices of exactly one whole slot and
 * the group's selector does not break ties at random. */
bool skv__topo_rank_wanted(const skv_sched *s, const skv__group *g,
                           const skv__session *x, const skv_qty *req,
                           skv__topo_want *w);

/* The rank of agent a for w (lower: closer): the worst link class
 * (skv_topo_link) among the devices the layout would give there
 * (skv__sched_topo_pick). An agent without a layout, or where they do not
 * fit, ranks last (SKV__TOPO_RANK_NONE). */
#define SKV__TOPO_RANK_NONE UINT32_MAX
uint32_t skv__topo_rank(const skv__agent *a, const skv__topo_want *w);

/* Of the candidates (the selector's order, n <= SKV__TOPO_RERANK_MAX),
 * the index of the lowest rank, the first one on equal ranks. */
size_t skv__topo_rerank(const skv_sched *s, const uint32_t *tied, size_t n,
                        const skv__topo_want *w);

/* The selector's best candidates: the first SKV__TOPO_RERANK_MAX by score
 * (higher first), equal scores in the order added (group order). */
typedef struct skv__topo_top {
    uint32_t ai[SKV__TOPO_RERANK_MAX];
    int64_t sc[SKV__TOPO_RERANK_MAX];
    size_t n;
} skv__topo_top;
void skv__topo_top_add(skv__topo_top *t, uint32_t ai, int64_t sc);

#endif
