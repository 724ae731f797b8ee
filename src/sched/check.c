/* skv_sched_check: recompute every derived figure from the kernels'
 * allocations (the source of truth) and compare.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

typedef struct shadow {
    skv_qty used[NSL];
    skv_qty share[SKV_SCHED_DEVICES_MAX];
    uint64_t whole;
    uint32_t nallocs;
} shadow;

static bool holds(skv_sched_state st)
{
    return st == SKV_SCHED_SCHEDULED || st == SKV_SCHED_RUNNING;
}

static int add_session(const skv_sched *s, shadow *sh, const skv__session *x,
                       uint32_t si, skv_error *err)
{
    for (uint32_t k = 0; k < x->nk; k++) {
        const skv__kalloc *ka = &x->k[k].a;
        if (!holds(x->state)) {
            if (ka->agent != SKV__NONE)
                return skv__err(err, SKV_ESTATE, "session '%s' (%s) still holds "
                                "kernel %u", x->id, skv_sched_state_name(x->state), k);
            continue;
        }
        if (ka->agent >= s->nagents_tab || !s->agents[ka->agent])
            return skv__err(err, SKV_ESTATE, "session '%s' kernel %u has no agent",
                            x->id, k);
        const skv__agent *a = s->agents[ka->agent];
        if (ka->apos >= a->nallocs || a->allocs[ka->apos].sess != si ||
            a->allocs[ka->apos].kernel != k)
            return skv__err(err, SKV_ESTATE, "session '%s' kernel %u is not "
                            "linked on agent '%s'", x->id, k, a->id);
        shadow *h = &sh[ka->agent];
        h->nallocs++;
        for (int j = 0; j < NSL; j++)
            h->used[j] += x->k[k].req[j];
        for (uint16_t d = 0; d < ka->ndev; d++) {
            const skv_sched_device_share *ds = &ka->dev[d];
            if (ds->device >= a->d.ndev)
                return skv__err(err, SKV_ESTATE, "session '%s': bad device index",
                                x->id);
            if (ds->whole) {
                if (h->whole & (1ull << ds->device))
                    return skv__err(err, SKV_ESTATE, "agent '%s' device %u given "
                                    "whole twice", a->id, ds->device);
                h->whole |= 1ull << ds->device;
            } else {
                h->share[ds->device] += ds->amount;
            }
        }
    }
    return 0;
}

static int compare_agent(const skv_sched *s, const skv__agent *a,
                         const shadow *h, skv_error *err)
{
    for (int j = 0; j < NSL; j++) {
        if (h->used[j] != a->d.used[j])
            return skv__err(err, SKV_ESTATE, "agent '%s' slot '%s': used %lld but "
                            "allocations sum to %lld", a->id,
                            j < s->nslots ? s->slot_name[j] : "?",
                            (long long)a->d.used[j], (long long)h->used[j]);
        if (a->cap[j] != SKV_QTY_UNLIMITED && a->d.used[j] > a->cap[j])
            return skv__err(err, SKV_ESTATE, "agent '%s' slot '%s' over capacity",
                            a->id, s->slot_name[j]);
    }
    if (h->nallocs != a->nallocs)
        return skv__err(err, SKV_ESTATE, "agent '%s' lists %u kernels, sessions "
                        "place %u there", a->id, a->nallocs, h->nallocs);
    for (uint32_t d = 0; d < a->d.ndev; d++) {
        const skv_sched_device_view *v = &a->d.dev[d];
        /* a device out of service is held whole by the scheduler */
        uint64_t held = skv__sched_health_held(a);
        if ((h->whole & held) >> d & 1)
            return skv__err(err, SKV_ESTATE, "agent '%s' device %u: out of "
                            "service and allocated whole", a->id, d);
        bool w = ((h->whole | held) >> d) & 1;
        if (v->whole_taken != w || v->share_used != h->share[d])
            return skv__err(err, SKV_ESTATE, "agent '%s' device %u: map says "
                            "whole=%d share=%lld, allocations say whole=%d "
                            "share=%lld", a->id, d, v->whole_taken,
                            (long long)v->share_used, w, (long long)h->share[d]);
        if ((w && h->share[d]) || v->share_used > v->share_capacity)
            return skv__err(err, SKV_ESTATE, "agent '%s' device %u is "
                            "over-committed", a->id, d);
    }
    return 0;
}

static int check_owners(const skv_sched *s, skv_error *err)
{
    size_t n = s->nowners;
    skv_qty (*use)[NSL] = skv__calloc(n ? n : 1, sizeof(*use));
    uint32_t *cnt = skv__calloc(n ? n * 2 : 1, sizeof(uint32_t));
    int rc = 0;
    if (!use || !cnt)
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < s->nsess_tab; i++) {
        const skv__session *x = s->sess[i];
        if (!x || x->state > SKV_SCHED_RUNNING)
            continue;
        for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
            uint32_t o = x->owner[sc];
            if (x->state == SKV_SCHED_PENDING) {
                cnt[2 * o + 1]++;
                continue;
            }
            cnt[2 * o]++;
            for (int j = 0; j < NSL; j++)
                use[o][j] += x->total[j];
        }
    }
    for (uint32_t o = 0; !rc && o < n; o++) {
        const skv__owner *w = s->owners[o];
        if (memcmp(use[o], w->usage, sizeof(use[o])) != 0 ||
            cnt[2 * o] != w->n_active || cnt[2 * o + 1] != w->n_pending)
            rc = skv__err(err, SKV_ESTATE, "owner '%s': usage or session counts "
                          "differ from the sessions (active %u vs %u, pending %u "
                          "vs %u)", w->name, w->n_active, cnt[2 * o],
                          w->n_pending, cnt[2 * o + 1]);
    }
    skv__free(use);
    skv__free(cnt);
    return rc;
}

/* Each owner's use per group (quota.c) against its sessions there: one
 * sweep over the sessions into a shadow of every entry. */
static int gq_add(const skv_sched *s, skv_qty (*use)[NSL], const uint32_t *off,
                  const skv__session *x, skv_error *err)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        const skv__owner *w = s->owners[x->owner[sc]];
        uint32_t qi = x->gq[sc];
        if (qi >= w->ngq ||
            strcmp(w->gq[qi].group, s->groups[x->group]->name) != 0)
            return skv__err(err, SKV_ESTATE, "session '%s': wrong group "
                            "quota entry of %s '%s'", x->id,
                            skv__sched_scope_name(sc), w->name);
        if (!holds(x->state))
            continue;
        for (int j = 0; j < NSL; j++)
            use[off[x->owner[sc]] + qi][j] += x->total[j];
    }
    return 0;
}

static int check_group_quotas(const skv_sched *s, skv_error *err)
{
    uint32_t *off = skv__calloc(s->nowners + 1, sizeof(*off));
    for (uint32_t o = 0; off && o < s->nowners; o++)
        off[o + 1] = off[o] + s->owners[o]->ngq;
    skv_qty (*use)[NSL] = off ? skv__calloc(off[s->nowners] + 1,
                                            sizeof(*use)) : NULL;
    int rc = use ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < s->nsess_tab; i++)
        if (s->sess[i] && s->sess[i]->state <= SKV_SCHED_RUNNING)
            rc = gq_add(s, use, off, s->sess[i], err);
    for (uint32_t o = 0; !rc && o < s->nowners; o++) {
        const skv__owner *w = s->owners[o];
        for (uint32_t q = 0; !rc && q < w->ngq; q++)
            if (memcmp(use[off[o] + q], w->gq[q].usage, sizeof(use[0])) != 0)
                rc = skv__err(err, SKV_ESTATE, "%s '%s': usage in group '%s' "
                              "differs from its sessions there",
                              skv__sched_scope_name(w->scope), w->name,
                              w->gq[q].group);
    }
    skv__free(use);
    skv__free(off);
    return rc;
}

static int check_groups(const skv_sched *s, skv_error *err)
{
    for (uint32_t gi = 0; gi < s->ngroups; gi++) {
        const skv__group *g = s->groups[gi];
        uint32_t live = 0, pend = 0;
        for (uint32_t i = 0; i < s->nsess_tab; i++) {
            const skv__session *x = s->sess[i];
            if (!x || x->group != gi || x->state > SKV_SCHED_RUNNING)
                continue;
            live++;
            if (x->state == SKV_SCHED_PENDING) {
                pend++;
                if (x->pend_pos >= g->npending || g->pending[x->pend_pos] != i)
                    return skv__err(err, SKV_ESTATE, "session '%s' missing from "
                                    "the pending list", x->id);
            }
        }
        if (live != g->nlive || pend != g->npending)
            return skv__err(err, SKV_ESTATE, "group '%s': %u live / %u pending "
                            "recorded, %u / %u found", g->name, g->nlive,
                            g->npending, live, pend);
        uint32_t inb = 0;
        for (int b = 0; b < SKV__NBUCKETS; b++)
            inb += g->bucket[b].n;
        if (inb != g->nagents)
            return skv__err(err, SKV_ESTATE, "group '%s': %u agents but %u in "
                            "the free-device index", g->name, g->nagents, inb);
        for (uint32_t i = 0; i < g->nagents; i++) {
            const skv__agent *a = s->agents[g->agents[i]];
            if (!a || a->gpos != i)
                return skv__err(err, SKV_ESTATE, "group '%s' agent list broken",
                                g->name);
            if (a->bkey != skv__sched_bucket_key(a) ||
                a->bpos >= g->bucket[a->bkey].n ||
                g->bucket[a->bkey].ag[a->bpos] != g->agents[i] ||
                g->bucket[a->bkey].room[a->bpos] != skv__sched_share_room(a))
                return skv__err(err, SKV_ESTATE, "agent '%s': free-device index "
                                "out of date", a->id);
        }
    }
    return 0;
}

SKV_EXTERN int skv_sched_check(const skv_sched *s, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "check: scheduler is NULL");
    shadow *sh = skv__calloc(s->nagents_tab ? s->nagents_tab : 1, sizeof(*sh));
    if (!sh)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; !rc && i < s->nsess_tab; i++)
        if (s->sess[i])
            rc = add_session(s, sh, s->sess[i], i, err);
    for (uint32_t i = 0; !rc && i < s->nagents_tab; i++)
        if (s->agents[i] && !(rc = compare_agent(s, s->agents[i], &sh[i], err)))
            rc = skv__sched_map_verify(s->agents[i], err);
    skv__free(sh);
    if (!rc)
        rc = check_owners(s, err);
    if (!rc)
        rc = check_groups(s, err);
    if (!rc)
        rc = check_group_quotas(s, err);
    return rc;
}
