/* Quotas per resource group: each owner (domain, project, user) keeps one
 * entry per group its sessions or its quota name, with its use there and
 * its guarantee, hard limit and borrow limit. Entries are made when a
 * session is linked (submit, adopt) or a quota is set, never in the middle
 * of a pass, so charging a placement cannot fail.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

static uint32_t gq_find(const skv__owner *o, const char *group)
{
    for (uint32_t i = 0; i < o->ngq; i++)
        if (strcmp(o->gq[i].group, group) == 0)
            return i;
    return SKV__NONE;
}

static void gq_clear(skv__gquota *q)
{
    q->has_quota = q->has_guarantee = false;
    q->gmask = 0;
    for (int k = 0; k < NSL; k++) {
        q->guaranteed[k] = 0;
        q->limit[k] = q->borrow[k] = SKV_QTY_UNLIMITED;
    }
}

static int gq_get(skv__owner *o, const char *group, uint32_t *out,
                  skv_error *err)
{
    uint32_t i = gq_find(o, group);
    if (i != SKV__NONE) {
        *out = i;
        return 0;
    }
    int rc = skv__sched_room((void **)&o->gq, o->ngq, &o->gq_cap,
                             sizeof(*o->gq), err);
    if (rc)
        return rc;
    skv__gquota *q = &o->gq[o->ngq];
    memset(q, 0, sizeof(*q));
    if (!(q->group = skv__strdup(group)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    gq_clear(q);
    *out = o->ngq++;
    return 0;
}

int skv__sched_session_gq(skv_sched *s, skv__session *x, skv_error *err)
{
    const char *group = s->groups[x->group]->name;
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        int rc = gq_get(s->owners[x->owner[sc]], group, &x->gq[sc], err);
        if (rc)
            return rc;
    }
    return 0;
}

void skv__sched_owner_gq_free(skv__owner *o)
{
    for (uint32_t i = 0; i < o->ngq; i++)
        skv__free(o->gq[i].group);
    skv__free(o->gq);
}

/* Dense copy of v; keys it does not name get `missing`; *mask (may be
 * NULL) receives the slots it names. */
static int dense(skv_sched *s, skv_qty *out, uint32_t *mask,
                 const skv_slots *v, skv_qty missing, const char *what,
                 skv_error *err)
{
    int rc = skv__sched_dense(s, out, v, what, err);
    if (rc)
        return rc;
    uint32_t m = 0;
    for (int k = 0; k < NSL; k++) {
        if (v && k < s->nslots &&
            skv_slots_lookup(v, s->slot_name[k], NULL, NULL) == 0)
            m |= 1u << k;
        else
            out[k] = missing;
    }
    if (mask)
        *mask = m;
    return 0;
}

static int quota_dense(skv_sched *s, skv__gquota *t, const skv_sched_quota *q,
                       skv_error *err)
{
    int rc = dense(s, t->guaranteed, &t->gmask, q->guaranteed, 0,
                   "quota guaranteed", err);
    if (!rc)
        rc = dense(s, t->limit, NULL, q->limit, SKV_QTY_UNLIMITED,
                   "quota limit", err);
    if (!rc)
        rc = dense(s, t->borrow, NULL, q->borrow_limit, SKV_QTY_UNLIMITED,
                   "quota borrow_limit", err);
    t->has_quota = true;
    t->has_guarantee = q->guaranteed != NULL;
    return rc;
}

static int quota_args(const skv_sched *s, skv_sched_scope scope,
                      const char *name, const char *group,
                      const skv_sched_quota *q, skv_error *err)
{
    if (!s || !name || !group)
        return skv__err(err, SKV_EINVAL, "quota_set: NULL argument");
    if ((unsigned)scope >= SKV_SCHED_SCOPE_COUNT)
        return skv__err(err, SKV_EINVAL, "quota_set: bad scope %d", (int)scope);
    if (q && q->version != SKV_SCHED_QUOTA_VERSION)
        return skv__err(err, SKV_EVERSION, "quota version %u, expected %u",
                        q->version, SKV_SCHED_QUOTA_VERSION);
    if (!skv__sched_group(s, group, NULL))
        return skv__err(err, SKV_ENOENT, "no resource group '%s'", group);
    return 0;
}

SKV_EXTERN int skv_sched_quota_set(skv_sched *s, skv_sched_scope scope,
                                   const char *name, const char *group,
                                   const skv_sched_quota *q, skv_error *err)
{
    int rc = quota_args(s, scope, name, group, q, err);
    if (rc)
        return rc;
    /* removing what was never there: nothing to make */
    if (!q && skv__hmap_get(&s->owner_ix[scope], name) == SKV__NONE)
        return 0;
    uint8_t n0 = s->nslots;
    skv__gquota t;
    gq_clear(&t);
    /* the new figures first: on error the old quota stays untouched */
    if (q)
        rc = quota_dense(s, &t, q, err);
    uint32_t oi, qi;
    if (!rc && !(rc = skv__sched_owner(s, &oi, scope, name, err)))
        rc = gq_get(s->owners[oi], group, &qi, err);
    if (rc) {
        while (s->nslots > n0)
            skv__free(s->slot_name[--s->nslots]);
        skv__err_prefix(err, "%s '%s' in group '%s'",
                        skv__sched_scope_name(scope), name, group);
        return rc;
    }
    skv__gquota *e = &s->owners[oi]->gq[qi];
    e->has_quota = t.has_quota;
    e->has_guarantee = t.has_guarantee;
    e->gmask = t.gmask;
    memcpy(e->guaranteed, t.guaranteed, sizeof(t.guaranteed));
    memcpy(e->limit, t.limit, sizeof(t.limit));
    memcpy(e->borrow, t.borrow, sizeof(t.borrow));
    skv__owner *o = s->owners[oi];
    o->has_gquota = false;
    for (uint32_t i = 0; i < o->ngq; i++)
        o->has_gquota |= o->gq[i].has_quota;
    return 0;
}

SKV_EXTERN int skv_sched_quota_usage(skv_slots **used, const skv_sched *s,
                                     skv_sched_scope scope, const char *name,
                                     const char *group, skv_error *err)
{
    if (!used || !s || !name || !group ||
        (unsigned)scope >= SKV_SCHED_SCOPE_COUNT)
        return skv__err(err, SKV_EINVAL, "quota_usage: NULL argument or bad "
                        "scope");
    static const skv_qty zero[NSL];
    uint32_t oi = skv__hmap_get(&s->owner_ix[scope], name);
    const skv__owner *o = oi == SKV__NONE ? NULL : s->owners[oi];
    uint32_t qi = o ? gq_find(o, group) : SKV__NONE;
    return skv__sched_to_slots(used, s, qi == SKV__NONE ? zero
                                                        : o->gq[qi].usage, err);
}
