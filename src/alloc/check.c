/* Allocation maps: request validation and the feasibility check.
 * Nothing here allocates or writes to the map: check may run on a map that
 * other threads read at the same time.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "alloc_internal.h"

#define BITMAP_WORDS (SKV_ALLOC_MAP_DEVICES_MAX / 64)

static int subset_check(const skv_alloc_map *m, const size_t *dev, size_t n,
                        skv_error *err)
{
    uint64_t seen[BITMAP_WORDS] = {0};
    for (size_t i = 0; i < n; i++) {
        if (dev[i] >= m->ndevs)
            return skv__err(err, SKV_EINVAL, "constraints: device index %zu "
                            "out of range (map has %zu devices)", dev[i],
                            m->ndevs);
        uint64_t bit = UINT64_C(1) << (dev[i] % 64);
        if (seen[dev[i] / 64] & bit)
            return skv__err(err, SKV_EINVAL, "constraints: device '%s' listed "
                            "twice", m->devs[dev[i]].id);
        seen[dev[i] / 64] |= bit;
    }
    return 0;
}

static int prefer_check(const int *p, size_t n, skv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] < -1 || p[i] > SKV_ALLOC_NUMA_MAX)
            return skv__err(err, SKV_EINVAL, "constraints: preferred NUMA node "
                            "%d outside -1..%d", p[i], SKV_ALLOC_NUMA_MAX);
        for (size_t j = 0; j < i; j++)
            if (p[j] == p[i])
                return skv__err(err, SKV_EINVAL, "constraints: preferred NUMA "
                                "node %d listed twice", p[i]);
    }
    return 0;
}

int skv__alloc_ctx_init(skv__alloc_ctx *ctx, const skv_alloc_map *m,
                        const skv_alloc_constraints *c, skv_error *err)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->strategy = m->strategy;
    if (!c)
        return 0;
    if (c->version != SKV_ALLOC_CONSTRAINTS_VERSION)
        return skv__err(err, SKV_EVERSION, "allocation constraints: version "
                        "%u, this library knows %u", c->version,
                        SKV_ALLOC_CONSTRAINTS_VERSION);
    if (c->strategy != SKV_ALLOC_DEFAULT) {
        if (c->strategy != SKV_ALLOC_FILL && c->strategy != SKV_ALLOC_EVENLY &&
            c->strategy != SKV_ALLOC_INTERLEAVE)
            return skv__err(err, SKV_EINVAL, "constraints: invalid strategy "
                            "%d", (int)c->strategy);
        ctx->strategy = c->strategy;
    }
    unsigned known = SKV_ALLOC_ONE_DEVICE | SKV_ALLOC_ANTIFRAG;
    if (c->flags & ~known)
        return skv__err(err, SKV_EINVAL, "constraints: unknown flags 0x%x",
                        c->flags & ~known);
    if (!c->devices && c->device_count)
        return skv__err(err, SKV_EINVAL, "constraints: device_count %zu "
                        "without a device list", c->device_count);
    if ((!c->numa_prefer && c->numa_prefer_count) ||
        (!c->numa_mask && c->numa_mask_words))
        return skv__err(err, SKV_EINVAL, "constraints: a NUMA count without "
                        "its array");
    int rc = c->devices ? subset_check(m, c->devices, c->device_count, err) : 0;
    if (rc == 0)
        rc = prefer_check(c->numa_prefer, c->numa_prefer_count, err);
    if (rc)
        return rc;
    ctx->flags = c->flags;
    ctx->mask = c->numa_mask;
    ctx->mask_words = c->numa_mask_words;
    ctx->prefer = c->numa_prefer;
    ctx->nprefer = c->numa_prefer_count;
    ctx->subset = c->devices;
    ctx->nsubset = c->devices ? c->device_count : 0;
    return 0;
}

int skv__alloc_validate_qty(const skv_alloc_map *m, size_t slot, skv_qty qty,
                            skv_error *err)
{
    const skv__alloc_slot *s = &m->slots[slot];
    char txt[SKV_QTY_FORMAT_MAX], qt[SKV_QTY_FORMAT_MAX];
    if (qty == SKV_QTY_UNLIMITED)
        return skv__err(err, SKV_EINVAL, "slot '%s': cannot allocate an "
                        "unlimited amount", s->name);
    if (qty < 0)
        return skv__err(err, SKV_EINVAL, "slot '%s': negative amount %lld",
                        s->name, (long long)qty);
    if (s->kind == SKV_SLOT_UNIQUE && qty != 0 && qty != SKV_QTY_SCALE) {
        skv_qty_format(txt, sizeof(txt), qty, SKV_SLOT_COUNT);
        return skv__err(err, SKV_EINVAL, "slot '%s' is unique: request 1, "
                        "not %s", s->name, txt);
    }
    if (qty % s->quantum != 0) {
        skv_slot_kind k = s->kind == SKV_SLOT_BYTES ? SKV_SLOT_BYTES
                                                    : SKV_SLOT_COUNT;
        skv_qty_format(txt, sizeof(txt), qty, k);
        skv_qty_format(qt, sizeof(qt), s->quantum, k);
        return skv__err(err, SKV_EINVAL, "slot '%s': %s is finer than the %s "
                        "quantum", s->name, txt, qt);
    }
    return 0;
}

static int want_add(skv__alloc_want *w, size_t *n, uint32_t *seen,
                    const skv_alloc_map *m, size_t slot, skv_qty qty,
                    skv_error *err)
{
    int rc = skv__alloc_validate_qty(m, slot, qty, err);
    if (rc || qty == 0)
        return rc;
    uint32_t clash = *seen & m->slots[slot].partners;
    if (clash) {
        size_t other = (size_t)__builtin_ctz(clash);
        return skv__err(err, SKV_EINVAL, "slots '%s' and '%s' are mutually "
                        "exclusive and cannot be requested together",
                        m->slots[other].name, m->slots[slot].name);
    }
    *seen |= UINT32_C(1) << slot;
    /* Insertion by slot index keeps the result's entry order. */
    size_t i = *n;
    while (i > 0 && w[i - 1].slot > slot) {
        w[i] = w[i - 1];
        i--;
    }
    w[i] = (skv__alloc_want){slot, qty};
    (*n)++;
    return 0;
}

int skv__alloc_request_wants(skv__alloc_want wants[SKV_ALLOC_MAP_SLOTS_MAX],
                             size_t *n, const skv_alloc_map *m,
                             const skv_slots *request, skv_error *err)
{
    *n = 0;
    uint32_t seen = 0;
    size_t count = skv_slots_count(request);
    for (size_t i = 0; i < count; i++) {
        const char *name;
        skv_slot_kind kind;
        skv_qty qty;
        skv_slots_at(request, i, &name, &kind, &qty);
        long s = skv__alloc_slot_find(m, name);
        if (s < 0)
            return skv__err(err, SKV_EINVAL, "slot '%s' is not in this "
                            "allocation map", name);
        if (kind != m->slots[s].kind)
            return skv__err(err, SKV_EINVAL, "slot '%s': requested as %s, the "
                            "map holds %s", name, skv_slot_kind_name(kind),
                            skv_slot_kind_name(m->slots[s].kind));
        int rc = want_add(wants, n, &seen, m, (size_t)s, qty, err);
        if (rc)
            return rc;
    }
    return 0;
}

static void eligible_free(const skv_alloc_map *m, size_t s, size_t d,
                          const skv__alloc_ctx *ctx, skv_qty *sum,
                          skv_qty *max)
{
    if (!skv__alloc_slot_open(m, s, d) ||
        !skv__alloc_numa_ok(ctx, m->devs[d].numa))
        return;
    skv_qty f = skv__alloc_free_at(&m->slots[s], d);
    *sum += f; /* bounded by the slot's total capacity */
    if (f > *max)
        *max = f;
}

int skv__alloc_fits(const skv_alloc_map *m, const skv__alloc_want *w,
                    const skv__alloc_ctx *ctx, skv_error *err)
{
    const skv__alloc_slot *s = &m->slots[w->slot];
    char a[SKV_QTY_FORMAT_MAX], b[SKV_QTY_FORMAT_MAX];
    skv_slot_kind k = s->kind == SKV_SLOT_BYTES ? SKV_SLOT_BYTES
                                                : SKV_SLOT_COUNT;
    if (w->qty > s->total_cap) {
        if (!err) /* the scheduler probes many maps: skip the formatting */
            return SKV_ERANGE;
        skv_qty_format(a, sizeof(a), w->qty, k);
        skv_qty_format(b, sizeof(b), s->total_cap, k);
        return skv__err(err, SKV_ERANGE, "slot '%s': %s requested, the map's "
                        "total capacity is %s", s->name, a, b);
    }
    skv_qty sum = 0, max = 0;
    if (ctx->subset) {
        for (size_t i = 0; i < ctx->nsubset; i++)
            eligible_free(m, w->slot, ctx->subset[i], ctx, &sum, &max);
    } else {
        for (size_t d = 0; d < m->ndevs; d++)
            eligible_free(m, w->slot, d, ctx, &sum, &max);
    }
    bool one = ctx->flags & SKV_ALLOC_ONE_DEVICE;
    skv_qty have = one ? max : sum;
    if (have >= w->qty)
        return 0;
    if (!err)
        return SKV_ENOSPC;
    skv_qty_format(a, sizeof(a), w->qty, k);
    skv_qty_format(b, sizeof(b), have, k);
    return skv__err(err, SKV_ENOSPC, "slot '%s': %s requested, %s available%s",
                    s->name, a, b, one ? " on a single device" : "");
}

static int check_prepare(skv__alloc_ctx *ctx, const skv_alloc_map *map,
                         const skv_alloc_constraints *c, skv_error *err)
{
    if (!map)
        return skv__err(err, SKV_EINVAL, "allocation map is NULL");
    return skv__alloc_ctx_init(ctx, map, c, err);
}

int skv_alloc_map_check(const skv_alloc_map *map, const skv_slots *request,
                        const skv_alloc_constraints *c, skv_error *err)
{
    skv__alloc_ctx ctx;
    int rc = check_prepare(&ctx, map, c, err);
    if (rc)
        return rc;
    if (!request)
        return skv__err(err, SKV_EINVAL, "skv_alloc_map_check: request is "
                        "NULL");
    skv__alloc_want w[SKV_ALLOC_MAP_SLOTS_MAX];
    size_t n;
    rc = skv__alloc_request_wants(w, &n, map, request, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = skv__alloc_fits(map, &w[i], &ctx, err);
    return rc;
}

int skv_alloc_map_check_slot(const skv_alloc_map *map, size_t slot,
                             skv_qty qty, const skv_alloc_constraints *c,
                             skv_error *err)
{
    skv__alloc_ctx ctx;
    int rc = check_prepare(&ctx, map, c, err);
    if (rc)
        return rc;
    if (slot >= map->nslots)
        return skv__err(err, SKV_EINVAL, "slot index %zu is not in this "
                        "allocation map (%zu slots)", slot, map->nslots);
    rc = skv__alloc_validate_qty(map, slot, qty, err);
    if (rc || qty == 0)
        return rc;
    skv__alloc_want w = {slot, qty};
    return skv__alloc_fits(map, &w, &ctx, err);
}
