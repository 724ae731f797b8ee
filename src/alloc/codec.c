/* Allocation maps: results by name (for an agent's records) and encoded as
 * msgpack [[slot, device id, qty], ...].
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

int skv_alloc_result_encode(void **out_buf, size_t *out_len,
                            const skv_alloc_map *map, const skv_alloc_result *r,
                            skv_error *err)
{
    if (!out_buf || !out_len || !map || !r)
        return skv__err(err, SKV_EINVAL, "skv_alloc_result_encode: a "
                        "required argument is NULL");
    for (size_t i = 0; i < r->count; i++)
        if (r->e[i].slot >= map->nslots || r->e[i].device >= map->ndevs)
            return skv__err(err, SKV_EINVAL, "allocation entry %zu is "
                            "outside this map", i);
    skv__mp_buf b = {0};
    skv__mp_put_array(&b, (uint32_t)r->count);
    for (size_t i = 0; i < r->count; i++) {
        skv__mp_put_array(&b, 3);
        skv__mp_put_str(&b, map->slots[r->e[i].slot].name);
        skv__mp_put_str(&b, map->devs[r->e[i].device].id);
        skv__mp_put_int(&b, r->e[i].qty);
    }
    return skv__mp_finish(out_buf, out_len, &b, err);
}

/* Copy a length-delimited name into buf (NUL-terminated); false when too
 * long or it holds a NUL. */
static bool name_copy(char *buf, size_t bufsz, const char *s, size_t n)
{
    if (n >= bufsz || memchr(s, '\0', n))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static int entry_decode(skv_alloc_entry *e, skv__mp_reader *r,
                        const skv_alloc_map *m, size_t i, skv_error *err)
{
    uint32_t n;
    const char *s, *id;
    size_t slen, idlen;
    int64_t q;
    if (!skv__mp_get_array(r, &n) || n != 3 || !skv__mp_get_str(r, &s, &slen) ||
        !skv__mp_get_str(r, &id, &idlen) || !skv__mp_get_int(r, &q))
        return skv__err(err, SKV_EPROTO, "allocation record: entry %zu is "
                        "not [slot, device, qty]", i);
    char name[SKV_SLOT_NAME_MAX], dev[SKV_ALLOC_DEVICE_ID_MAX];
    long slot = name_copy(name, sizeof(name), s, slen)
                    ? skv__alloc_slot_find(m, name) : -1;
    if (slot < 0)
        return skv__err(err, SKV_EPROTO, "allocation record: entry %zu names "
                        "a slot this map lacks", i);
    size_t d;
    if (!name_copy(dev, sizeof(dev), id, idlen) ||
        skv_alloc_map_device_index(m, dev, &d) != 0)
        return skv__err(err, SKV_EPROTO, "allocation record: entry %zu names "
                        "a device this map lacks", i);
    const skv__alloc_slot *sl = &m->slots[slot];
    if (q <= 0 || q > sl->cap[d] || q % sl->quantum != 0)
        return skv__err(err, SKV_EPROTO, "allocation record: entry %zu "
                        "(slot '%s', device '%s') has an invalid amount", i,
                        sl->name, dev);
    *e = (skv_alloc_entry){(size_t)slot, d, q};
    return 0;
}

int skv_alloc_result_decode(skv_alloc_result **out, const skv_alloc_map *map,
                            const void *buf, size_t len, skv_error *err)
{
    if (!out || !map || (!buf && len))
        return skv__err(err, SKV_EINVAL, "skv_alloc_result_decode: a "
                        "required argument is NULL");
    skv__mp_reader r = {buf, len};
    uint32_t n;
    if (!skv__mp_get_array(&r, &n))
        return skv__err(err, SKV_EPROTO, "allocation record: not an array");
    skv_alloc_result *res = skv__alloc_result_new(n);
    if (!res)
        return skv__err(err, SKV_ENOMEM, "allocation record: out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = entry_decode(&res->e[i], &r, map, i, err);
        if (rc) {
            skv__free(res);
            return rc;
        }
    }
    if (r.left) {
        skv__free(res);
        return skv__err(err, SKV_EPROTO, "allocation record: %zu trailing "
                        "bytes", r.left);
    }
    res->count = skv__alloc_entries_normalize(res->e, n);
    for (size_t i = 0; i < res->count; i++) {
        const skv_alloc_entry *e = &res->e[i];
        if (e->qty > map->slots[e->slot].cap[e->device]) {
            skv__free(res);
            return skv__err(err, SKV_EPROTO, "allocation record: slot '%s' "
                            "device '%s' exceeds the capacity",
                            map->slots[e->slot].name, map->devs[e->device].id);
        }
    }
    *out = res;
    return 0;
}

int skv_alloc_map_claim_encoded(skv_alloc_result **out, skv_alloc_map *map,
                                const void *buf, size_t len, skv_error *err)
{
    if (!out || !map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_claim_encoded: %s is "
                        "NULL", out ? "map" : "out");
    skv_alloc_result *r = NULL;
    int rc = skv_alloc_result_decode(&r, map, buf, len, err);
    if (rc)
        return rc;
    rc = skv__alloc_entries_check(map, r->e, r->count, SKV_EINVAL, err);
    if (rc) {
        skv__free(r);
        return rc;
    }
    skv__alloc_entries_apply(map, r->e, r->count);
    *out = r;
    return 0;
}
