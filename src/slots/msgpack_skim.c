/* A bounded pre-check of untrusted msgpack bytes, run before msgpack-c's
 * unpacker sees them.
 *
 * Why: msgpack-c allocates count * sizeof(msgpack_object) as soon as it reads
 * an array or map header, so a 5-byte "array of 4 billion" header asks for
 * ~100 GB. This walk only reads headers: it checks that every declared
 * element can still be backed by at least one byte of input, so the objects
 * msgpack-c will allocate are bounded by the input length.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_slots_msgpack.h"
#include "slots_internal.h"

static uint64_t read_be(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Decode one header at p[0..avail): payload bytes to skip and number of
 * child objects. Returns the header size, 0 when truncated, -1 when the
 * type byte is invalid. */
static int header(const unsigned char *p, size_t avail, uint64_t *skip,
                  uint64_t *children)
{
    unsigned char t = p[0];
    unsigned lenbytes = 0, extra = 0, mul = 0; /* mul: 1 array, 2 map */
    *skip = 0;
    *children = 0;
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
        return 1;
    if (t <= 0x8f) {
        *children = 2u * (t & 0x0fu);
        return 1;
    }
    if (t <= 0x9f) {
        *children = t & 0x0fu;
        return 1;
    }
    if (t <= 0xbf) {
        *skip = t & 0x1fu;
        return 1;
    }
    switch (t) {
    case 0xc4: case 0xc5: case 0xc6: lenbytes = 1u << (t - 0xc4); break;
    case 0xc7: case 0xc8: case 0xc9: lenbytes = 1u << (t - 0xc7); extra = 1; break;
    case 0xca: *skip = 4; return 1;
    case 0xcb: *skip = 8; return 1;
    case 0xcc: case 0xcd: case 0xce: case 0xcf: *skip = 1u << (t - 0xcc); return 1;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: *skip = 1u << (t - 0xd0); return 1;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        *skip = 1 + (1u << (t - 0xd4));
        return 1;
    case 0xd9: case 0xda: case 0xdb: lenbytes = 1u << (t - 0xd9); break;
    case 0xdc: lenbytes = 2; mul = 1; break;
    case 0xdd: lenbytes = 4; mul = 1; break;
    case 0xde: lenbytes = 2; mul = 2; break;
    case 0xdf: lenbytes = 4; mul = 2; break;
    default: return -1; /* 0xc1 is never used */
    }
    if (avail < 1 + (size_t)lenbytes)
        return 0;
    uint64_t n = read_be(p + 1, lenbytes);
    if (mul)
        *children = n * mul;
    else
        *skip = n + extra;
    return (int)(1 + lenbytes);
}

/* Open containers: elements each still expects. */
struct nesting {
    uint64_t left[SKV__MSGPACK_DEPTH_MAX];
    size_t depth;
};

/* One object was read; it opens a container when children > 0. */
static int nest(struct nesting *n, uint64_t children, size_t at,
                skv_error *err)
{
    if (n->depth)
        n->left[n->depth - 1]--;
    if (children) {
        if (n->depth == SKV__MSGPACK_DEPTH_MAX)
            return skv__err(err, SKV_EPROTO, "msgpack containers nested "
                            "deeper than %d at byte %zu",
                            SKV__MSGPACK_DEPTH_MAX, at);
        n->left[n->depth++] = children;
    }
    while (n->depth && n->left[n->depth - 1] == 0)
        n->depth--;
    return 0;
}

int skv__slots_msgpack_skim(size_t *end_out, const void *buf, size_t len,
                            skv_error *err)
{
    const unsigned char *p = buf;
    size_t off = 0;
    uint64_t pending = 1; /* objects still to read; msgpack is prefix-coded */
    struct nesting n = {{0}, 0};
    if (!end_out || (!buf && len))
        return skv__err(err, SKV_EINVAL, "msgpack skim: NULL argument");
    while (pending) {
        if (off >= len)
            return skv__err(err, SKV_EPROTO, "msgpack data truncated at "
                            "byte %zu", off);
        uint64_t skip, children;
        int h = header(p + off, len - off, &skip, &children);
        if (h < 0)
            return skv__err(err, SKV_EPROTO, "invalid msgpack type byte "
                            "0x%02x at byte %zu", p[off], off);
        if (h == 0)
            return skv__err(err, SKV_EPROTO, "msgpack data truncated at "
                            "byte %zu", off);
        size_t at = off;
        off += (size_t)h;
        if (skip > len - off)
            return skv__err(err, SKV_EPROTO, "msgpack data truncated: %llu "
                            "payload bytes declared at byte %zu, %zu left",
                            (unsigned long long)skip, off - (size_t)h,
                            len - off);
        off += (size_t)skip;
        pending = pending - 1 + children;
        if (pending > len - off)
            return skv__err(err, SKV_EPROTO, "msgpack container declares "
                            "more elements than the %zu bytes left", len - off);
        if (nest(&n, children, at, err))
            return SKV_EPROTO;
    }
    *end_out = off;
    return 0;
}
