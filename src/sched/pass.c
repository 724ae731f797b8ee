/* The scheduling pass: per resource group, order the pending sessions,
 * check predicates, place whole gangs, and on failure record the reason,
 * preempt or reserve. A pass that fails (out of memory) undoes itself.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "pass_int.h"

bool skv__pass_static_ok(skv__pass *P, skv__session *x);
bool skv__pass_quota_ok(skv__pass *P, skv__session *x);

/* Whether any owner of x has a guarantee (in the group or overall):
 * only then may x reclaim borrowed capacity (preempt.c). */
static bool guaranteed(const skv_sched *s, const skv__session *x)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        const skv__owner *o = s->owners[x->owner[sc]];
        if (o->has_guarantee || o->gq[x->gq[sc]].has_guarantee)
            return true;
    }
    return false;
}

/* Failure memo. Within one pass free capacity only shrinks (placements
 * commit, trials and preemption plans are undone exactly, reservations only
 * restrict), so a session shaped exactly like one that already failed for
 * resources fails too: skip its scan. Only for sessions without placement
 * constraints, and only once reservations are used up.
 * With preemption on the memo keeps the failed session of the highest
 * (aged) priority per shape, and serves only sessions of no higher
 * priority that cannot reclaim (no guarantee): their victims are a subset
 * of its victims (lower priority than theirs, running sessions are fixed
 * within a pass and victims only get marked), so its failure to find
 * enough is theirs too. Preemptors waiting for victims always visit. */
static bool memo_eligible(const skv__pass *P, const skv__session *x)
{
    return !P->o->filter && !x->arch && !x->nmodels && !x->ndesignated &&
           !x->nneed_labels && P->nresv >= P->g->max_reservations &&
           (!P->g->preemption ||
            (!x->preemptor && !x->waiting_victims && !guaranteed(P->s, x)));
}

/* Under preemption: may the memo's failed session m stand for x? */
static bool memo_covers(const skv__pass *P, const skv__session *m,
                        const skv__session *x)
{
    return !P->g->preemption || skv__pass_aged(P->g, x, P->now) <=
                                    skv__pass_aged(P->g, m, P->now);
}

static bool same_shape(const skv__session *a, const skv__session *b)
{
    if (a->nk != b->nk || a->mode != b->mode || a->one_per_agent != b->one_per_agent ||
        a->est_dur != b->est_dur)
        return false;
    for (uint32_t k = 0; k < a->nk; k++)
        if (memcmp(a->k[k].req, b->k[k].req, sizeof(a->k[k].req)) != 0)
            return false;
    return true;
}

static uint32_t shape_hash(const skv__session *x)
{
    uint64_t h = 1469598103934665603ull ^ x->nk ^ ((uint64_t)x->mode << 40) ^
                 ((uint64_t)x->one_per_agent << 41) ^ (uint64_t)x->est_dur * 31;
    for (uint32_t k = 0; k < x->nk && k < 8; k++)
        for (int j = 0; j < NSL; j++)
            h = (h ^ (uint64_t)x->k[k].req[j]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static uint32_t *memo_slot(skv__pass *P, const skv__session *x)
{
    uint32_t mask = P->memo_cap - 1;
    for (uint32_t i = shape_hash(x) & mask;; i = (i + 1) & mask) {
        if (P->memo[i] == SKV__NONE || same_shape(P->s->sess[P->memo[i]], x))
            return &P->memo[i];
    }
}

static int copy_reason(skv__reason *dst, const skv__reason *src)
{
    skv__sched_reason_reset(dst);
    *dst = *src;
    dst->detail_owned = NULL;
    if (src->detail_owned) {
        dst->detail_owned = skv__strdup(src->detail_owned);
        dst->detail = dst->detail_owned ? dst->detail_owned : "";
    }
    return 0;
}

static int resource_miss(skv__pass *P, uint32_t si, const skv__miss *miss,
                         skv_error *err)
{
    skv__session *x = P->s->sess[si];
    bool memo = memo_eligible(P, x);
    skv__pass_reason_resources(P, si, miss);
    if (P->g->preemption) {
        int rc = skv__pass_preempt(P, si, err);
        if (rc)
            return rc < 0 ? rc : 0;
    }
    if (P->nresv < P->g->max_reservations && skv__pass_reserve(P, si, err))
        return 0;
    if (memo && P->memo) {
        uint32_t *slot = memo_slot(P, x);
        if (*slot == SKV__NONE || !memo_covers(P, P->s->sess[*slot], x))
            *slot = si;
    }
    return 0;
}

static int visit(skv__pass *P, uint32_t si)
{
    skv__session *x = P->s->sess[si];
    skv_error *err = NULL;
    P->rb->considered++;
    if (P->o->max_placements && P->placed >= P->o->max_placements) {
        skv__sched_reason_reset(&x->reason);
        x->reason.code = SKV_SCHED_REASON_PASS_LIMIT;
        x->reason.evaluated_ms = P->now;
        return 0;
    }
    if (!skv__pass_quota_ok(P, x))
        return 0;
    if (P->memo && memo_eligible(P, x)) {
        uint32_t *slot = memo_slot(P, x);
        if (*slot != SKV__NONE && memo_covers(P, P->s->sess[*slot], x))
            return copy_reason(&x->reason, &P->s->sess[*slot]->reason);
    }
    skv__miss miss;
    int rc = skv__pass_place(P, si, &miss);
    if (rc == SKV_ENOSPC)
        return resource_miss(P, si, &miss, err);
    if (rc)
        return rc;
    if ((rc = skv__rb_add_placement(P->rb, P->s, si, NULL)) == 0 &&
        (rc = skv__sched_commit(P->s, si, P->now, NULL)) != 0)
        P->rb->npl--; /* commit failed: drop the entry just added */
    if (rc) {
        skv__pass_unplace(P, si);
        return rc;
    }
    P->placed++;
    skv__pass_notify(P, si);
    return 1;
}

/* Insertion sort by submit order: the preemptors are few. */
static void sort_by_seq(const skv_sched *s, uint32_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && s->sess[v[j - 1]]->seq > s->sess[v[j]]->seq; j--) {
            uint32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

static void memo_new(skv__pass *P, uint32_t n)
{
    P->memo_cap = 64;
    while (P->memo_cap < 2 * n)
        P->memo_cap *= 2;
    P->memo = skv__malloc(P->memo_cap * sizeof(uint32_t));
    if (P->memo)
        memset(P->memo, 0xff, P->memo_cap * sizeof(uint32_t));
}

/* The same visits, skipping sessions that cannot start (pass_inc.c). */
static int pass_group_inc(skv__pass *P, skv_error *err)
{
    memo_new(P, P->g->npending);
    P->nresv = 0;
    int rc = skv__pass_inc_walk(P, visit, err);
    if (rc < 0 && err && !err->code)
        skv__err(err, rc, "scheduling pass over group '%s' failed", P->g->name);
    skv__free(P->memo);
    P->memo = NULL;
    return rc < 0 ? rc : 0;
}

static int pass_group(skv__pass *P, skv_error *err)
{
    skv__group *g = P->g;
    if (g->sel->pass_begin)
        g->sel->pass_begin(g->sel_state, P->now);
    if (skv__pass_inc_eligible(P))
        return pass_group_inc(P, err);
    skv__pass_inc_forget(g); /* this walk sets every reason itself */
    uint32_t n = 0;
    uint32_t *cand = skv__calloc(g->npending ? g->npending : 1, sizeof(*cand));
    if (!cand)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    uint32_t npre = 0;
    for (uint32_t i = 0; i < g->npending; i++)
        if (skv__pass_static_ok(P, P->s->sess[g->pending[i]]))
            cand[n++] = g->pending[i];
    /* sessions that preempted go first, oldest first: what their victims
     * freed is theirs */
    for (uint32_t i = 0; i < n; i++)
        if (P->s->sess[cand[i]]->preemptor) {
            uint32_t t = cand[npre];
            cand[npre++] = cand[i];
            cand[i] = t;
        }
    sort_by_seq(P->s, cand, npre);
    memo_new(P, n);
    P->nresv = 0;
    int rc = 0;
    for (uint32_t i = 0; i < npre && rc >= 0; i++)
        rc = visit(P, cand[i]);
    if (rc >= 0)
        rc = skv__pass_walk(P, cand + npre, n - npre, visit, err);
    if (rc < 0 && err && !err->code)
        skv__err(err, rc, "scheduling pass over group '%s' failed", g->name);
    skv__free(P->memo);
    P->memo = NULL;
    skv__free(cand);
    return rc < 0 ? rc : 0;
}

/* Undo every decision of a failed pass. */
static void pass_undo(skv_sched *s, skv__rb *rb, int64_t now)
{
    for (uint32_t i = 0; i < rb->npre; i++) {
        skv__session *v = s->sess[rb->pre[i].victim];
        v->preempt_marked = false;
        v->victim_for = SKV__NONE;
        s->sess[rb->pre[i].waiter]->waiting_victims = 0;
    }
    for (uint32_t i = rb->npl; i-- > 0;) {
        uint32_t si = rb->pl[i].sess;
        skv__sched_release(s, si, now);
        s->sess[si]->state = SKV_SCHED_PENDING;
        skv__sched_pending_add(s, si); /* room: it left this pass */
    }
}

static int group_order(const void *a, const void *b)
{
    const skv__group *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

SKV_EXTERN int skv_sched_pass(skv_sched_result **out, skv_sched *s,
                              int64_t now_ms,
                              const skv_sched_pass_options *opts,
                              skv_error *err)
{
    skv_sched_pass_options def = SKV_SCHED_PASS_OPTIONS_INIT;
    if (!out || !s)
        return skv__err(err, SKV_EINVAL, "pass: NULL argument");
    if (!opts)
        opts = &def;
    if (opts->version < 1 || opts->version > SKV_SCHED_PASS_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "pass options version %u, expected "
                        "1..%u", opts->version, SKV_SCHED_PASS_OPTIONS_VERSION);
    skv__group *only = NULL;
    if (opts->resource_group &&
        !(only = skv__sched_group(s, opts->resource_group, NULL)))
        return skv__err(err, SKV_ENOENT, "pass: no resource group '%s'",
                        opts->resource_group);
    skv__group **order = skv__calloc(s->ngroups ? s->ngroups : 1, sizeof(*order));
    if (!order)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (s->ngroups) {
        memcpy(order, s->groups, s->ngroups * sizeof(*order));
        qsort(order, s->ngroups, sizeof(*order), group_order);
    }
    skv__rb rb;
    memset(&rb, 0, sizeof(rb));
    skv__pass P;
    memset(&P, 0, sizeof(P));
    P.s = s;
    P.now = now_ms;
    P.o = opts;
    P.rb = &rb;
    int rc = 0;
    for (uint32_t i = 0; !rc && i < s->ngroups; i++) {
        if (only && order[i] != only)
            continue;
        if (++s->epoch == 0)
            ++s->epoch; /* 0 means "not reserved" */
        P.epoch = s->epoch;
        P.g = order[i];
        P.g->last_epoch = P.epoch;
        P.g->last_pass_ms = now_ms;
        rc = pass_group(&P, err);
        skv__free(P.running);   /* preempt.c: one group's, one pass's */
        P.running = NULL;
        P.nrunning = 0;
        P.running_built = false;
    }
    skv__free(order);
    skv__free(P.arefs);
    if (!rc)
        rc = skv__rb_finish(out, &rb, s, now_ms, err);
    if (rc)
        pass_undo(s, &rb, now_ms);
    skv__rb_fini(&rb);
    return rc;
}
