/* Owners (domain / project / user): resource policies, usage accounting and
 * the fair-share history.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

static const char *const scope_names[] = {"domain", "project", "user"};

const char *skv__sched_scope_name(skv_sched_scope sc)
{
    return (unsigned)sc < SKV_SCHED_SCOPE_COUNT ? scope_names[sc] : "?";
}

static void owner_defaults(skv__owner *o)
{
    for (int k = 0; k < NSL; k++) {
        o->limit[k] = SKV_QTY_UNLIMITED;
        o->borrow[k] = SKV_QTY_UNLIMITED;
        o->guaranteed[k] = 0;
    }
    o->max_concurrent = o->max_pending = 0;
    o->has_policy = o->has_guarantee = false;
}

int skv__sched_owner(skv_sched *s, uint32_t *out, skv_sched_scope scope,
                     const char *name, skv_error *err)
{
    uint32_t i = skv__hmap_get(&s->owner_ix[scope], name);
    if (i != SKV__NONE) {
        *out = i;
        return 0;
    }
    int rc = skv__sched_room((void **)&s->owners, s->nowners, &s->owners_cap,
                             sizeof(*s->owners), err);
    if (rc)
        return rc;
    skv__owner *o = skv__calloc(1, sizeof(*o));
    if (!o || !(o->name = skv__strdup(name))) {
        skv__free(o);
        return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    o->scope = scope;
    owner_defaults(o);
    rc = skv__hmap_put(&s->owner_ix[scope], o->name, s->nowners, err);
    if (rc) {
        skv__free(o->name);
        skv__free(o);
        return rc;
    }
    s->owners[s->nowners] = o;
    *out = s->nowners++;
    return 0;
}

static int dense_policy_vec(skv_sched *s, skv_qty *out, const skv_slots *v,
                            skv_qty missing, const char *what, skv_error *err)
{
    int rc = skv__sched_dense(s, out, v, what, err);
    if (rc)
        return rc;
    /* keys the vector does not name take the default ("no limit") */
    for (int k = 0; k < NSL; k++)
        if (!v || k >= s->nslots ||
            skv_slots_lookup(v, s->slot_name[k], NULL, NULL) != 0)
            out[k] = missing;
    return 0;
}

SKV_EXTERN int skv_sched_policy_set(skv_sched *s, skv_sched_scope scope,
                                    const char *name,
                                    const skv_sched_policy *p, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "policy_set: scheduler is NULL");
    if ((unsigned)scope >= SKV_SCHED_SCOPE_COUNT)
        return skv__err(err, SKV_EINVAL, "policy_set: bad scope %d", (int)scope);
    if (!name)
        return skv__err(err, SKV_EINVAL, "policy_set: owner name is NULL");
    if (p && p->version != SKV_SCHED_POLICY_VERSION)
        return skv__err(err, SKV_EVERSION, "policy version %u, expected %u",
                        p->version, SKV_SCHED_POLICY_VERSION);
    skv_qty lim[NSL], gua[NSL], bor[NSL];
    uint8_t n0 = s->nslots;
    int rc = 0;
    if (p && !(rc = dense_policy_vec(s, lim, p->limit, SKV_QTY_UNLIMITED,
                                     "policy limit", err)) &&
        !(rc = dense_policy_vec(s, gua, p->guaranteed, 0, "policy guaranteed",
                                err)))
        rc = dense_policy_vec(s, bor, p->borrow_limit, SKV_QTY_UNLIMITED,
                              "policy borrow_limit", err);
    uint32_t oi;
    if (!rc)
        rc = skv__sched_owner(s, &oi, scope, name, err);
    if (rc) {
        while (s->nslots > n0)
            skv__free(s->slot_name[--s->nslots]);
        skv__err_prefix(err, "%s '%s'", skv__sched_scope_name(scope), name);
        return rc;
    }
    skv__owner *o = s->owners[oi];
    owner_defaults(o);
    if (!p)
        return 0;
    o->has_policy = true;
    memcpy(o->limit, lim, sizeof(lim));
    memcpy(o->guaranteed, gua, sizeof(gua));
    memcpy(o->borrow, bor, sizeof(bor));
    o->has_guarantee = p->guaranteed != NULL;
    o->max_concurrent = p->max_concurrent;
    o->max_pending = p->max_pending;
    return 0;
}

SKV_EXTERN int skv_sched_owner_usage(skv_slots **usage, uint32_t *n_active,
                                     uint32_t *n_pending, const skv_sched *s,
                                     skv_sched_scope scope, const char *name,
                                     skv_error *err)
{
    if (!s || !name || (unsigned)scope >= SKV_SCHED_SCOPE_COUNT)
        return skv__err(err, SKV_EINVAL, "owner_usage: NULL argument or bad scope");
    uint32_t i = skv__hmap_get(&s->owner_ix[scope], name);
    static const skv_qty zero[NSL];
    const skv__owner *o = i == SKV__NONE ? NULL : s->owners[i];
    if (usage) {
        int rc = skv__sched_to_slots(usage, s, o ? o->usage : zero, err);
        if (rc)
            return rc;
    }
    if (n_active)
        *n_active = o ? o->n_active : 0;
    if (n_pending)
        *n_pending = o ? o->n_pending : 0;
    return 0;
}

uint64_t skv__sched_share_ppm(const skv_qty *usage, const skv_qty *cap)
{
    uint64_t best = 0;
    for (int k = 0; k < NSL; k++) {
        if (usage[k] <= 0 || cap[k] <= 0 || cap[k] == SKV_QTY_UNLIMITED)
            continue;
        unsigned __int128 v = (unsigned __int128)usage[k] * 1000000u /
                              (unsigned __int128)cap[k];
        uint64_t ppm = v > 1000000000u ? 1000000000u : (uint64_t)v;
        if (ppm > best)
            best = ppm;
    }
    return best;
}

/* 2^(-i/16) in Q16 for i = 0..16: integer half-life decay, so fair-share
 * ranks are the same on every machine. */
static const uint32_t decay_q16[17] = {
    65536, 62757, 60096, 57547, 55109, 52772, 50535, 48393, 46341,
    44376, 42495, 40693, 38968, 37316, 35734, 34219, 32768};

static uint64_t decay(uint64_t v, int64_t dt, int64_t half)
{
    int64_t whole = dt / half;
    if (whole >= 64)
        return 0;
    v >>= whole;
    int64_t rem = dt % half; /* fraction of a half-life, interpolated */
    int64_t pos = rem * 16 / half;
    int64_t frac = rem * 16 % half;
    uint64_t f = decay_q16[pos] -
                 (uint64_t)((decay_q16[pos] - decay_q16[pos + 1]) *
                            (unsigned __int128)frac / (uint64_t)half);
    return (uint64_t)((unsigned __int128)v * f >> 16);
}

void skv__sched_owner_decay(const skv_sched *s, skv__owner *o, int64_t now)
{
    if (now <= o->hist_ms) {
        return;
    }
    int64_t dt = now - o->hist_ms;
    uint64_t share = skv__sched_share_ppm(o->usage, s->cap_total);
    uint64_t h = decay(o->hist, dt, s->half_life_ms);
    unsigned __int128 add = (unsigned __int128)share * (uint64_t)dt;
    unsigned __int128 sum = add + h;
    o->hist = sum > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)sum;
    o->hist_ms = now;
}

void skv__sched_owner_charge(skv_sched *s, skv__session *x, int sign,
                             int64_t now)
{
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        skv__owner *o = s->owners[x->owner[sc]];
        skv__gquota *q = &o->gq[x->gq[sc]]; /* made when it was linked */
        skv__sched_owner_decay(s, o, now);
        for (int k = 0; k < NSL; k++) {
            o->usage[k] += sign * x->total[k];
            q->usage[k] += sign * x->total[k];
        }
        if (sign > 0)
            o->n_active++;
        else
            o->n_active--;
    }
}
