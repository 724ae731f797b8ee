/* Device-level allocation map of one agent, as the scheduler runs it.
 *
 * Semantics follow the node-level allocation maps (sokovan/alloc.h) for the
 * accelerator slots an agent declares: a device is taken either whole
 * (whole_slot, whole units) or shared (share_slot), never both; whole
 * devices go in device order; a shared amount that fits one device goes to
 * one device (anti-fragmentation), chosen FILL-wise: most used first, then
 * least free, then device order; a larger amount drains devices in that
 * order. Pooled slots (cpu, mem, ...) are plain capacity - used.
 * Everything is pure and allocation-free, so trials cost nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

#define UNIT SKV_QTY_SCALE

static bool whole_free(const skv_sched_device_view *v)
{
    return !v->whole_taken && v->share_used == 0;
}

static bool pooled_fits(const skv__dstate *d, const skv_qty *req, int slot)
{
    if (d->cap[slot] == SKV_QTY_UNLIMITED)
        return true;
    return req[slot] <= d->cap[slot] - d->used[slot];
}

/* FILL order over shareable devices: more used first, then less free,
 * then lower index (ties keep the earlier device). */
typedef struct fill_pick {
    int dev;
    skv_qty used, room;
} fill_pick;

static void fill_consider(fill_pick *b, uint32_t i, skv_qty used, skv_qty room)
{
    if (b->dev < 0 || used > b->used || (used == b->used && room < b->room))
        *b = (fill_pick){(int)i, used, room};
}

static int take_whole(const skv__dstate *d, uint8_t slot, skv_qty q,
                      uint64_t *chosen, skv_sched_device_share *out,
                      size_t *n)
{
    skv_qty need = q / UNIT;
    for (uint32_t i = 0; i < d->ndev && need > 0; i++) {
        const skv_sched_device_view *v = &d->dev[i];
        if (v->whole_slot != slot || !whole_free(v))
            continue;
        *chosen |= 1ull << i;
        out[(*n)++] = (skv_sched_device_share){i, slot, true, UNIT};
        need--;
    }
    return need > 0 ? SKV_ENOSPC : 0;
}

static bool share_eligible(const skv_sched_device_view *v, uint8_t slot,
                           uint64_t chosen, uint32_t i)
{
    return v->share_slot == slot && !v->whole_taken &&
           !(chosen & (1ull << i)) && v->share_used < v->share_capacity;
}

/* The FILL-best eligible device, among those with at least `min` room. */
static fill_pick fill_best(const skv__dstate *d, uint8_t slot,
                           uint64_t chosen, skv_qty min)
{
    fill_pick b = {-1, 0, 0};
    for (uint32_t i = 0; i < d->ndev; i++) {
        const skv_sched_device_view *v = &d->dev[i];
        if (!share_eligible(v, slot, chosen, i))
            continue;
        skv_qty room = v->share_capacity - v->share_used;
        if (room >= min)
            fill_consider(&b, i, v->share_used, room);
    }
    return b;
}

static int take_share(const skv__dstate *d, uint8_t slot, skv_qty q,
                      uint64_t *chosen, skv_sched_device_share *out,
                      size_t *n)
{
    fill_pick b = fill_best(d, slot, *chosen, q);
    if (b.dev >= 0) {
        *chosen |= 1ull << b.dev;
        out[(*n)++] = (skv_sched_device_share){(uint32_t)b.dev, slot, false, q};
        return 0;
    }
    /* no single device: drain devices in FILL order */
    skv_qty left = q;
    size_t n0 = *n;
    uint64_t c0 = *chosen;
    while (left > 0) {
        /* eligible devices have room > 0, so any room qualifies */
        b = fill_best(d, slot, *chosen, 0);
        if (b.dev < 0) {
            *n = n0;
            *chosen = c0;
            return SKV_ENOSPC;
        }
        skv_qty take = b.room < left ? b.room : left;
        *chosen |= 1ull << b.dev;
        out[(*n)++] = (skv_sched_device_share){(uint32_t)b.dev, slot, false, take};
        left -= take;
    }
    return 0;
}

static bool is_whole_slot(const skv__dstate *d, uint8_t slot)
{
    return (d->whole_slot_mask >> slot) & 1u;
}

int skv__dmap_trial(const skv__dstate *d, const skv_qty *req,
                    skv_sched_device_share *out, size_t *n_out)
{
    size_t n = 0;
    uint64_t chosen = 0;
    uint32_t want = 0; /* device slots the request uses */
    for (int s = 0; s < NSL; s++) {
        if (req[s] == 0)
            continue;
        if (d->dev_slot_mask & (1u << s))
            want |= 1u << s;
        else if (!pooled_fits(d, req, s))
            return SKV_ENOSPC;
    }
    /* whole devices first so shares do not land on devices a whole request
     * of the same kernel needs; each phase in slot order */
    uint32_t whole = want & d->whole_slot_mask;
    for (uint8_t s = 0; whole >> s; s++)
        if (((whole >> s) & 1u) && take_whole(d, s, req[s], &chosen, out, &n))
            return SKV_ENOSPC;
    uint32_t shared = want & ~d->whole_slot_mask;
    for (uint8_t s = 0; shared >> s; s++)
        if (((shared >> s) & 1u) && take_share(d, s, req[s], &chosen, out, &n))
            return SKV_ENOSPC;
    if (n_out)
        *n_out = n;
    return 0;
}

void skv__dmap_apply(skv__dstate *d, const skv_qty *req,
                     const skv_sched_device_share *sh, size_t n)
{
    for (int s = 0; s < NSL; s++)
        d->used[s] += req[s];
    for (size_t i = 0; i < n; i++) {
        skv_sched_device_view *v = &d->dev[sh[i].device];
        if (sh[i].whole)
            v->whole_taken = true;
        else
            v->share_used += sh[i].amount;
    }
}

void skv__dmap_release(skv__dstate *d, const skv_qty *req,
                       const skv_sched_device_share *sh, size_t n)
{
    for (int s = 0; s < NSL; s++)
        d->used[s] -= req[s];
    for (size_t i = 0; i < n; i++) {
        skv_sched_device_view *v = &d->dev[sh[i].device];
        if (sh[i].whole)
            v->whole_taken = false;
        else
            v->share_used -= sh[i].amount;
    }
}

static skv_qty share_short(const skv__dstate *d, uint8_t slot, skv_qty q)
{
    skv_qty total = 0;
    for (uint32_t i = 0; i < d->ndev; i++) {
        const skv_sched_device_view *v = &d->dev[i];
        if (share_eligible(v, slot, 0, i))
            total += v->share_capacity - v->share_used;
    }
    return total >= q ? 0 : q - total;
}

void skv__dmap_avail(const skv__dstate *d, skv_qty *avail)
{
    for (int s = 0; s < NSL; s++) {
        if (!(d->dev_slot_mask & (1u << s))) {
            avail[s] = d->cap[s] == SKV_QTY_UNLIMITED ? SKV_QTY_MAX
                                                      : d->cap[s] - d->used[s];
        } else if (is_whole_slot(d, (uint8_t)s)) {
            avail[s] = 0;
            for (uint32_t i = 0; i < d->ndev; i++)
                if (d->dev[i].whole_slot == s && whole_free(&d->dev[i]))
                    avail[s] += UNIT;
        } else {
            avail[s] = 0;
            for (uint32_t i = 0; i < d->ndev; i++)
                if (share_eligible(&d->dev[i], (uint8_t)s, 0, i))
                    avail[s] += d->dev[i].share_capacity - d->dev[i].share_used;
        }
    }
}

void skv__dmap_shortfall(const skv__dstate *d, const skv_qty *req,
                         skv_qty *short_out)
{
    for (int s = 0; s < NSL; s++) {
        short_out[s] = 0;
        if (req[s] == 0)
            continue;
        if (!(d->dev_slot_mask & (1u << s))) {
            if (!pooled_fits(d, req, s))
                short_out[s] = req[s] - (d->cap[s] - d->used[s]);
        } else if (is_whole_slot(d, (uint8_t)s)) {
            skv_qty freeu = 0;
            for (uint32_t i = 0; i < d->ndev; i++)
                if (d->dev[i].whole_slot == s && whole_free(&d->dev[i]))
                    freeu += UNIT;
            short_out[s] = freeu >= req[s] ? 0 : req[s] - freeu;
        } else {
            short_out[s] = share_short(d, (uint8_t)s, req[s]);
        }
    }
    /* a request that only fails as a whole (whole and shared on the same
     * devices): blame every device slot it uses */
    size_t n;
    skv_sched_device_share tmp[SKV_SCHED_DEVICES_MAX * 2];
    bool any = false;
    for (int s = 0; s < NSL; s++)
        any |= short_out[s] != 0;
    if (!any && skv__dmap_trial(d, req, tmp, &n) != 0)
        for (int s = 0; s < NSL; s++)
            if (req[s] && (d->dev_slot_mask & (1u << s)))
                short_out[s] = 1;
}

SKV_EXTERN int skv_sched_agent_view_trial(skv_sched_device_share *out,
                                          size_t *n_out,
                                          const skv_sched_agent_view *agent,
                                          const skv_sched_kernel_view *kernel)
{
    if (!agent || !kernel || !out)
        return SKV_EINVAL;
    skv__dstate d;
    memset(&d, 0, sizeof(d));
    skv_qty req[NSL] = {0};
    for (size_t i = 0; i < kernel->n_slots && i < NSL; i++)
        req[i] = kernel->request[i];
    for (size_t i = 0; i < agent->n_slots && i < NSL; i++)
        d.used[i] = agent->used[i];
    skv_qty cap[NSL] = {0};
    for (size_t i = 0; i < agent->n_slots && i < NSL; i++)
        cap[i] = agent->capacity[i];
    d.cap = cap;
    d.ndev = (uint32_t)agent->n_devices;
    d.dev = (skv_sched_device_view *)agent->devices; /* trial only reads */
    for (uint32_t i = 0; i < d.ndev; i++) {
        d.dev_slot_mask |= 1u << d.dev[i].whole_slot;
        if (d.dev[i].whole_slot < NSL)
            d.whole_slot_mask |= 1u << d.dev[i].whole_slot;
        if (d.dev[i].share_slot != SKV_SCHED_NO_SLOT)
            d.dev_slot_mask |= 1u << d.dev[i].share_slot;
    }
    size_t n = 0;
    int rc = skv__dmap_trial(&d, req, out, &n);
    if (n_out)
        *n_out = rc ? 0 : n;
    return rc;
}
