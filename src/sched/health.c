/* Devices out of service (an agent reported them unhealthy). Such a device
 * keeps its place in the agent's map (device indexes, allocations and the
 * map the agent runs stay as they are) but takes no new placement:
 *   - free, it is taken whole by the scheduler itself: a claim on the real
 *     allocation map and whole_taken in the mirror, so every trial, bucket,
 *     selector view and plugin sees it as busy and no code path needs a
 *     health test of its own;
 *   - still shared by sessions, its share capacity is cut to what they use
 *     (on the map and the mirror), so nothing more fits, until they leave;
 *   - held whole by a session, nothing fits on it anyway.
 * Each release on the agent re-runs the sync, so the device is held the
 * moment its last user leaves, before any later pass can look at it.
 * Capacities reported by skv_sched_agent_usage leave such devices out.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"
#include "selector_frag_index.h"

#define NDEV SKV_SCHED_DEVICES_MAX

struct skv__dhealth {
    uint64_t want;                 /* devices reported unhealthy */
    uint64_t held;                 /* ... taken whole by the scheduler */
    uint64_t lowered;              /* ... whose share capacity was cut */
    skv_alloc_result *res[NDEV];   /* the claims of held devices */
    skv_qty cap0[NDEV];            /* share capacity before the cut */
};

static void set_share_cap(skv_sched *s, skv__agent *a, uint32_t i,
                          skv_qty cap)
{
    skv_sched_device_view *v = &a->d.dev[i];
    skv_alloc_map_set_capacity(a->map, i, s->slot_name[v->share_slot], cap,
                               NULL);
    v->share_capacity = cap;
}

static void restore_share(skv_sched *s, skv__agent *a, uint32_t i)
{
    skv__dhealth *h = a->health;
    if (h->lowered & (1ull << i)) {
        set_share_cap(s, a, i, h->cap0[i]);
        h->lowered &= ~(1ull << i);
    }
}

static void unhold(skv__agent *a, uint32_t i)
{
    skv__dhealth *h = a->health;
    if (!(h->held & (1ull << i)))
        return;
    skv_alloc_map_release(a->map, h->res[i], NULL);
    skv_alloc_result_free(h->res[i]);
    h->res[i] = NULL;
    a->d.dev[i].whole_taken = false;
    h->held &= ~(1ull << i);
}

/* Take the free device i whole (map and mirror). */
static void hold(skv_sched *s, skv__agent *a, uint32_t i)
{
    skv__dhealth *h = a->health;
    skv_sched_device_view *v = &a->d.dev[i];
    restore_share(s, a, i);
    skv_alloc_entry e = {a->mslot[v->whole_slot], i, SKV_QTY_SCALE};
    if (skv_alloc_map_claim(&h->res[i], a->map, &e, 1, NULL) != 0)
        return;                     /* busy after all: next release retries */
    v->whole_taken = true;
    h->held |= 1ull << i;
}

/* Shared and in use: nothing more fits (the cut follows the use down). */
static void lower(skv_sched *s, skv__agent *a, uint32_t i)
{
    skv__dhealth *h = a->health;
    skv_sched_device_view *v = &a->d.dev[i];
    if (v->share_slot == SKV_SCHED_NO_SLOT || v->whole_taken ||
        v->share_capacity == v->share_used)
        return;
    if (!(h->lowered & (1ull << i)))
        h->cap0[i] = v->share_capacity;
    h->lowered |= 1ull << i;
    set_share_cap(s, a, i, v->share_used);
}

void skv__sched_health_sync(skv_sched *s, skv__agent *a)
{
    skv__dhealth *h = a->health;
    if (!h || !a->map)
        return;
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        uint64_t bit = 1ull << i;
        const skv_sched_device_view *v = &a->d.dev[i];
        if (!(h->want & bit)) {
            unhold(a, i);
            restore_share(s, a, i);
        } else if (!(h->held & bit)) {
            if (!v->whole_taken && v->share_used == 0)
                hold(s, a, i);
            else
                lower(s, a, i);
        }
    }
    skv__fidx_touch(s, a);
    skv__sched_rebucket(s, a);
}

/* Give everything back (before the agent's map goes or is rebuilt); the
 * wanted set stays. */
void skv__sched_health_detach(skv_sched *s, skv__agent *a)
{
    if (!a->health || !a->map)
        return;
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        unhold(a, i);
        restore_share(s, a, i);
    }
}

void skv__sched_health_free(skv__agent *a)
{
    if (!a->health)
        return;
    for (uint32_t i = 0; i < NDEV; i++)
        skv_alloc_result_free(a->health->res[i]);
    skv__free(a->health);
    a->health = NULL;
}

uint64_t skv__sched_health_in(const skv__agent *old, const skv__agent *na)
{
    uint64_t m = 0;
    for (uint32_t i = 0; old->health && i < old->d.ndev; i++) {
        if (!(old->health->want & (1ull << i)))
            continue;
        for (uint32_t j = 0; j < na->d.ndev; j++)
            if (old->d.dev[i].id && na->d.dev[j].id &&
                !strcmp(old->d.dev[i].id, na->d.dev[j].id))
                m |= 1ull << j;
    }
    return m;
}

void skv__sched_health_set(skv_sched *s, skv__agent *a, uint64_t down)
{
    if (!down && !a->health)
        return;
    if (!a->health && !(a->health = skv__calloc(1, sizeof *a->health))) {
        skv__log(SKV_LOG_ERROR, "sched", "agent '%s': out of memory keeping "
                 "its devices out of service", a->id);
        return;
    }
    a->health->want = down;
    skv__sched_health_sync(s, a);
}

uint64_t skv__sched_health_held(const skv__agent *a)
{
    return a->health ? a->health->held : 0;
}

/* What a down device takes out of cap (dense, device slots only). */
void skv__sched_health_cap(const skv__agent *a, skv_qty *cap)
{
    const skv__dhealth *h = a->health;
    for (uint32_t i = 0; h && i < a->d.ndev; i++) {
        const skv_sched_device_view *v = &a->d.dev[i];
        if (!(h->want & (1ull << i)))
            continue;
        cap[v->whole_slot] -= SKV_QTY_SCALE;
        if (v->share_slot != SKV_SCHED_NO_SLOT)
            cap[v->share_slot] -= (h->lowered & (1ull << i)) ? h->cap0[i]
                                                            : v->share_capacity;
    }
}

static int dev_index(const skv__agent *a, const char *dev, uint32_t *out)
{
    for (uint32_t i = 0; i < a->d.ndev; i++)
        if (a->d.dev[i].id && !strcmp(a->d.dev[i].id, dev)) {
            *out = i;
            return 0;
        }
    return SKV_ENOENT;
}

SKV_EXTERN int skv_sched_agent_set_device_health(skv_sched *s,
                                                 const char *agent_id,
                                                 const char *device_id,
                                                 bool healthy, skv_error *err)
{
    if (!s || !device_id)
        return skv__err(err, SKV_EINVAL, "set_device_health: NULL argument");
    skv__agent *a = skv__sched_agent(s, agent_id, NULL, err);
    if (!a)
        return SKV_ENOENT;
    uint32_t i;
    if (dev_index(a, device_id, &i))
        return skv__err(err, SKV_ENOENT, "agent '%s' has no device '%s'",
                        agent_id, device_id);
    if (!a->health && healthy)
        return 0;
    if (!a->health && !(a->health = skv__calloc(1, sizeof *a->health)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    uint64_t want = a->health->want;
    want = healthy ? want & ~(1ull << i) : want | 1ull << i;
    skv__sched_health_set(s, a, want);
    return 0;
}
