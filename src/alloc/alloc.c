/* Allocation maps: allocate, release, and the result object.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

skv_alloc_result *skv__alloc_result_new(size_t count)
{
    if (count > (SIZE_MAX - sizeof(skv_alloc_result)) / sizeof(skv_alloc_entry))
        return NULL;
    skv_alloc_result *r =
        skv__malloc(sizeof(*r) + count * sizeof(skv_alloc_entry));
    if (r) {
        r->count = count;
        r->released = 0;
    }
    return r;
}

/* Check every want, plan them all, then commit: the only failure after the
 * checks is the result allocation, which happens before any change. */
static int alloc_wants(skv_alloc_result **out, skv_alloc_map *m,
                       const skv__alloc_want *w, size_t n,
                       const skv__alloc_ctx *ctx, skv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = skv__alloc_fits(m, &w[i], ctx, err);
        if (rc)
            return rc;
    }
    skv__alloc_tiers(m, ctx);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += skv__alloc_plan(m, &w[i], ctx);
    skv_alloc_result *r = skv__alloc_result_new(total);
    if (!r)
        return skv__err(err, SKV_ENOMEM, "allocation result: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = w[i].slot;
        skv__alloc_slot *sl = &m->slots[s];
        for (size_t d = 0; d < m->ndevs; d++) {
            skv_qty q = sl->plan[d];
            if (q == 0)
                continue;
            r->e[k++] = (skv_alloc_entry){s, d, q};
            sl->used[d] += q;
            sl->total_used += q;
            m->devs[d].busy |= UINT32_C(1) << s;
        }
    }
    *out = r;
    return 0;
}

int skv_alloc_map_alloc(skv_alloc_result **out, skv_alloc_map *map,
                        const skv_slots *request,
                        const skv_alloc_constraints *c,
                        skv_error *err)
{
    if (!out || !map || !request)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_alloc: %s is NULL",
                        !out ? "out" : !map ? "map" : "request");
    skv__alloc_ctx ctx;
    int rc = skv__alloc_ctx_init(&ctx, map, c, err);
    if (rc)
        return rc;
    skv__alloc_want w[SKV_ALLOC_MAP_SLOTS_MAX];
    size_t n;
    rc = skv__alloc_request_wants(w, &n, map, request, err);
    if (rc)
        return rc;
    return alloc_wants(out, map, w, n, &ctx, err);
}

int skv_alloc_map_alloc_slot(skv_alloc_result **out, skv_alloc_map *map,
                             size_t slot, skv_qty qty,
                             const skv_alloc_constraints *c, skv_error *err)
{
    if (!out || !map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_alloc_slot: %s is "
                        "NULL", out ? "map" : "out");
    skv__alloc_ctx ctx;
    int rc = skv__alloc_ctx_init(&ctx, map, c, err);
    if (rc)
        return rc;
    if (slot >= map->nslots)
        return skv__err(err, SKV_EINVAL, "slot index %zu is not in this "
                        "allocation map (%zu slots)", slot, map->nslots);
    rc = skv__alloc_validate_qty(map, slot, qty, err);
    if (rc)
        return rc;
    skv__alloc_want w = {slot, qty};
    return alloc_wants(out, map, &w, qty ? 1 : 0, &ctx, err);
}

int skv_alloc_map_release(skv_alloc_map *map, skv_alloc_result *r,
                          skv_error *err)
{
    if (!map || !r)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_release: %s is NULL",
                        map ? "result" : "map");
    if (r->released)
        return skv__err(err, SKV_ESTATE, "allocation already released");
    for (size_t i = 0; i < r->count; i++)
        if (r->e[i].slot >= map->nslots || r->e[i].device >= map->ndevs)
            return skv__err(err, SKV_EINVAL, "allocation entry %zu (slot %zu, "
                            "device %zu) is outside this map", i, r->e[i].slot,
                            r->e[i].device);
    for (size_t i = 0; i < r->count; i++) {
        const skv_alloc_entry *e = &r->e[i];
        if (map->slots[e->slot].used[e->device] < e->qty)
            return skv__err(err, SKV_ESTATE, "slot '%s' device '%s': "
                            "releasing more than is in use",
                            map->slots[e->slot].name, map->devs[e->device].id);
    }
    for (size_t i = 0; i < r->count; i++) {
        const skv_alloc_entry *e = &r->e[i];
        skv__alloc_slot *sl = &map->slots[e->slot];
        sl->used[e->device] -= e->qty;
        sl->total_used -= e->qty;
        if (sl->used[e->device] == 0)
            map->devs[e->device].busy &= ~(UINT32_C(1) << e->slot);
    }
    r->released = 1;
    return 0;
}

void skv_alloc_result_free(skv_alloc_result *r)
{
    skv__free(r);
}

size_t skv_alloc_result_count(const skv_alloc_result *r)
{
    return r ? r->count : 0;
}

int skv_alloc_result_at(const skv_alloc_result *r, size_t index,
                        skv_alloc_entry *out)
{
    if (!r || !out || index >= r->count)
        return SKV_ERANGE;
    *out = r->e[index];
    return 0;
}

skv_qty skv_alloc_result_get(const skv_alloc_result *r, size_t slot,
                             size_t device)
{
    skv_qty sum = 0;
    for (size_t i = 0; r && i < r->count; i++)
        if (r->e[i].slot == slot &&
            (device == SKV_ALLOC_ALL || r->e[i].device == device))
            sum += r->e[i].qty;
    return sum;
}

int skv_alloc_result_released(const skv_alloc_result *r)
{
    return r ? r->released : 0;
}
