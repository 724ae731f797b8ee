/* Bounds-checked msgpack pull reader. Counts in map and array headers are
 * checked against the bytes left (every element needs at least one byte),
 * so no caller ever sizes an allocation from an unchecked count.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mp.h"

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static int truncated(skv_error *err)
{
    return skv__err(err, SKV_EPROTO, "truncated data");
}

static int wrong(skv_error *err, const char *want, uint8_t got)
{
    return skv__err(err, SKV_EPROTO, "expected %s, got msgpack byte 0x%02x",
                    want, got);
}

/* Read an n-byte big-endian length after the marker. */
static int take_len(skv__mpr *r, int n, uint32_t *out, skv_error *err)
{
    if (skv__mpr_left(r) < (size_t)n + 1)
        return truncated(err);
    *out = (uint32_t)be(r->p + 1, n);
    r->p += 1 + n;
    return 0;
}

bool skv__mpr_nil(skv__mpr *r)
{
    if (r->p < r->end && *r->p == 0xc0) {
        r->p++;
        return true;
    }
    return false;
}

static int container(skv__mpr *r, uint32_t *n, bool map, skv_error *err)
{
    if (r->p >= r->end)
        return truncated(err);
    uint8_t c = *r->p;
    int rc;
    if (map && (c & 0xf0) == 0x80) {
        *n = c & 0x0f;
        r->p++;
        rc = 0;
    } else if (!map && (c & 0xf0) == 0x90) {
        *n = c & 0x0f;
        r->p++;
        rc = 0;
    } else if (c == (map ? 0xde : 0xdc)) {
        rc = take_len(r, 2, n, err);
    } else if (c == (map ? 0xdf : 0xdd)) {
        rc = take_len(r, 4, n, err);
    } else {
        return wrong(err, map ? "a map" : "an array", c);
    }
    if (rc)
        return rc;
    uint64_t need = map ? (uint64_t)*n * 2 : *n;
    if (need > skv__mpr_left(r))
        return skv__err(err, SKV_EPROTO, "%s of %u entries in %zu bytes",
                        map ? "map" : "array", *n, skv__mpr_left(r));
    return 0;
}

int skv__mpr_map(skv__mpr *r, uint32_t *n, skv_error *err)
{
    return container(r, n, true, err);
}

int skv__mpr_array(skv__mpr *r, uint32_t *n, skv_error *err)
{
    return container(r, n, false, err);
}

static int blob(skv__mpr *r, const uint8_t **b, uint32_t *len, bool str,
                skv_error *err)
{
    if (r->p >= r->end)
        return truncated(err);
    uint8_t c = *r->p;
    int rc = 0;
    if (str && (c & 0xe0) == 0xa0) {
        *len = c & 0x1f;
        r->p++;
    } else if (c == (str ? 0xd9 : 0xc4)) {
        rc = take_len(r, 1, len, err);
    } else if (c == (str ? 0xda : 0xc5)) {
        rc = take_len(r, 2, len, err);
    } else if (c == (str ? 0xdb : 0xc6)) {
        rc = take_len(r, 4, len, err);
    } else {
        return wrong(err, str ? "a string" : "a byte string", c);
    }
    if (rc)
        return rc;
    if (*len > skv__mpr_left(r))
        return truncated(err);
    *b = r->p;
    r->p += *len;
    return 0;
}

int skv__mpr_str(skv__mpr *r, const char **s, uint32_t *len, skv_error *err)
{
    return blob(r, (const uint8_t **)s, len, true, err);
}

int skv__mpr_bin(skv__mpr *r, const uint8_t **b, uint32_t *len, skv_error *err)
{
    return blob(r, b, len, false, err);
}

/* Any integer: *neg tells whether it is a negative value in *mag form. */
static int any_int(skv__mpr *r, uint64_t *u, int64_t *s, bool *neg,
                   skv_error *err)
{
    if (r->p >= r->end)
        return truncated(err);
    uint8_t c = *r->p;
    static const struct { uint8_t m; int n; bool sgn; } fam[] = {
        {0xcc, 1, false}, {0xcd, 2, false}, {0xce, 4, false}, {0xcf, 8, false},
        {0xd0, 1, true}, {0xd1, 2, true}, {0xd2, 4, true}, {0xd3, 8, true}};
    if (c <= 0x7f || c >= 0xe0) {
        *s = (int8_t)c;
        *neg = *s < 0;
        *u = (uint64_t)(*neg ? 0 : *s);
        r->p++;
        return 0;
    }
    for (size_t i = 0; i < SKV__ARRAY_LEN(fam); i++) {
        if (c != fam[i].m)
            continue;
        if (skv__mpr_left(r) < (size_t)fam[i].n + 1)
            return truncated(err);
        uint64_t v = be(r->p + 1, fam[i].n);
        r->p += 1 + fam[i].n;
        if (fam[i].sgn) {
            int bits = fam[i].n * 8;
            if (bits < 64 && (v >> (bits - 1)))
                v |= ~0ULL << bits; /* sign-extend */
            memcpy(s, &v, sizeof v);
            *neg = *s < 0;
            *u = *neg ? 0 : (uint64_t)*s;
        } else {
            *u = v;
            *neg = false;
            *s = v > INT64_MAX ? INT64_MAX : (int64_t)v;
        }
        return 0;
    }
    return wrong(err, "an integer", c);
}

int skv__mpr_u64(skv__mpr *r, uint64_t *v, skv_error *err)
{
    int64_t s;
    bool neg;
    int rc = any_int(r, v, &s, &neg, err);
    if (!rc && neg)
        return skv__err(err, SKV_EPROTO, "negative value %lld where an "
                        "unsigned integer is expected", (long long)s);
    return rc;
}

int skv__mpr_i64(skv__mpr *r, int64_t *v, skv_error *err)
{
    uint64_t u;
    bool neg;
    int rc = any_int(r, &u, v, &neg, err);
    if (!rc && !neg && u > INT64_MAX)
        return skv__err(err, SKV_EPROTO, "integer %llu out of the signed "
                        "64-bit range", (unsigned long long)u);
    return rc;
}

int skv__mpr_bool(skv__mpr *r, bool *v, skv_error *err)
{
    if (r->p >= r->end)
        return truncated(err);
    if (*r->p != 0xc2 && *r->p != 0xc3)
        return wrong(err, "a boolean", *r->p);
    *v = *r->p == 0xc3;
    r->p++;
    return 0;
}
