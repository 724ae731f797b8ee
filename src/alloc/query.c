/* Allocation maps: read-only queries, totals, comparison and copies.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

const char *skv_alloc_strategy_name(skv_alloc_strategy s)
{
    switch (s) {
    case SKV_ALLOC_FILL: return "fill";
    case SKV_ALLOC_EVENLY: return "evenly";
    case SKV_ALLOC_INTERLEAVE: return "interleave";
    case SKV_ALLOC_DEFAULT: return "default";
    }
    return "?";
}

int skv_alloc_strategy_parse(skv_alloc_strategy *out, const char *text,
                             skv_error *err)
{
    static const skv_alloc_strategy all[] = {
        SKV_ALLOC_DEFAULT, SKV_ALLOC_FILL, SKV_ALLOC_EVENLY,
        SKV_ALLOC_INTERLEAVE};
    if (!out || !text)
        return skv__err(err, SKV_EINVAL, "skv_alloc_strategy_parse: %s is "
                        "NULL", out ? "text" : "out");
    for (size_t i = 0; i < SKV__ARRAY_LEN(all); i++) {
        if (strcmp(text, skv_alloc_strategy_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return skv__err(err, SKV_EINVAL, "unknown allocation strategy '%.64s' "
                    "(fill, evenly, interleave)", text);
}

size_t skv_alloc_map_slot_count(const skv_alloc_map *map)
{
    return map ? map->nslots : 0;
}

const char *skv_alloc_map_slot_name(const skv_alloc_map *map, size_t slot)
{
    return map && slot < map->nslots ? map->slots[slot].name : NULL;
}

int skv_alloc_map_slot_spec(const skv_alloc_map *map, size_t slot,
                            skv_alloc_slot_spec *out)
{
    if (!map || !out || slot >= map->nslots)
        return SKV_ERANGE;
    const skv__alloc_slot *s = &map->slots[slot];
    out->version = SKV_ALLOC_SLOT_SPEC_VERSION;
    out->name = s->name;
    out->kind = s->kind;
    out->mode = s->mode;
    out->quantum = s->quantum;
    out->exclusive_group = s->group;
    out->flags = s->flags;
    return 0;
}

int skv_alloc_map_slot_index(const skv_alloc_map *map, const char *name,
                             size_t *out)
{
    long s = map && name ? skv__alloc_slot_find(map, name) : -1;
    if (s < 0)
        return SKV_ENOENT;
    if (out)
        *out = (size_t)s;
    return 0;
}

size_t skv_alloc_map_device_count(const skv_alloc_map *map)
{
    return map ? map->ndevs : 0;
}

const char *skv_alloc_map_device_id(const skv_alloc_map *map, size_t device)
{
    return map && device < map->ndevs ? map->devs[device].id : NULL;
}

int skv_alloc_map_device_numa(const skv_alloc_map *map, size_t device)
{
    return map && device < map->ndevs ? map->devs[device].numa : -1;
}

int skv_alloc_map_device_index(const skv_alloc_map *map, const char *id,
                               size_t *out)
{
    if (!map || !id)
        return SKV_ENOENT;
    for (size_t d = 0; d < map->ndevs; d++) {
        if (strcmp(map->devs[d].id, id) == 0) {
            if (out)
                *out = d;
            return 0;
        }
    }
    return SKV_ENOENT;
}

skv_alloc_strategy skv_alloc_map_strategy(const skv_alloc_map *map)
{
    return map ? map->strategy : SKV_ALLOC_FILL;
}

enum what { CAP, USED, FREE, AVAIL };

static skv_qty one(const skv_alloc_map *m, size_t s, size_t d, enum what w)
{
    const skv__alloc_slot *sl = &m->slots[s];
    switch (w) {
    case CAP: return sl->cap[d];
    case USED: return sl->used[d];
    case FREE: return sl->cap[d] - sl->used[d];
    case AVAIL:
        return (m->devs[d].busy & sl->partners) ? 0 : sl->cap[d] - sl->used[d];
    }
    return 0;
}

static skv_qty query(const skv_alloc_map *m, size_t s, size_t d, enum what w)
{
    if (!m || s >= m->nslots)
        return 0;
    if (d != SKV_ALLOC_ALL)
        return d < m->ndevs ? one(m, s, d, w) : 0;
    if (w == CAP)
        return m->slots[s].total_cap;
    if (w == USED)
        return m->slots[s].total_used;
    if (w == FREE)
        return m->slots[s].total_cap - m->slots[s].total_used;
    skv_qty sum = 0; /* <= total_cap, cannot overflow */
    for (size_t i = 0; i < m->ndevs; i++)
        sum += one(m, s, i, w);
    return sum;
}

skv_qty skv_alloc_map_capacity(const skv_alloc_map *map, size_t slot,
                               size_t device)
{
    return query(map, slot, device, CAP);
}

skv_qty skv_alloc_map_used(const skv_alloc_map *map, size_t slot,
                           size_t device)
{
    return query(map, slot, device, USED);
}

skv_qty skv_alloc_map_free_qty(const skv_alloc_map *map, size_t slot,
                               size_t device)
{
    return query(map, slot, device, FREE);
}

skv_qty skv_alloc_map_available(const skv_alloc_map *map, size_t slot,
                                size_t device)
{
    return query(map, slot, device, AVAIL);
}

int skv_alloc_map_totals(skv_slots *capacity, skv_slots *used,
                         const skv_alloc_map *map, skv_error *err)
{
    if (!map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_totals: map is NULL");
    for (size_t s = 0; s < map->nslots; s++) {
        const skv__alloc_slot *sl = &map->slots[s];
        int rc = 0;
        if (capacity)
            rc = skv_slots_set(capacity, sl->name, sl->kind, sl->total_cap,
                               err);
        if (rc == 0 && used)
            rc = skv_slots_set(used, sl->name, sl->kind, sl->total_used, err);
        if (rc)
            return rc;
    }
    return 0;
}

static bool slot_equal(const skv__alloc_slot *a, const skv__alloc_slot *b,
                       size_t ndevs)
{
    if (strcmp(a->name, b->name) != 0 || a->kind != b->kind ||
        a->mode != b->mode || a->quantum != b->quantum ||
        a->group != b->group || a->flags != b->flags ||
        a->total_cap != b->total_cap || a->total_used != b->total_used)
        return false;
    return ndevs == 0 ||
           (memcmp(a->cap, b->cap, ndevs * sizeof(skv_qty)) == 0 &&
            memcmp(a->used, b->used, ndevs * sizeof(skv_qty)) == 0);
}

int skv_alloc_map_equal(const skv_alloc_map *a, const skv_alloc_map *b)
{
    if (!a || !b)
        return a == b;
    if (a->strategy != b->strategy || a->nslots != b->nslots ||
        a->ndevs != b->ndevs)
        return 0;
    for (size_t d = 0; d < a->ndevs; d++)
        if (strcmp(a->devs[d].id, b->devs[d].id) != 0 ||
            a->devs[d].numa != b->devs[d].numa ||
            a->devs[d].busy != b->devs[d].busy)
            return 0;
    for (size_t s = 0; s < a->nslots; s++)
        if (!slot_equal(&a->slots[s], &b->slots[s], a->ndevs))
            return 0;
    return 1;
}

int skv_alloc_map_dup(skv_alloc_map **out, const skv_alloc_map *map,
                      skv_error *err)
{
    if (!out || !map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_dup: %s is NULL",
                        out ? "map" : "out");
    skv_alloc_map_options o = SKV_ALLOC_MAP_OPTIONS_INIT;
    o.strategy = map->strategy;
    skv_alloc_map *m = NULL;
    int rc = skv_alloc_map_new(&m, &o, err);
    for (size_t s = 0; rc == 0 && s < map->nslots; s++) {
        skv_alloc_slot_spec spec;
        skv_alloc_map_slot_spec(map, s, &spec);
        rc = skv_alloc_map_add_slot(m, NULL, &spec, err);
    }
    if (rc == 0)
        rc = skv__alloc_map_reserve(m, map->ndevs, err);
    for (size_t d = 0; rc == 0 && d < map->ndevs; d++)
        rc = skv_alloc_map_add_device(m, NULL, map->devs[d].id,
                                      map->devs[d].numa, err);
    if (rc) {
        skv_alloc_map_free(m);
        return rc;
    }
    for (size_t s = 0; s < map->nslots; s++) {
        skv__alloc_slot *dst = &m->slots[s];
        const skv__alloc_slot *src = &map->slots[s];
        if (map->ndevs) {
            memcpy(dst->cap, src->cap, map->ndevs * sizeof(skv_qty));
            memcpy(dst->used, src->used, map->ndevs * sizeof(skv_qty));
        }
        dst->total_cap = src->total_cap;
        dst->total_used = src->total_used;
    }
    for (size_t d = 0; d < map->ndevs; d++)
        m->devs[d].busy = map->devs[d].busy;
    *out = m;
    return 0;
}
