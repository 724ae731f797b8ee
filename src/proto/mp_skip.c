/* Skipping a msgpack value of any type, for unknown keys (newer peers) and
 * for measuring embedded values. Iterative with a pending-item counter:
 * hostile nesting cannot exhaust the stack, and since every item consumes
 * at least one byte the loop is linear in the input.
 * SPDX-License-Identifier: Apache-2.0 */
#include "mp.h"

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Payload bytes after the marker for fixed-size types; -1 when variable. */
static int fixed_payload(uint8_t c)
{
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return 0;
    switch (c) {
    case 0xcc: case 0xd0: return 1;
    case 0xcd: case 0xd1: return 2;
    case 0xca: case 0xce: case 0xd2: return 4;
    case 0xcb: case 0xcf: case 0xd3: return 8;
    case 0xd4: return 2;  /* fixext: type byte + data */
    case 0xd5: return 3;
    case 0xd6: return 5;
    case 0xd7: return 9;
    case 0xd8: return 17;
    default: return -1;
    }
}

/* For variable types: size of the length field, whether the length counts
 * child items (and how many per unit), and extra bytes (ext type). */
static int variable(uint8_t c, int *lenbytes, int *per_item, int *extra,
                    uint64_t *inline_len)
{
    *extra = 0;
    *per_item = 0;
    *lenbytes = 0;
    if ((c & 0xf0) == 0x80) { *per_item = 2; *inline_len = c & 0x0f; return 0; }
    if ((c & 0xf0) == 0x90) { *per_item = 1; *inline_len = c & 0x0f; return 0; }
    if ((c & 0xe0) == 0xa0) { *inline_len = c & 0x1f; return 0; }
    switch (c) {
    case 0xc4: case 0xd9: *lenbytes = 1; return 0;
    case 0xc5: case 0xda: *lenbytes = 2; return 0;
    case 0xc6: case 0xdb: *lenbytes = 4; return 0;
    case 0xc7: *lenbytes = 1; *extra = 1; return 0;
    case 0xc8: *lenbytes = 2; *extra = 1; return 0;
    case 0xc9: *lenbytes = 4; *extra = 1; return 0;
    case 0xdc: *lenbytes = 2; *per_item = 1; return 0;
    case 0xdd: *lenbytes = 4; *per_item = 1; return 0;
    case 0xde: *lenbytes = 2; *per_item = 2; return 0;
    case 0xdf: *lenbytes = 4; *per_item = 2; return 0;
    default: return -1;
    }
}

static int skip_one(skv__mpr *r, uint64_t *pending, skv_error *err)
{
    uint8_t c = *r->p++;
    int fixed = fixed_payload(c);
    if (fixed >= 0) {
        if (skv__mpr_left(r) < (size_t)fixed)
            return skv__err(err, SKV_EPROTO, "truncated data");
        r->p += fixed;
        return 0;
    }
    int lenbytes, per_item, extra;
    uint64_t len = 0;
    if (variable(c, &lenbytes, &per_item, &extra, &len) != 0)
        return skv__err(err, SKV_EPROTO, "invalid msgpack byte 0x%02x", c);
    if (skv__mpr_left(r) < (size_t)lenbytes)
        return skv__err(err, SKV_EPROTO, "truncated data");
    if (lenbytes) {
        len = be(r->p, lenbytes);
        r->p += lenbytes;
    }
    if (per_item) {
        if (len * (uint64_t)per_item > skv__mpr_left(r))
            return skv__err(err, SKV_EPROTO, "container of %llu entries in "
                            "%zu bytes", (unsigned long long)len,
                            skv__mpr_left(r));
        *pending += len * (uint64_t)per_item;
        return 0;
    }
    if (len + (uint64_t)extra > skv__mpr_left(r))
        return skv__err(err, SKV_EPROTO, "truncated data");
    r->p += len + (uint64_t)extra;
    return 0;
}

int skv__mpr_skip(skv__mpr *r, skv_error *err)
{
    uint64_t pending = 1;
    while (pending) {
        if (r->p >= r->end)
            return skv__err(err, SKV_EPROTO, "truncated data");
        pending--;
        int rc = skip_one(r, &pending, err);
        if (rc)
            return rc;
    }
    return 0;
}
