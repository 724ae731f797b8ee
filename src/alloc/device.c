/* Allocation maps: devices, NUMA node bookkeeping and capacities.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

static int id_check(const char *id, skv_error *err)
{
    if (!id || !*id)
        return skv__err(err, SKV_EINVAL, "device id is %s",
                        id ? "empty" : "NULL");
    size_t n = 0;
    for (const char *p = id; *p; p++, n++) {
        if (n + 1 >= SKV_ALLOC_DEVICE_ID_MAX)
            return skv__err(err, SKV_EINVAL, "device id '%.32s...' is longer "
                            "than %d characters", id,
                            SKV_ALLOC_DEVICE_ID_MAX - 1);
        if (*p <= 0x20 || *p >= 0x7f)
            return skv__err(err, SKV_EINVAL, "device id '%.64s': character "
                            "%zu is not printable ASCII without spaces", id,
                            n + 1);
    }
    return 0;
}

long skv__alloc_node_find(const skv_alloc_map *m, int id)
{
    size_t lo = 0, hi = m->nnodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->nodes[mid] == id)
            return (long)mid;
        if (m->nodes[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

static int node_reserve(skv_alloc_map *m, size_t need)
{
    if (need <= m->node_alloc)
        return 0;
    size_t n = m->node_alloc ? m->node_alloc * 2 : 4;
    int *nodes = skv__reallocarray(m->nodes, n, sizeof(int));
    if (!nodes)
        return SKV_ENOMEM;
    m->nodes = nodes;
    uint32_t *nt = skv__reallocarray(m->node_tier, n, sizeof(uint32_t));
    if (!nt)
        return SKV_ENOMEM;
    m->node_tier = nt;
    skv_qty *a = skv__reallocarray(m->node_free, n, sizeof(skv_qty));
    if (!a)
        return SKV_ENOMEM;
    m->node_free = a;
    a = skv__reallocarray(m->node_amt, n, sizeof(skv_qty));
    if (!a)
        return SKV_ENOMEM;
    m->node_amt = a;
    a = skv__reallocarray(m->tier_free, n + 1, sizeof(skv_qty));
    if (!a)
        return SKV_ENOMEM;
    m->tier_free = a;
    m->node_alloc = n;
    return 0;
}

/* Insert node id (if new) and renumber the devices' node indexes. */
static int node_add(skv_alloc_map *m, int id, uint32_t *idx_out)
{
    long pos = skv__alloc_node_find(m, id);
    if (pos >= 0) {
        *idx_out = (uint32_t)pos;
        return 0;
    }
    if (node_reserve(m, m->nnodes + 1))
        return SKV_ENOMEM;
    size_t at = (size_t)(-pos - 1);
    memmove(m->nodes + at + 1, m->nodes + at, (m->nnodes - at) * sizeof(int));
    m->nodes[at] = id;
    m->nnodes++;
    for (size_t d = 0; d < m->ndevs; d++)
        if (m->devs[d].node >= at)
            m->devs[d].node++;
    *idx_out = (uint32_t)at;
    return 0;
}

int skv_alloc_map_add_device(skv_alloc_map *map, size_t *index_out,
                             const char *id, int numa_node, skv_error *err)
{
    if (!map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_add_device: map is "
                        "NULL");
    int rc = id_check(id, err);
    if (rc)
        return rc;
    if (numa_node < -1 || numa_node > SKV_ALLOC_NUMA_MAX)
        return skv__err(err, SKV_EINVAL, "device '%s': NUMA node %d outside "
                        "-1..%d", id, numa_node, SKV_ALLOC_NUMA_MAX);
    size_t ignored;
    if (skv_alloc_map_device_index(map, id, &ignored) == 0)
        return skv__err(err, SKV_EEXIST, "device '%s' is already in the map",
                        id);
    if (map->ndevs >= SKV_ALLOC_MAP_DEVICES_MAX)
        return skv__err(err, SKV_EINVAL, "device '%s': a map holds at most "
                        "%d devices", id, SKV_ALLOC_MAP_DEVICES_MAX);
    char *copy = skv__strdup(id);
    rc = copy ? skv__alloc_map_reserve(map, map->ndevs + 1, err) : SKV_ENOMEM;
    if (rc == 0 && node_reserve(map, map->nnodes + 1))
        rc = SKV_ENOMEM;
    uint32_t node = 0;
    if (rc == 0)
        rc = node_add(map, numa_node, &node); /* cannot fail: reserved */
    if (rc) {
        skv__free(copy);
        return skv__err(err, SKV_ENOMEM, "device '%s': out of memory", id);
    }
    size_t d = map->ndevs++;
    map->devs[d] = (skv__alloc_dev){copy, numa_node, node, 0};
    for (size_t s = 0; s < map->nslots; s++) {
        map->slots[s].cap[d] = 0;
        map->slots[s].used[d] = 0;
        map->slots[s].plan[d] = 0;
    }
    if (index_out)
        *index_out = d;
    return 0;
}

int skv_alloc_map_set_capacity(skv_alloc_map *map, size_t device,
                               const char *slot, skv_qty capacity,
                               skv_error *err)
{
    if (!map || !slot)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_set_capacity: %s is "
                        "NULL", map ? "slot" : "map");
    long s = skv__alloc_slot_find(map, slot);
    if (s < 0)
        return skv__err(err, SKV_ENOENT, "slot '%.64s' is not in the map",
                        slot);
    if (device >= map->ndevs)
        return skv__err(err, SKV_ERANGE, "device index %zu out of range "
                        "(map has %zu devices)", device, map->ndevs);
    skv__alloc_slot *sl = &map->slots[s];
    const char *id = map->devs[device].id;
    if (capacity < 0 || capacity > SKV_QTY_MAX)
        return skv__err(err, SKV_EINVAL, "device '%s' slot '%s': invalid "
                        "capacity %lld", id, slot, (long long)capacity);
    if (capacity % sl->quantum != 0)
        return skv__err(err, SKV_EINVAL, "device '%s' slot '%s': capacity "
                        "%lld is not a multiple of the quantum %lld", id, slot,
                        (long long)capacity, (long long)sl->quantum);
    if (sl->kind == SKV_SLOT_UNIQUE && capacity != 0 &&
        capacity != SKV_QTY_SCALE)
        return skv__err(err, SKV_EINVAL, "device '%s' slot '%s': a unique "
                        "slot has capacity 0 or 1", id, slot);
    if (capacity < sl->used[device])
        return skv__err(err, SKV_EBUSY, "device '%s' slot '%s': capacity "
                        "%lld is below the %lld in use", id, slot,
                        (long long)capacity, (long long)sl->used[device]);
    skv_qty total = sl->total_cap - sl->cap[device];
    if (skv__add_overflow_i64(total, capacity, &total) || total > SKV_QTY_MAX)
        return skv__err(err, SKV_ERANGE, "slot '%s': total capacity "
                        "overflows", slot);
    sl->cap[device] = capacity;
    sl->total_cap = total;
    return 0;
}
