/* Sparse position bitmaps and the exact random tie-break over them (see
 * selector_frag_pset.h).
 *
 * Why a bitmap walk: with ties=random the scan gives every scored agent
 * the next draw of the generator in group order, so a tied agent's draw
 * depends on how many scored agents precede it. Walking the group for
 * that costs O(agents) per decision (10,000 on the DGX bench, where the
 * idle agents often all tie); the words of the scored and tied bitmaps
 * cost O(agents / 64), and a tied agent's rank is a popcount. What stays
 * is one generator draw per tied agent: each is a fresh pseudo-random
 * value and any of them may be the highest, so no exact rule can skip it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_internal.h"
#include "selector_frag.h"
#include "selector_frag_pset.h"

/* Index of the first word >= w. */
static uint32_t lower(const skv__fpset *s, uint32_t w)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->e[mid].w < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int skv__fpset_add(skv__fpset *s, uint32_t pos)
{
    uint32_t w = pos / 64, i = lower(s, w);
    if (i < s->n && s->e[i].w == w) {
        s->e[i].m |= 1ull << (pos % 64);
        return 0;
    }
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 2;
        skv__fpword *ne = skv__reallocarray(s->e, nc, sizeof(*ne));
        if (!ne)
            return SKV_ENOMEM;
        s->e = ne;
        s->cap = nc;
    }
    memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof(*s->e));
    s->e[i] = (skv__fpword){w, 1ull << (pos % 64)};
    s->n++;
    return 0;
}

void skv__fpset_del(skv__fpset *s, uint32_t pos)
{
    uint32_t w = pos / 64, i = lower(s, w);
    if (i == s->n || s->e[i].w != w)
        return;
    s->e[i].m &= ~(1ull << (pos % 64));
    if (s->e[i].m)
        return;
    memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(*s->e));
    s->n--;
}

void skv__fpset_fini(skv__fpset *s)
{
    skv__free(s->e);
    memset(s, 0, sizeof(*s));
}

void skv__fpset_or(uint64_t *dst, const skv__fpset *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        dst[s->e[i].w] |= s->e[i].m;
}

/* Hardware popcount where the CPU has one (chosen at load time). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FP_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define FP_CLONES
#endif

/* One word's tied positions: the key (draw << 32 | ~position) of the best
 * one, or best unchanged. Keys order by draw, then by lower position. */
static inline uint64_t word_best(uint64_t best, uint64_t sc, uint64_t t,
                                 uint64_t base, uint32_t w, uint64_t rng)
{
    while (t) {
        int b = __builtin_ctzll(t);
        t &= t - 1;
        uint64_t r = base + (uint64_t)__builtin_popcountll(sc & ((1ull << b) - 1));
        uint64_t d = skv__rng_at(rng, r) & 0xFFFFF;
        uint64_t key = d << 32 | (uint32_t)~(w * 64 + (uint32_t)b);
        best = key > best ? key : best;
    }
    return best;
}

FP_CLONES
uint32_t skv__fpset_pick_random(const uint64_t *scored, const uint64_t *tied,
                                uint32_t nwords, uint64_t rng)
{
    uint64_t base = 0, best = 0;
    bool any = false;
    for (uint32_t w = 0; w < nwords; w++) {
        if (tied[w]) {
            best = word_best(best, scored[w], tied[w], base, w, rng);
            any = true;
        }
        base += (uint64_t)__builtin_popcountll(scored[w]);
    }
    return any ? ~(uint32_t)best : UINT32_MAX;
}

uint32_t skv__fpset_first(const uint64_t *tied, uint32_t nwords)
{
    for (uint32_t w = 0; w < nwords; w++)
        if (tied[w])
            return w * 64 + (uint32_t)__builtin_ctzll(tied[w]);
    return UINT32_MAX;
}
