/* Allocation maps: the whole map as msgpack, and its rebuilding from
 * untrusted bytes.
 *   ["skv-alloc-map", 1, strategy,
 *    [[name, kind, mode, quantum, group, flags], ...],
 *    [[id, numa, [capacity per slot], [used per slot]], ...]]
 * Rebuilding goes through the public builders, so a snapshot can describe
 * nothing that the API could not have built.
 * SPDX-License-Identifier: Apache-2.0 */
#include "alloc_internal.h"

#define MAGIC "skv-alloc-map"
#define FORMAT 1

static void put_slot(skv__mp_buf *b, const skv__alloc_slot *s)
{
    skv__mp_put_array(b, 6);
    skv__mp_put_str(b, s->name);
    skv__mp_put_int(b, s->kind);
    skv__mp_put_int(b, s->mode);
    skv__mp_put_int(b, s->quantum);
    skv__mp_put_int(b, s->group);
    skv__mp_put_int(b, s->flags);
}

int skv_alloc_map_snapshot(void **out_buf, size_t *out_len,
                           const skv_alloc_map *map, skv_error *err)
{
    if (!out_buf || !out_len || !map)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_snapshot: a required "
                        "argument is NULL");
    skv__mp_buf b = {0};
    skv__mp_put_array(&b, 5);
    skv__mp_put_str(&b, MAGIC);
    skv__mp_put_int(&b, FORMAT);
    skv__mp_put_int(&b, map->strategy);
    skv__mp_put_array(&b, (uint32_t)map->nslots);
    for (size_t s = 0; s < map->nslots; s++)
        put_slot(&b, &map->slots[s]);
    skv__mp_put_array(&b, (uint32_t)map->ndevs);
    for (size_t d = 0; d < map->ndevs; d++) {
        skv__mp_put_array(&b, 4);
        skv__mp_put_str(&b, map->devs[d].id);
        skv__mp_put_int(&b, map->devs[d].numa);
        skv__mp_put_array(&b, (uint32_t)map->nslots);
        for (size_t s = 0; s < map->nslots; s++)
            skv__mp_put_int(&b, map->slots[s].cap[d]);
        skv__mp_put_array(&b, (uint32_t)map->nslots);
        for (size_t s = 0; s < map->nslots; s++)
            skv__mp_put_int(&b, map->slots[s].used[d]);
    }
    return skv__mp_finish(out_buf, out_len, &b, err);
}

/* Turn a builder's error into SKV_EPROTO (memory stays ENOMEM). */
static int proto(skv_error *err, int rc)
{
    if (rc == 0 || rc == SKV_ENOMEM)
        return rc;
    if (err) {
        err->code = SKV_EPROTO;
        skv__err_prefix(err, "snapshot");
    }
    return SKV_EPROTO;
}

static int bad(skv_error *err, const char *what)
{
    return skv__err(err, SKV_EPROTO, "snapshot: %s", what);
}

static bool get_small(skv__mp_reader *r, int64_t lo, int64_t hi, int64_t *v)
{
    return skv__mp_get_int(r, v) && *v >= lo && *v <= hi;
}

static int read_slot(skv_alloc_map *m, skv__mp_reader *r, skv_error *err)
{
    uint32_t n;
    const char *s;
    size_t len;
    int64_t kind, mode, quantum, group, flags;
    char name[SKV_SLOT_NAME_MAX];
    if (!skv__mp_get_array(r, &n) || n != 6 || !skv__mp_get_str(r, &s, &len) ||
        len >= sizeof(name) || memchr(s, '\0', len) ||
        !get_small(r, 0, 16, &kind) ||
        !get_small(r, 0, 16, &mode) || !skv__mp_get_int(r, &quantum) ||
        !get_small(r, 0, UINT32_MAX, &group) ||
        !get_small(r, 0, UINT32_MAX, &flags))
        return bad(err, "malformed slot record");
    memcpy(name, s, len);
    name[len] = '\0';
    skv_alloc_slot_spec spec = SKV_ALLOC_SLOT_SPEC_INIT;
    spec.name = name;
    spec.kind = (skv_slot_kind)kind;
    spec.mode = (skv_alloc_mode)mode;
    spec.quantum = quantum;
    spec.exclusive_group = (unsigned)group;
    spec.flags = (unsigned)flags;
    if (quantum <= 0)
        return bad(err, "slot quantum must be positive");
    return proto(err, skv_alloc_map_add_slot(m, NULL, &spec, err));
}

static int read_usage(skv_alloc_map *m, size_t d, skv__mp_reader *r,
                      skv_error *err)
{
    uint32_t n;
    if (!skv__mp_get_array(r, &n) || n != m->nslots)
        return bad(err, "device usage is not one amount per slot");
    for (size_t s = 0; s < m->nslots; s++) {
        skv__alloc_slot *sl = &m->slots[s];
        int64_t u;
        if (!skv__mp_get_int(r, &u) || u < 0 || u > sl->cap[d] ||
            u % sl->quantum != 0)
            return skv__err(err, SKV_EPROTO, "snapshot: device '%s' slot "
                            "'%s': invalid usage", m->devs[d].id, sl->name);
        sl->used[d] = u;
        sl->total_used += u; /* <= total capacity */
        if (u)
            m->devs[d].busy |= UINT32_C(1) << s;
    }
    for (size_t s = 0; s < m->nslots; s++)
        if ((m->devs[d].busy >> s & 1u) &&
            (m->devs[d].busy & m->slots[s].partners))
            return skv__err(err, SKV_EPROTO, "snapshot: device '%s' is used "
                            "through exclusive slots at once", m->devs[d].id);
    return 0;
}

static int read_device(skv_alloc_map *m, skv__mp_reader *r, skv_error *err)
{
    uint32_t n;
    const char *s;
    size_t len, d;
    int64_t numa;
    char id[SKV_ALLOC_DEVICE_ID_MAX];
    if (!skv__mp_get_array(r, &n) || n != 4 || !skv__mp_get_str(r, &s, &len) ||
        len >= sizeof(id) || memchr(s, '\0', len) ||
        !get_small(r, -1, SKV_ALLOC_NUMA_MAX, &numa))
        return bad(err, "malformed device record");
    memcpy(id, s, len);
    id[len] = '\0';
    int rc = proto(err, skv_alloc_map_add_device(m, &d, id, (int)numa, err));
    if (rc)
        return rc;
    if (!skv__mp_get_array(r, &n) || n != m->nslots)
        return bad(err, "device capacity is not one amount per slot");
    for (size_t sl = 0; sl < m->nslots; sl++) {
        int64_t cap;
        if (!skv__mp_get_int(r, &cap))
            return bad(err, "malformed capacity");
        rc = proto(err, skv_alloc_map_set_capacity(m, d, m->slots[sl].name,
                                                   cap, err));
        if (rc)
            return rc;
    }
    return read_usage(m, d, r, err);
}

static int read_map(skv_alloc_map **out, skv__mp_reader *r, skv_error *err)
{
    uint32_t n;
    const char *s;
    size_t len;
    int64_t fmt, strategy;
    if (!skv__mp_get_array(r, &n) || n != 5 || !skv__mp_get_str(r, &s, &len) ||
        len != strlen(MAGIC) || memcmp(s, MAGIC, len) != 0)
        return bad(err, "not an allocation map snapshot");
    if (!skv__mp_get_int(r, &fmt) || fmt != FORMAT)
        return skv__err(err, SKV_EPROTO, "snapshot: unsupported format "
                        "(this library reads %d)", FORMAT);
    if (!get_small(r, SKV_ALLOC_FILL, SKV_ALLOC_INTERLEAVE, &strategy))
        return bad(err, "invalid strategy");
    skv_alloc_map_options o = SKV_ALLOC_MAP_OPTIONS_INIT;
    o.strategy = (skv_alloc_strategy)strategy;
    int rc = skv_alloc_map_new(out, &o, err);
    if (rc)
        return rc;
    if (!skv__mp_get_array(r, &n) || n > SKV_ALLOC_MAP_SLOTS_MAX)
        return bad(err, "malformed slot list");
    for (uint32_t i = 0; i < n && rc == 0; i++)
        rc = read_slot(*out, r, err);
    if (rc)
        return rc;
    if (!skv__mp_get_array(r, &n) || n > SKV_ALLOC_MAP_DEVICES_MAX)
        return bad(err, "malformed device list");
    for (uint32_t i = 0; i < n && rc == 0; i++)
        rc = read_device(*out, r, err);
    if (rc == 0 && r->left)
        rc = skv__err(err, SKV_EPROTO, "snapshot: %zu trailing bytes",
                      r->left);
    return rc;
}

int skv_alloc_map_restore(skv_alloc_map **out, const void *buf, size_t len,
                          skv_error *err)
{
    if (!out || (!buf && len))
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_restore: %s is NULL",
                        out ? "buf" : "out");
    skv_alloc_map *m = NULL;
    skv__mp_reader r = {buf, len};
    int rc = read_map(&m, &r, err);
    if (rc) {
        skv_alloc_map_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
