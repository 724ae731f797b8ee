/* Agents: add, update, remove, lost; their device-level view.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"
#include "selector_frag_index.h"

#define UNIT SKV_QTY_SCALE

skv__agent *skv__sched_agent(const skv_sched *s, const char *id,
                             uint32_t *idx, skv_error *err)
{
    uint32_t i = id ? skv__hmap_get(&s->agent_ix, id) : SKV__NONE;
    if (i == SKV__NONE) {
        skv__err(err, SKV_ENOENT, "no agent '%s'", id ? id : "(null)");
        return NULL;
    }
    if (idx)
        *idx = i;
    return s->agents[i];
}

static void slots_rollback(skv_sched *s, uint8_t n0)
{
    while (s->nslots > n0)
        skv__free(s->slot_name[--s->nslots]);
}

static int device_slots(skv_sched *s, skv__agent *a,
                        const skv_sched_device_spec *ds, uint32_t i,
                        uint32_t *whole_mask, uint32_t *share_mask,
                        skv_error *err)
{
    skv_sched_device_view *v = &a->d.dev[i];
    uint8_t w, sh = SKV_SCHED_NO_SLOT;
    if (!ds->whole_slot)
        return skv__err(err, SKV_EINVAL, "agent '%s' device %u: whole_slot is NULL",
                        a->id, i);
    int rc = skv__sched_slot(s, &w, ds->whole_slot, SKV_SLOT_COUNT, err);
    if (!rc && ds->share_slot)
        rc = skv__sched_slot(s, &sh, ds->share_slot, SKV_SLOT_COUNT, err);
    if (rc) {
        skv__err_prefix(err, "agent '%s' device %u", a->id, i);
        return rc;
    }
    if (sh == w || ds->share_capacity < 0 || ds->share_capacity > SKV_QTY_MAX / 64)
        return skv__err(err, SKV_EINVAL,
                        "agent '%s' device %u: share slot equals whole slot or "
                        "share_capacity %lld out of range", a->id, i,
                        (long long)ds->share_capacity);
    *whole_mask |= 1u << w;
    if (sh != SKV_SCHED_NO_SLOT)
        *share_mask |= 1u << sh;
    v->whole_slot = w;
    v->share_slot = sh;
    v->share_capacity = ds->share_capacity ? ds->share_capacity : UNIT;
    a->cap[w] += UNIT;
    if (sh != SKV_SCHED_NO_SLOT)
        a->cap[sh] += v->share_capacity;
    char buf[16];
    snprintf(buf, sizeof(buf), "%u", i);
    v->id = skv__strdup(ds->id ? ds->id : buf);
    return v->id ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
}

static int agent_devices(skv_sched *s, skv__agent *a,
                         const skv_sched_agent_spec *sp, skv_error *err)
{
    if (sp->n_devices > SKV_SCHED_DEVICES_MAX || (sp->n_devices && !sp->devices))
        return skv__err(err, SKV_EINVAL,
                        "agent '%s': %zu devices (at most %d, devices non-NULL)",
                        a->id, sp->n_devices, SKV_SCHED_DEVICES_MAX);
    a->d.dev = sp->n_devices ? skv__calloc(sp->n_devices, sizeof(*a->d.dev)) : NULL;
    if (sp->n_devices && !a->d.dev)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    uint32_t wm = 0, sm = 0;
    for (uint32_t i = 0; i < sp->n_devices; i++) {
        a->d.ndev = i + 1;
        int rc = device_slots(s, a, &sp->devices[i], i, &wm, &sm, err);
        if (rc)
            return rc;
    }
    for (int k = 0; k < NSL; k++) {
        uint32_t b = 1u << k;
        if (wm & sm & b)
            return skv__err(err, SKV_EINVAL,
                            "agent '%s': slot '%s' is both a whole and a share slot",
                            a->id, s->slot_name[k]);
    }
    if ((wm & s->share_mask) || (sm & s->whole_mask) ||
        ((wm | sm) & s->pooled_mask))
        return skv__err(err, SKV_EINVAL, "agent '%s': a device slot is used in "
                        "another role (whole / shared / pooled) by other agents",
                        a->id);
    a->d.dev_slot_mask = wm | sm;
    a->d.whole_slot_mask = wm;
    a->whole_mask = wm;
    return 0;
}

static int agent_labels(skv__agent *a, const skv_sched_agent_spec *sp,
                        skv_error *err)
{
    if (sp->n_labels && !sp->labels)
        return skv__err(err, SKV_EINVAL, "agent '%s': labels is NULL", a->id);
    if (!sp->n_labels)
        return 0;
    a->labels = skv__calloc(sp->n_labels, sizeof(*a->labels));
    if (!a->labels)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    a->nlabels = sp->n_labels;
    for (size_t i = 0; i < sp->n_labels; i++) {
        if (!sp->labels[i].key || !sp->labels[i].value)
            return skv__err(err, SKV_EINVAL, "agent '%s': label %zu has a NULL "
                            "key or value", a->id, i);
        a->labels[i].key = skv__strdup(sp->labels[i].key);
        a->labels[i].value = skv__strdup(sp->labels[i].value);
        if (!a->labels[i].key || !a->labels[i].value)
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    return 0;
}

/* Build a detached agent from a spec (slot names interned). */
static int agent_build(skv__agent **out, skv_sched *s,
                       const skv_sched_agent_spec *sp, skv_error *err)
{
    if (!sp)
        return skv__err(err, SKV_EINVAL, "agent spec is NULL");
    /* Version 1 ends before the topology. */
    if (sp->version != 1 && sp->version != SKV_SCHED_AGENT_SPEC_VERSION)
        return skv__err(err, SKV_EVERSION, "agent spec version %u, this "
                        "library knows 1..%u", sp->version,
                        SKV_SCHED_AGENT_SPEC_VERSION);
    int rc = skv__sched_name_check("agent id", sp->id, err);
    if (rc)
        return rc;
    uint32_t gi;
    if (!sp->resource_group || !skv__sched_group(s, sp->resource_group, &gi))
        return skv__err(err, SKV_ENOENT, "agent '%s': no resource group '%s'",
                        sp->id, sp->resource_group ? sp->resource_group : "(null)");
    skv__agent *a = skv__calloc(1, sizeof(*a));
    if (!a)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    a->group = gi;
    a->schedulable = sp->schedulable;
    a->d.cap = a->cap;
    a->id = skv__strdup(sp->id);
    a->arch = skv__strdup(sp->architecture ? sp->architecture : "");
    a->gpu_model = skv__strdup(sp->gpu_model ? sp->gpu_model : "");
    if (!a->id || !a->arch || !a->gpu_model)
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = skv__sched_dense(s, a->cap, sp->capacity, "agent capacity", err);
    if (!rc)
        rc = agent_devices(s, a, sp, err);
    for (int k = 0; !rc && k < NSL; k++)
        if ((a->d.dev_slot_mask & (1u << k)) && sp->capacity &&
            skv_slots_lookup(sp->capacity, s->slot_name[k], NULL, NULL) == 0)
            rc = skv__err(err, SKV_EINVAL,
                          "agent '%s': slot '%s' is a device slot and may not "
                          "appear in capacity", sp->id, s->slot_name[k]);
    for (int k = 0; !rc && k < NSL; k++)
        if (a->cap[k] && !(a->d.dev_slot_mask & (1u << k)) &&
            ((s->whole_mask | s->share_mask) & (1u << k)))
            rc = skv__err(err, SKV_EINVAL, "agent '%s': slot '%s' is a device "
                          "slot of other agents and cannot be pooled here",
                          sp->id, s->slot_name[k]);
    if (!rc)
        rc = agent_labels(a, sp, err);
    if (!rc)
        rc = skv__sched_agent_topology(a, sp, err);
    if (!rc)
        rc = skv__sched_agent_map_build(s, a, err);
    if (rc) {
        skv__sched_agent_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

static void cap_total(skv_sched *s, const skv_qty *cap, int sign)
{
    for (int k = 0; k < NSL; k++) {
        if (s->cap_total[k] == SKV_QTY_UNLIMITED)
            continue;
        if (cap[k] == SKV_QTY_UNLIMITED) {
            if (sign > 0)
                s->cap_total[k] = SKV_QTY_UNLIMITED;
            continue;
        }
        s->cap_total[k] += sign * cap[k];
    }
}

static int table_slot(skv_sched *s, uint32_t *out, skv_error *err)
{
    if (s->nagent_free) {
        *out = s->agent_free[--s->nagent_free];
        return 0;
    }
    int rc = skv__sched_table_room((void **)&s->agents, &s->agent_free,
                                   s->nagents_tab, &s->agents_cap,
                                   sizeof(*s->agents), err);
    if (rc)
        return rc;
    s->agents[s->nagents_tab] = NULL;
    *out = s->nagents_tab++;
    return 0;
}

static int agent_link(skv_sched *s, skv__agent *a, skv_error *err)
{
    uint32_t ai;
    skv__group *g = s->groups[a->group];
    int rc = table_slot(s, &ai, err);
    if (rc)
        return rc;
    if ((rc = skv__hmap_put(&s->agent_ix, a->id, ai, err)) ||
        (rc = skv__sched_push((void **)&g->agents, &g->nagents, &g->agents_cap,
                              sizeof(uint32_t), &ai, err))) {
        if (skv__hmap_get(&s->agent_ix, a->id) == ai)
            skv__hmap_del(&s->agent_ix, a->id);
        s->agent_free[s->nagent_free++] = ai;
        return rc;
    }
    a->gpos = g->nagents - 1;
    s->agents[ai] = a;
    s->whole_mask |= a->whole_mask;
    s->share_mask |= a->d.dev_slot_mask & ~a->whole_mask;
    for (int k = 0; k < NSL; k++)
        if (a->cap[k] && !(a->d.dev_slot_mask & (1u << k)))
            s->pooled_mask |= 1u << k;
    if ((rc = skv__sched_bucket_add(s, ai, err))) {
        g->nagents--;
        s->agents[ai] = NULL;
        skv__hmap_del(&s->agent_ix, a->id);
        s->agent_free[s->nagent_free++] = ai;
        return rc;
    }
    cap_total(s, a->cap, +1);
    skv__fidx_invalidate(g);
    skv__sched_sel_auto_agent(g, a);
    return 0;
}

SKV_EXTERN int skv_sched_agent_add(skv_sched *s,
                                   const skv_sched_agent_spec *spec,
                                   skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "agent_add: scheduler is NULL");
    uint8_t n0 = s->nslots;
    skv__agent *a;
    int rc = agent_build(&a, s, spec, err);
    if (!rc && skv__hmap_get(&s->agent_ix, spec->id) != SKV__NONE) {
        skv__sched_agent_free(a);
        rc = skv__err(err, SKV_EEXIST, "agent '%s' already exists", spec->id);
    } else if (!rc && (rc = agent_link(s, a, err))) {
        skv__sched_agent_free(a);
    }
    if (rc)
        slots_rollback(s, n0);
    return rc;
}

static void agent_unlink(skv_sched *s, uint32_t ai)
{
    skv__agent *a = s->agents[ai];
    skv__group *g = s->groups[a->group];
    skv__sched_bucket_del(s, ai);
    skv__fidx_invalidate(g);
    uint32_t last = g->agents[--g->nagents];
    if (last != ai) {
        g->agents[a->gpos] = last;
        s->agents[last]->gpos = a->gpos;
    }
    cap_total(s, a->cap, -1);
    /* UNLIMITED totals cannot be taken apart: recompute them */
    for (int k = 0; k < NSL; k++)
        if (s->cap_total[k] == SKV_QTY_UNLIMITED) {
            s->cap_total[k] = 0;
            for (uint32_t i = 0; i < s->nagents_tab; i++)
                if (s->agents[i] && i != ai) {
                    skv_qty c = s->agents[i]->cap[k];
                    s->cap_total[k] = (c == SKV_QTY_UNLIMITED) ? c
                                      : s->cap_total[k] + c;
                    if (c == SKV_QTY_UNLIMITED)
                        break;
                }
        }
    skv__hmap_del(&s->agent_ix, a->id);
    s->agents[ai] = NULL;
    s->agent_free[s->nagent_free++] = ai;
}

SKV_EXTERN int skv_sched_agent_remove(skv_sched *s, const char *id,
                                      skv_error *err)
{
    uint32_t ai;
    if (!s)
        return skv__err(err, SKV_EINVAL, "agent_remove: scheduler is NULL");
    skv__agent *a = skv__sched_agent(s, id, &ai, err);
    if (!a)
        return SKV_ENOENT;
    if (a->nallocs)
        return skv__err(err, SKV_EBUSY,
                        "agent '%s' still holds %u kernel allocations", id,
                        a->nallocs);
    agent_unlink(s, ai);
    skv__sched_agent_free(a);
    return 0;
}

SKV_EXTERN int skv_sched_agent_set_schedulable(skv_sched *s, const char *id,
                                               bool schedulable,
                                               skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "set_schedulable: scheduler is NULL");
    skv__agent *a = skv__sched_agent(s, id, NULL, err);
    if (!a)
        return SKV_ENOENT;
    a->schedulable = schedulable;
    skv__fidx_touch(s, a);
    return 0;
}

SKV_EXTERN int skv_sched_agent_lost(skv_sched *s, size_t *n_lost,
                                    const char *id, int64_t now_ms,
                                    skv_error *err)
{
    uint32_t ai;
    if (!s)
        return skv__err(err, SKV_EINVAL, "agent_lost: scheduler is NULL");
    skv__agent *a = skv__sched_agent(s, id, &ai, err);
    if (!a)
        return SKV_ENOENT;
    size_t n = 0;
    /* releasing a session removes its entries from this list */
    while (a->nallocs) {
        uint32_t si = a->allocs[a->nallocs - 1].sess;
        skv__session *x = s->sess[si];
        skv__sched_release(s, si, now_ms);
        skv__sched_victim_gone(s, x);
        x->state = SKV_SCHED_LOST;
        s->groups[x->group]->nlive--;
        n++;
    }
    agent_unlink(s, ai);
    skv__sched_agent_free(a);
    if (n_lost)
        *n_lost = n;
    return 0;
}

/* May `na` take over `old`'s allocations? */
static int update_compatible(const skv__agent *old, const skv__agent *na,
                             skv_error *err)
{
    if (old->nallocs == 0)
        return 0;
    if (na->group != old->group)
        return skv__err(err, SKV_EBUSY, "agent '%s' holds allocations: cannot "
                        "change its resource group", old->id);
    for (int k = 0; k < NSL; k++)
        if (!(old->d.dev_slot_mask & (1u << k)) &&
            na->cap[k] != SKV_QTY_UNLIMITED && na->cap[k] < old->d.used[k])
            return skv__err(err, SKV_EBUSY, "agent '%s': new capacity below "
                            "current use in slot %d", old->id, k);
    if (na->d.ndev != old->d.ndev || na->d.dev_slot_mask != old->d.dev_slot_mask)
        return skv__err(err, SKV_EBUSY, "agent '%s' holds allocations: its "
                        "device list cannot change", old->id);
    for (uint32_t i = 0; i < na->d.ndev; i++) {
        const skv_sched_device_view *o = &old->d.dev[i], *v = &na->d.dev[i];
        if (o->whole_slot != v->whole_slot || o->share_slot != v->share_slot ||
            v->share_capacity < o->share_used)
            return skv__err(err, SKV_EBUSY, "agent '%s' device %u: in use, "
                            "cannot change its slots or shrink it", old->id, i);
    }
    return 0;
}

SKV_EXTERN int skv_sched_agent_update(skv_sched *s,
                                      const skv_sched_agent_spec *spec,
                                      skv_error *err)
{
    uint32_t ai;
    if (!s || !spec)
        return skv__err(err, SKV_EINVAL, "agent_update: NULL argument");
    skv__agent *old = skv__sched_agent(s, spec->id, &ai, err);
    if (!old)
        return SKV_ENOENT;
    uint8_t n0 = s->nslots;
    skv__agent *na;
    skv__sched_health_detach(s, old);    /* its holds are not allocations */
    int rc = agent_build(&na, s, spec, err);
    if (!rc && (rc = update_compatible(old, na, err)))
        skv__sched_agent_free(na);
    if (rc) {
        skv__sched_health_sync(s, old);
        slots_rollback(s, n0);
        return rc;
    }
    /* carry over the use: pooled and per device */
    memcpy(na->d.used, old->d.used, sizeof(na->d.used));
    for (uint32_t i = 0; i < na->d.ndev && old->nallocs; i++) {
        na->d.dev[i].whole_taken = old->d.dev[i].whole_taken;
        na->d.dev[i].share_used = old->d.dev[i].share_used;
    }
    if (old->nallocs) {
        /* same devices: keep the map that holds the allocations, with the
         * new share capacities (update_compatible checked them) */
        skv_alloc_map_free(na->map);
        na->map = old->map;
        old->map = NULL;
        memcpy(na->mslot, old->mslot, sizeof(na->mslot));
        for (uint32_t i = 0; i < na->d.ndev; i++)
            if (na->d.dev[i].share_slot != SKV_SCHED_NO_SLOT)
                skv_alloc_map_set_capacity(na->map, i,
                                           s->slot_name[na->d.dev[i].share_slot],
                                           na->d.dev[i].share_capacity, NULL);
    }
    na->allocs = old->allocs;
    na->nallocs = old->nallocs;
    na->allocs_cap = old->allocs_cap;
    na->nsess = old->nsess;
    old->allocs = NULL;
    uint64_t down = skv__sched_health_in(old, na);
    skv__group *g = s->groups[old->group];
    if (na->group != old->group) {
        agent_unlink(s, ai);
        skv__sched_agent_free(old);
        if ((rc = agent_link(s, na, err)))
            skv__sched_agent_free(na); /* idle agent: nothing else is lost */
        else
            skv__sched_health_set(s, na, down);
        return rc;
    }
    na->gpos = old->gpos;
    na->bkey = old->bkey;
    na->bpos = old->bpos;
    g->agents[na->gpos] = ai;
    cap_total(s, old->cap, -1);
    cap_total(s, na->cap, +1);
    skv__hmap_del(&s->agent_ix, old->id);
    s->agents[ai] = na;
    skv__fidx_invalidate(g);
    skv__hmap_put(&s->agent_ix, na->id, ai, NULL); /* a slot was just freed */
    skv__sched_agent_free(old);
    skv__sched_rebucket(s, na); /* the device list may have changed */
    skv__sched_sel_auto_agent(g, na);
    skv__sched_health_set(s, na, down);
    s->whole_mask |= na->whole_mask;
    s->share_mask |= na->d.dev_slot_mask & ~na->whole_mask;
    for (int k = 0; k < NSL; k++)
        if (na->cap[k] && !(na->d.dev_slot_mask & (1u << k)))
            s->pooled_mask |= 1u << k;
    return 0;
}

void skv__sched_agent_view(skv_sched_agent_view *v, const skv_sched *s,
                           const skv__agent *a)
{
    v->id = a->id;
    v->architecture = a->arch;
    v->gpu_model = a->gpu_model;
    v->index = a->gpos;
    v->group_size = s->groups[a->group]->nagents;
    v->n_slots = s->nslots;
    v->slot_names = (const char *const *)s->slot_name;
    v->capacity = a->cap;
    v->used = a->d.used;
    v->n_devices = a->d.ndev;
    v->devices = a->d.dev;
    v->n_sessions = a->nsess;
}

SKV_EXTERN int skv_sched_agent_usage(skv_slots **used, skv_slots **capacity,
                                     const skv_sched *s, const char *id,
                                     skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "agent_usage: scheduler is NULL");
    skv__agent *a = skv__sched_agent(s, id, NULL, err);
    if (!a)
        return SKV_ENOENT;
    skv_slots *u = NULL, *c = NULL;
    int rc = 0;
    if (used)
        rc = skv__sched_to_slots(&u, s, a->d.used, err);
    skv_qty cap[NSL];
    memcpy(cap, a->cap, sizeof cap);
    skv__sched_health_cap(a, cap);          /* devices out of service */
    if (!rc && capacity)
        rc = skv__sched_to_slots(&c, s, cap, err);
    if (rc) {
        skv_slots_free(u);
        return rc;
    }
    if (used)
        *used = u;
    if (capacity)
        *capacity = c;
    return 0;
}
