/* Allocation maps: lifetime, slots, devices and capacities.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "alloc_internal.h"

static bool strategy_valid(int s)
{
    return s == SKV_ALLOC_FILL || s == SKV_ALLOC_EVENLY ||
           s == SKV_ALLOC_INTERLEAVE;
}

int skv_alloc_map_new(skv_alloc_map **out, const skv_alloc_map_options *opts,
                      skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_new: out is NULL");
    skv_alloc_strategy strategy = SKV_ALLOC_FILL;
    if (opts) {
        if (opts->version != SKV_ALLOC_MAP_OPTIONS_VERSION)
            return skv__err(err, SKV_EVERSION, "allocation map options: "
                            "version %u, this library knows %u", opts->version,
                            SKV_ALLOC_MAP_OPTIONS_VERSION);
        if (!strategy_valid((int)opts->strategy))
            return skv__err(err, SKV_EINVAL, "allocation map options: "
                            "invalid strategy %d", (int)opts->strategy);
        strategy = opts->strategy;
    }
    skv_alloc_map *m = skv__calloc(1, sizeof(*m));
    if (!m)
        return skv__err(err, SKV_ENOMEM, "allocation map: out of memory");
    m->strategy = strategy;
    *out = m;
    return 0;
}

void skv_alloc_map_free(skv_alloc_map *map)
{
    if (!map)
        return;
    for (size_t s = 0; s < map->nslots; s++) {
        skv__free(map->slots[s].cap);
        skv__free(map->slots[s].used);
        skv__free(map->slots[s].plan);
    }
    for (size_t d = 0; d < map->ndevs; d++)
        skv__free(map->devs[d].id);
    skv__free(map->slots);
    skv__free(map->devs);
    skv__free(map->tier);
    skv__free(map->nodes);
    skv__free(map->node_tier);
    skv__free(map->node_free);
    skv__free(map->node_amt);
    skv__free(map->tier_free);
    skv__free(map);
}

long skv__alloc_slot_find(const skv_alloc_map *m, const char *name)
{
    for (size_t s = 0; s < m->nslots; s++)
        if (strcmp(m->slots[s].name, name) == 0)
            return (long)s;
    return -1;
}

/* Grow one qty array to n entries, zeroing the new tail. */
static int grow_qty(skv_qty **arr, size_t old, size_t n)
{
    skv_qty *p = skv__reallocarray(*arr, n ? n : 1, sizeof(*p));
    if (!p)
        return SKV_ENOMEM;
    memset(p + old, 0, (n - old) * sizeof(*p));
    *arr = p;
    return 0;
}

int skv__alloc_map_reserve(skv_alloc_map *m, size_t need, skv_error *err)
{
    if (need <= m->dev_alloc)
        return 0;
    size_t n = m->dev_alloc ? m->dev_alloc : 8;
    while (n < need)
        n *= 2;
    /* Every array grows to n; a failure part-way leaves larger arrays
     * behind, which is harmless because dev_alloc is only raised at the
     * end. */
    skv__alloc_dev *devs = skv__reallocarray(m->devs, n, sizeof(*devs));
    if (!devs)
        goto nomem;
    m->devs = devs;
    uint32_t *tier = skv__reallocarray(m->tier, n, sizeof(*tier));
    if (!tier)
        goto nomem;
    m->tier = tier;
    for (size_t s = 0; s < m->nslots; s++) {
        skv__alloc_slot *sl = &m->slots[s];
        if (grow_qty(&sl->cap, m->dev_alloc, n) ||
            grow_qty(&sl->used, m->dev_alloc, n) ||
            grow_qty(&sl->plan, m->dev_alloc, n))
            goto nomem;
    }
    m->dev_alloc = n;
    return 0;
nomem:
    /* Arrays that did grow have zeroed tails up to n; record nothing. */
    return skv__err(err, SKV_ENOMEM, "allocation map: out of memory for "
                    "%zu devices", need);
}

static int spec_resolve(skv__alloc_slot *out, const skv_alloc_slot_spec *spec,
                        skv_error *err)
{
    if (spec->version != SKV_ALLOC_SLOT_SPEC_VERSION)
        return skv__err(err, SKV_EVERSION, "slot spec: version %u, this "
                        "library knows %u", spec->version,
                        SKV_ALLOC_SLOT_SPEC_VERSION);
    int rc = skv_slot_name_check(spec->name, err);
    if (rc)
        return rc;
    const char *n = spec->name;
    if (spec->kind != SKV_SLOT_COUNT && spec->kind != SKV_SLOT_BYTES &&
        spec->kind != SKV_SLOT_UNIQUE)
        return skv__err(err, SKV_EINVAL, "slot '%s': invalid kind %d", n,
                        (int)spec->kind);
    if (spec->mode != SKV_ALLOC_DISCRETE && spec->mode != SKV_ALLOC_FRACTIONAL)
        return skv__err(err, SKV_EINVAL, "slot '%s': invalid mode %d", n,
                        (int)spec->mode);
    if (spec->kind == SKV_SLOT_UNIQUE && spec->mode != SKV_ALLOC_DISCRETE)
        return skv__err(err, SKV_EINVAL, "slot '%s': a unique slot must be "
                        "discrete", n);
    if (spec->flags & ~SKV_ALLOC_SLOT_ANTIFRAG)
        return skv__err(err, SKV_EINVAL, "slot '%s': unknown flags 0x%x", n,
                        spec->flags & ~SKV_ALLOC_SLOT_ANTIFRAG);
    skv_qty q = spec->quantum;
    if (q == 0) {
        if (spec->kind == SKV_SLOT_BYTES)
            q = 1;
        else
            q = spec->mode == SKV_ALLOC_DISCRETE ? SKV_QTY_SCALE
                                                 : SKV_ALLOC_FRACTION_QUANTUM;
    }
    if (q < 0 || q > SKV_QTY_MAX)
        return skv__err(err, SKV_EINVAL, "slot '%s': invalid quantum %lld", n,
                        (long long)q);
    if (spec->kind == SKV_SLOT_UNIQUE && q != SKV_QTY_SCALE)
        return skv__err(err, SKV_EINVAL, "slot '%s': a unique slot's quantum "
                        "is one unit (1000), not %lld", n, (long long)q);
    if (spec->kind == SKV_SLOT_COUNT && SKV_QTY_SCALE % q != 0 &&
        q % SKV_QTY_SCALE != 0)
        return skv__err(err, SKV_EINVAL, "slot '%s': quantum %lld neither "
                        "divides nor is a multiple of one unit (1000)", n,
                        (long long)q);
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", n);
    out->kind = spec->kind;
    out->mode = spec->mode;
    out->quantum = q;
    out->group = spec->exclusive_group;
    out->flags = spec->flags;
    return 0;
}

int skv_alloc_map_add_slot(skv_alloc_map *map, size_t *index_out,
                           const skv_alloc_slot_spec *spec, skv_error *err)
{
    if (!map || !spec)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_add_slot: %s is NULL",
                        map ? "spec" : "map");
    skv__alloc_slot sl;
    int rc = spec_resolve(&sl, spec, err);
    if (rc)
        return rc;
    if (skv__alloc_slot_find(map, sl.name) >= 0)
        return skv__err(err, SKV_EEXIST, "slot '%s' is already in the map",
                        sl.name);
    if (map->nslots >= SKV_ALLOC_MAP_SLOTS_MAX)
        return skv__err(err, SKV_EINVAL, "slot '%s': a map holds at most %d "
                        "slots", sl.name, SKV_ALLOC_MAP_SLOTS_MAX);
    skv__alloc_slot *grown =
        skv__reallocarray(map->slots, map->nslots + 1, sizeof(*grown));
    if (!grown)
        return skv__err(err, SKV_ENOMEM, "slot '%s': out of memory", sl.name);
    map->slots = grown;
    size_t n = map->dev_alloc ? map->dev_alloc : 1;
    sl.cap = skv__calloc(n, sizeof(skv_qty));
    sl.used = skv__calloc(n, sizeof(skv_qty));
    sl.plan = skv__calloc(n, sizeof(skv_qty));
    if (!sl.cap || !sl.used || !sl.plan) {
        skv__free(sl.cap);
        skv__free(sl.used);
        skv__free(sl.plan);
        return skv__err(err, SKV_ENOMEM, "slot '%s': out of memory", sl.name);
    }
    size_t idx = map->nslots;
    if (sl.group) {
        for (size_t s = 0; s < idx; s++) {
            if (map->slots[s].group != sl.group)
                continue;
            map->slots[s].partners |= UINT32_C(1) << idx;
            sl.partners |= UINT32_C(1) << s;
        }
    }
    map->slots[idx] = sl;
    map->nslots++;
    if (index_out)
        *index_out = idx;
    return 0;
}
