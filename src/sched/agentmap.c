/* The agent's node-level allocation map (sokovan/alloc.h), run here on the
 * manager's view of each agent: the device-level decision of a placement is
 * made by exactly the code the agent runs, so the agent can always honour
 * it. dmap.c mirrors it as a pure predictor for trials (selectors, backfill,
 * preemption plans); every committed kernel is allocated on the real map
 * and the mirror takes the map's device choice. skv_sched_check() verifies
 * both agree.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"
#include "sokovan/alloc.h"

static int add_slot(skv_alloc_map *m, const skv_sched *s, uint8_t slot,
                    bool whole, unsigned group, uint8_t *mslot, skv_error *err)
{
    if (mslot[slot] != SKV_SCHED_NO_SLOT)
        return 0;
    skv_alloc_slot_spec sp = SKV_ALLOC_SLOT_SPEC_INIT;
    sp.name = s->slot_name[slot];
    sp.kind = SKV_SLOT_COUNT;
    sp.mode = whole ? SKV_ALLOC_DISCRETE : SKV_ALLOC_FRACTIONAL;
    sp.quantum = whole ? 0 : 1; /* shares: the slots' own 0.001 quantum */
    sp.exclusive_group = group;
    sp.flags = whole ? 0 : SKV_ALLOC_SLOT_ANTIFRAG;
    size_t ix;
    int rc = skv_alloc_map_add_slot(m, &ix, &sp, err);
    if (!rc)
        mslot[slot] = (uint8_t)ix;
    return rc;
}

/* One exclusive group per whole slot: its devices are taken whole or
 * shared, never both. */
static int map_device(skv_alloc_map *m, const skv_sched *s, skv__agent *a,
                      uint32_t i, skv_error *err)
{
    const skv_sched_device_view *v = &a->d.dev[i];
    unsigned group = 1u + v->whole_slot;
    int rc = add_slot(m, s, v->whole_slot, true, group, a->mslot, err);
    if (!rc && v->share_slot != SKV_SCHED_NO_SLOT)
        rc = add_slot(m, s, v->share_slot, false, group, a->mslot, err);
    size_t dix;
    if (!rc)
        rc = skv_alloc_map_add_device(m, &dix, v->id,
                                      a->dnuma ? a->dnuma[i] : -1, err);
    if (!rc)
        rc = skv_alloc_map_set_capacity(m, dix, s->slot_name[v->whole_slot],
                                        SKV_QTY_SCALE, err);
    if (!rc && v->share_slot != SKV_SCHED_NO_SLOT)
        rc = skv_alloc_map_set_capacity(m, dix, s->slot_name[v->share_slot],
                                        v->share_capacity, err);
    return rc;
}

int skv__sched_agent_map_build(const skv_sched *s, skv__agent *a,
                               skv_error *err)
{
    memset(a->mslot, SKV_SCHED_NO_SLOT, sizeof(a->mslot));
    if (a->d.ndev == 0)
        return 0;
    skv_alloc_map_options o = SKV_ALLOC_MAP_OPTIONS_INIT;
    o.strategy = SKV_ALLOC_FILL;
    skv_alloc_map *m = NULL;
    int rc = skv_alloc_map_new(&m, &o, err);
    for (uint32_t i = 0; !rc && i < a->d.ndev; i++)
        rc = map_device(m, s, a, i, err);
    if (rc) {
        skv_alloc_map_free(m);
        skv__err_prefix(err, "agent '%s' allocation map", a->id);
        return rc;
    }
    a->map = m;
    return 0;
}

void skv__sched_map_release(skv__agent *a, skv__kalloc *ka)
{
    for (uint8_t i = 0; i < ka->nres; i++) {
        skv_alloc_map_release(a->map, ka->res[i], NULL);
        skv_alloc_result_free(ka->res[i]);
    }
    skv__free(ka->res);
    ka->res = NULL;
    ka->nres = 0;
}

static void shares_of(const skv__agent *a, const skv_alloc_result *r,
                      uint8_t slot, bool whole, skv_sched_device_share *sh,
                      size_t *n)
{
    size_t c = skv_alloc_result_count(r);
    for (size_t i = 0; i < c; i++) {
        skv_alloc_entry e;
        skv_alloc_result_at(r, i, &e);
        sh[(*n)++] = (skv_sched_device_share){(uint32_t)e.device, slot, whole,
                                              e.qty};
    }
    (void)a;
}

/* Whole devices of an agent with a layout: the closest free ones
 * (topology.c); otherwise, and for shares, the map's own placement. */
static int alloc_slot(skv__agent *a, skv_alloc_result **out, uint8_t s,
                      bool whole, skv_qty q)
{
    size_t pick[SKV_SCHED_DEVICES_MAX];
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    size_t k = (size_t)(q / SKV_QTY_SCALE);
    if (whole && q % SKV_QTY_SCALE == 0 && k <= SKV_SCHED_DEVICES_MAX &&
        skv__sched_topo_pick(a, a->mslot[s], k, pick)) {
        c.devices = pick;
        c.device_count = k;
    }
    return skv_alloc_map_alloc_slot(out, a->map, a->mslot[s], q, &c, NULL);
}

/* Allocate the kernel's device slots on the real map: whole slots first,
 * then shared ones (the order the mirror predicts with). Fills sh/n with
 * the map's choice. SKV_ENOSPC when the map refuses. */
int skv__sched_map_alloc(skv__agent *a, skv__kalloc *ka, const skv_qty *req,
                         skv_sched_device_share *sh, size_t *n)
{
    *n = 0;
    ka->res = NULL;
    ka->nres = 0;
    if (!a->map)
        return 0;
    uint8_t want = 0;
    for (int s = 0; s < NSL; s++)
        want += req[s] && a->mslot[s] != SKV_SCHED_NO_SLOT;
    if (!want)
        return 0;
    ka->res = skv__calloc(want, sizeof(*ka->res));
    if (!ka->res)
        return SKV_ENOMEM;
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < NSL; s++) {
            bool whole = (a->whole_mask >> s) & 1u;
            if (!req[s] || a->mslot[s] == SKV_SCHED_NO_SLOT || whole != (pass == 0))
                continue;
            int rc = alloc_slot(a, &ka->res[ka->nres], (uint8_t)s, whole,
                                req[s]);
            if (rc) {
                skv__sched_map_release(a, ka);
                *n = 0;
                return rc == SKV_ENOMEM ? SKV_ENOMEM : SKV_ENOSPC;
            }
            shares_of(a, ka->res[ka->nres++], (uint8_t)s, whole, sh, n);
        }
    return 0;
}

/* The mirror equals the map, device by device. */
int skv__sched_map_verify(const skv__agent *a, skv_error *err)
{
    if (!a->map)
        return 0;
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        const skv_sched_device_view *v = &a->d.dev[i];
        skv_qty w = skv_alloc_map_used(a->map, a->mslot[v->whole_slot], i);
        skv_qty sh = v->share_slot == SKV_SCHED_NO_SLOT ? 0
                     : skv_alloc_map_used(a->map, a->mslot[v->share_slot], i);
        if (w != (v->whole_taken ? SKV_QTY_SCALE : 0) || sh != v->share_used)
            return skv__err(err, SKV_ESTATE, "agent '%s' device %u: allocation "
                            "map holds whole=%lld share=%lld, the scheduler's "
                            "view whole=%d share=%lld", a->id, i, (long long)w,
                            (long long)sh, v->whole_taken, (long long)v->share_used);
    }
    return 0;
}
