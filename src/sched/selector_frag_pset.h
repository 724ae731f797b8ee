/* Private to src/sched: sets of group positions as sparse bitmaps, and the
 * tie-break among tied agents that the class index (selector_frag_index.c)
 * computes from them (selector_frag_pset.c).
 *
 * A class's members are kept as the 64-position words of the group where
 * it has members, so the agents of the classes a decision scores and of
 * those tied at the best score become two dense bitmaps in time
 * proportional to those words, not to the group. From them each tied
 * agent's rank among the scored agents (what its random draw in the scan
 * depends on) is a popcount.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SELECTOR_FRAG_PSET_H
#define SKV_SELECTOR_FRAG_PSET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct skv__fpword {
    uint32_t w;             /* word index: positions 64w .. 64w+63 */
    uint64_t m;             /* which of them are in the set */
} skv__fpword;

/* Words sorted by index, only non-empty ones. */
typedef struct skv__fpset {
    skv__fpword *e;
    uint32_t n, cap;
} skv__fpset;

/* SKV_ENOMEM when a new word cannot be stored (the set is unchanged). */
int skv__fpset_add(skv__fpset *s, uint32_t pos);
void skv__fpset_del(skv__fpset *s, uint32_t pos);
void skv__fpset_fini(skv__fpset *s);
/* dst |= s (dst: one word per 64 positions of the group). */
void skv__fpset_or(uint64_t *dst, const skv__fpset *s);

/* Among the positions in tied (a subset of scored), the one the scan's
 * ties=random picks: each scored position draws, in position order, the
 * next value of the splitmix64 generator at state rng; the highest low 20
 * bits wins, then the lowest position. SKV__NONE-like UINT32_MAX when tied
 * is empty. */
uint32_t skv__fpset_pick_random(const uint64_t *scored, const uint64_t *tied,
                                uint32_t nwords, uint64_t rng);
/* The lowest position in tied, UINT32_MAX when empty. */
uint32_t skv__fpset_first(const uint64_t *tied, uint32_t nwords);

#endif
