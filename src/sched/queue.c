/* Ordering of a pass: static ranks sorted once, or per-owner queues whose
 * heads are re-ranked after every placement (DRF, fair-share).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_int.h"

int32_t skv__pass_aged(const skv__group *g, const skv__session *x, int64_t now)
{
    if (g->aging_ms <= 0 || now <= x->submitted)
        return x->priority;
    int64_t p = x->priority + (now - x->submitted) / g->aging_ms;
    return p > INT32_MAX ? INT32_MAX : (int32_t)p;
}

void skv__pass_owner_view(skv_sched_owner_view *v, skv_sched *s,
                          skv__owner *o, int64_t now)
{
    skv__sched_owner_decay(s, o, now);
    v->name = o->name;
    v->scope = o->scope;
    v->n_slots = s->nslots;
    v->usage = o->usage;
    v->capacity = s->cap_total;
    v->dominant_share_ppm = skv__sched_share_ppm(o->usage, s->cap_total);
    v->decayed_usage = o->hist;
}

static void sview(skv_sched_session_view *v, const skv__pass *P,
                  const skv__session *x)
{
    const skv_sched *s = P->s;
    v->id = x->id;
    v->domain = s->owners[x->owner[SKV_SCHED_SCOPE_DOMAIN]]->name;
    v->project = s->owners[x->owner[SKV_SCHED_SCOPE_PROJECT]]->name;
    v->user = s->owners[x->owner[SKV_SCHED_SCOPE_USER]]->name;
    v->type = x->type;
    v->priority = x->priority;
    v->aged_priority = skv__pass_aged(P->g, x, P->now);
    v->submitted_ms = x->submitted;
    v->seq = x->seq;
    v->n_kernels = x->nk;
    v->estimated_duration_ms = x->est_dur;
}

typedef struct ranked {
    int64_t rank;
    uint64_t seq;
    uint32_t sess;
    uint32_t owner;
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

int64_t skv__pass_rank(skv__pass *P, uint32_t si)
{
    skv__session *x = P->s->sess[si];
    const skv_sched_sequencer *q = P->g->seq;
    skv_sched_session_view sv;
    skv_sched_owner_view ov;
    sview(&sv, P, x);
    skv__pass_owner_view(&ov, P->s, P->s->owners[x->owner[q->scope]], P->now);
    return q->rank(P->g->seq_state, &sv, &ov, P->now);
}

static int walk_static(skv__pass *P, ranked *r, uint32_t n,
                       skv__pass_visit_fn fn)
{
    for (uint32_t i = 0; i < n; i++)
        r[i].rank = skv__pass_rank(P, r[i].sess);
    if (n)
        qsort(r, n, sizeof(*r), cmp_ranked);
    for (uint32_t i = 0; i < n; i++) {
        int rc = fn(P, r[i].sess);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Binary heap of owner queues keyed by (rank of head, head seq). */
typedef struct oq {
    int64_t rank;
    uint64_t seq;
    uint32_t first, len, pos; /* range in the sorted array, cursor */
} oq;

static bool oq_less(const oq *a, const oq *b)
{
    return a->rank != b->rank ? a->rank < b->rank : a->seq < b->seq;
}

static void heap_down(oq *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && oq_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && oq_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        oq t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static int cmp_owner_seq(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->owner != b->owner)
        return a->owner < b->owner ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

static int walk_owners(skv__pass *P, ranked *r, uint32_t n,
                       skv__pass_visit_fn fn, skv_error *err)
{
    if (n)
        qsort(r, n, sizeof(*r), cmp_owner_seq);
    oq *h = skv__calloc(n ? n : 1, sizeof(*h));
    if (!h)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    uint32_t nh = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && r[j].owner == r[i].owner)
            j++;
        h[nh++] = (oq){skv__pass_rank(P, r[i].sess), r[i].seq, i, j - i, 0};
        i = j;
    }
    for (uint32_t i = nh / 2 + 1; i-- > 0;)
        heap_down(h, nh, i);
    int rc = 0;
    while (nh && rc >= 0) {
        oq *top = &h[0];
        rc = fn(P, r[top->first + top->pos].sess);
        if (++top->pos < top->len) {
            /* the owner's usage may have changed: re-rank its new head */
            const ranked *nx = &r[top->first + top->pos];
            top->rank = skv__pass_rank(P, nx->sess);
            top->seq = nx->seq;
        } else {
            h[0] = h[--nh];
        }
        heap_down(h, nh, 0);
    }
    skv__free(h);
    return rc < 0 ? rc : 0;
}

int skv__pass_walk(skv__pass *P, const uint32_t *cand, uint32_t n,
                   skv__pass_visit_fn fn, skv_error *err)
{
    ranked *r = skv__calloc(n ? n : 1, sizeof(*r));
    if (!r)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    const skv_sched_sequencer *q = P->g->seq;
    for (uint32_t i = 0; i < n; i++) {
        const skv__session *x = P->s->sess[cand[i]];
        r[i] = (ranked){0, x->seq, cand[i], x->owner[q->scope]};
    }
    int rc = (q->flags & SKV_SCHED_SEQ_PER_OWNER)
                 ? walk_owners(P, r, n, fn, err)
                 : walk_static(P, r, n, fn);
    skv__free(r);
    return rc;
}
