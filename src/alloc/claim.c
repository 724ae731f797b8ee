/* Allocation maps: taking exact, externally given amounts (agent restart),
 * and the entry-list helpers shared with result decoding.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

static bool entry_less(const skv_alloc_entry *a, const skv_alloc_entry *b)
{
    return a->slot != b->slot ? a->slot < b->slot : a->device < b->device;
}

/* Shell sort: in place, no allocation, fine for the few thousand entries
 * a map can hold. */
static void entries_sort(skv_alloc_entry *e, size_t n)
{
    static const size_t gaps[] = {1750, 701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < SKV__ARRAY_LEN(gaps); g++) {
        size_t gap = gaps[g];
        for (size_t i = gap; i < n; i++) {
            skv_alloc_entry t = e[i];
            size_t j = i;
            while (j >= gap && entry_less(&t, &e[j - gap])) {
                e[j] = e[j - gap];
                j -= gap;
            }
            e[j] = t;
        }
    }
}

size_t skv__alloc_entries_normalize(skv_alloc_entry *e, size_t n)
{
    entries_sort(e, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].qty == 0)
            continue;
        if (k > 0 && e[k - 1].slot == e[i].slot &&
            e[k - 1].device == e[i].device) {
            /* Saturate: a sum this large fails the capacity check. */
            if (skv__add_overflow_i64(e[k - 1].qty, e[i].qty, &e[k - 1].qty))
                e[k - 1].qty = INT64_MAX;
            continue;
        }
        e[k++] = e[i];
    }
    return k;
}

static int entry_check(const skv_alloc_map *m, const skv_alloc_entry *e,
                       size_t i, int code, skv_error *err)
{
    if (e->slot >= m->nslots || e->device >= m->ndevs)
        return skv__err(err, code, "allocation entry %zu: slot %zu / device "
                        "%zu outside the map (%zu slots, %zu devices)", i,
                        e->slot, e->device, m->nslots, m->ndevs);
    const skv__alloc_slot *sl = &m->slots[e->slot];
    const char *id = m->devs[e->device].id;
    if (e->qty < 0 || e->qty > SKV_QTY_MAX || e->qty % sl->quantum != 0)
        return skv__err(err, code, "slot '%s' device '%s': invalid amount "
                        "%lld (quantum %lld)", sl->name, id,
                        (long long)e->qty, (long long)sl->quantum);
    return 0;
}

int skv__alloc_entries_check(const skv_alloc_map *m, const skv_alloc_entry *e,
                             size_t n, int code, skv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = entry_check(m, &e[i], i, code, err);
        if (rc)
            return rc;
        const skv__alloc_slot *sl = &m->slots[e[i].slot];
        size_t d = e[i].device;
        if (e[i].qty > sl->cap[d] - sl->used[d])
            return skv__err(err, code == SKV_EPROTO ? code : SKV_ENOSPC,
                            "slot '%s' device '%s': %lld more does not fit "
                            "(capacity %lld, in use %lld)", sl->name,
                            m->devs[d].id, (long long)e[i].qty,
                            (long long)sl->cap[d], (long long)sl->used[d]);
        /* Exclusivity: the device's current holders and every other entry
         * on the same device. Entries are few; quadratic is fine. */
        if (!sl->partners)
            continue;
        uint32_t held = m->devs[d].busy;
        for (size_t j = 0; j < n; j++)
            if (j != i && e[j].device == d && e[j].slot < m->nslots)
                held |= UINT32_C(1) << e[j].slot;
        if (held & sl->partners)
            return skv__err(err, code == SKV_EPROTO ? code : SKV_EBUSY,
                            "slot '%s' device '%s': the device is held "
                            "through an exclusive partner slot", sl->name,
                            m->devs[d].id);
    }
    return 0;
}

void skv__alloc_entries_apply(skv_alloc_map *m, const skv_alloc_entry *e,
                              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        skv__alloc_slot *sl = &m->slots[e[i].slot];
        sl->used[e[i].device] += e[i].qty;
        sl->total_used += e[i].qty;
        m->devs[e[i].device].busy |= UINT32_C(1) << e[i].slot;
    }
}

int skv_alloc_map_claim(skv_alloc_result **out, skv_alloc_map *map,
                        const skv_alloc_entry *entries, size_t n,
                        skv_error *err)
{
    if (!out || !map || (!entries && n))
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_claim: %s is NULL",
                        !out ? "out" : !map ? "map" : "entries");
    if (n > (size_t)SKV_ALLOC_MAP_SLOTS_MAX * SKV_ALLOC_MAP_DEVICES_MAX)
        return skv__err(err, SKV_EINVAL, "claim: %zu entries is more than a "
                        "map can hold", n);
    skv_alloc_result *r = skv__alloc_result_new(n);
    if (!r)
        return skv__err(err, SKV_ENOMEM, "claim: out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = entry_check(map, &entries[i], i, SKV_EINVAL, err);
        if (rc) {
            skv__free(r);
            return rc;
        }
        r->e[i] = entries[i];
    }
    r->count = skv__alloc_entries_normalize(r->e, n);
    int rc = skv__alloc_entries_check(map, r->e, r->count, SKV_EINVAL, err);
    if (rc) {
        skv__free(r);
        return rc;
    }
    skv__alloc_entries_apply(map, r->e, r->count);
    *out = r;
    return 0;
}
