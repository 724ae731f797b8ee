/* Private to src/sched: the free-state class index that lets the pass find
 * the agent a fragmentation selector (frag, fgd) would choose without
 * scoring every agent (selector_frag_index.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SELECTOR_FRAG_INDEX_H
#define SKV_SELECTOR_FRAG_INDEX_H

#include "pass_int.h"

typedef struct skv__fidx skv__fidx;

/* The agent a's free state changed (its map, its schedulable flag). */
void skv__fidx_touch(skv_sched *s, skv__agent *a);
/* The group's agent list changed (agents added, removed or replaced). */
void skv__fidx_invalidate(skv__group *g);
void skv__fidx_free(skv__fidx *ix);

/* The agent the scan over every agent (place.c) would choose for kernel k
 * of session si, and the same draws from the selector's generator. *done
 * is false when the index cannot decide this kernel (a selector other
 * than frag/fgd, scan=nodes, label or designated constraints, a filter,
 * single-node gangs, out of memory): the caller then scans. miss counts
 * the fitting agents reservations kept from x, as the scan does. */
uint32_t skv__fidx_choose(skv__pass *P, uint32_t si, uint32_t k,
                          const skv_sched_kernel_view *kv, skv__miss *miss,
                          bool *done);

/* The resource reason of session x for req (agents_candidate and the
 * short slots, unsorted) as reason.c's walk over the agents computes it,
 * tallied over the group's free-state classes. False when the index is
 * not in use for the group or x names agents or labels: walk the agents. */
bool skv__fidx_reason(skv__pass *P, const skv__session *x, const skv_qty *req,
                      skv__reason *r);

#endif
