/* Incremental pass, per-owner order (drf, fairshare; see pass_inc.c).
 * queue.c's walk merges the owners' queues (each by submit order) by the
 * rank of the owner, re-ranking an owner after each of its visits; only a
 * placement changes an owner's rank (its own usage). Skipping a session
 * that cannot start changes no rank, so merging the same queues with the
 * skipped sessions left out visits the others in the same order. The owners
 * ranked (which decays their fair-share history at now) are exactly those
 * queue.c ranks: the ones with a candidate.
 * SPDX-License-Identifier: Apache-2.0 */
#include "pass_inc_int.h"

typedef struct oqi {
    int64_t rank;
    uint64_t seq;
    uint32_t cur, end;          /* cursor and end of its range in ord */
} oqi;

static bool oqi_less(const oqi *a, const oqi *b)
{
    return a->rank != b->rank ? a->rank < b->rank : a->seq < b->seq;
}

static void oqi_down(oqi *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && oqi_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && oqi_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        oqi t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* A candidate of the full walk: pending and past the static predicates. */
static bool is_cand(skv__pass *P, ord_ent *e)
{
    if (!skv__inc_live(P, e)) {
        e->gone = true;
        return false;
    }
    return skv__pass_static_ok(P, P->s->sess[e->si]);
}

/* The next entry of [from, end) that may be a candidate. A deferred entry
 * is taken unread: if its session left, popping it does nothing. */
static uint32_t next_cand(skv__pass *P, skv__inc *I, uint32_t from, uint32_t end)
{
    for (uint32_t i = from; i < end; i++)
        if (!I->ord[i].gone && (I->ord[i].deferred || is_cand(P, &I->ord[i])))
            return i;
    return end;
}

static int owner_heap(skv__pass *P, skv__inc *I, oqi **out, uint32_t *nout,
                      skv_error *err)
{
    oqi *h = skv__calloc(I->n ? I->n : 1, sizeof(*h));
    if (!h)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    uint32_t nh = 0;
    for (uint32_t i = 0; i < I->n;) {
        uint32_t j = i;
        while (j < I->n && I->ord[j].rank == I->ord[i].rank)
            j++;
        /* the first true candidate, read (an owner without one is not
         * ranked at all, as in queue.c) */
        uint32_t c = i;
        while (c < j && (I->ord[c].gone || !is_cand(P, &I->ord[c])))
            c++;
        if (c < j)
            h[nh++] = (oqi){skv__pass_rank(P, I->ord[c].si), I->ord[c].seq, c, j};
        i = j;
    }
    for (uint32_t i = nh / 2 + 1; i-- > 0;)
        oqi_down(h, nh, i);
    *out = h;
    *nout = nh;
    return 0;
}

int skv__inc_walk_owners(skv__pass *P, skv__inc *I, skv__pass_visit_fn fn,
                         skv_error *err)
{
    oqi *h = NULL;
    uint32_t nh = 0;
    int rc = owner_heap(P, I, &h, &nh, err);
    while (rc >= 0 && nh) {
        oqi *t = &h[0];
        ord_ent *e = &I->ord[t->cur];
        bool visited;
        rc = skv__inc_step(P, I, e, fn, &visited);
        if (rc == 0)
            e->gone = true;
        uint32_t nx = next_cand(P, I, t->cur + 1, t->end);
        if (nx < t->end) {
            /* re-rank after a visit; the visited session has the owner */
            if (visited && rc >= 0)
                t->rank = skv__pass_rank(P, e->si);
            t->cur = nx;
            t->seq = I->ord[nx].seq;
        } else {
            h[0] = h[--nh];
        }
        oqi_down(h, nh, 0);
    }
    skv__free(h);
    uint32_t w = 0;
    for (uint32_t i = 0; i < I->n; i++)
        if (!I->ord[i].gone)
            I->ord[w++] = I->ord[i];
    I->n = w;
    return rc < 0 ? rc : 0;
}
