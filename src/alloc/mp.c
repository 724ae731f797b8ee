/* Allocation maps: msgpack writing (through msgpack-c's packer into a buffer
 * from the library's allocator) and a pull reader for untrusted bytes.
 *
 * The reader is our own because msgpack-c's unpacker reserves memory for
 * the element count an array header declares before reading the elements:
 * a five-byte hostile header could make it reserve gigabytes. Pulling values
 * one at a time allocates nothing and bounds every count by the bytes left.
 * SPDX-License-Identifier: Apache-2.0 */
#include <msgpack.h>

#include "alloc_internal.h"

static int buf_write(void *data, const char *p, size_t n)
{
    skv__mp_buf *b = data;
    if (b->failed)
        return -1;
    if (n > SIZE_MAX - b->len) {
        b->failed = true;
        return -1;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        char *d = skv__realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return -1;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void skv__mp_put_array(skv__mp_buf *b, uint32_t n)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, b, buf_write);
    msgpack_pack_array(&pk, n);
}

void skv__mp_put_int(skv__mp_buf *b, int64_t v)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, b, buf_write);
    msgpack_pack_int64(&pk, v);
}

void skv__mp_put_str(skv__mp_buf *b, const char *s)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, b, buf_write);
    size_t n = strlen(s);
    msgpack_pack_str(&pk, n);
    msgpack_pack_str_body(&pk, s, n);
}

int skv__mp_finish(void **out, size_t *out_len, skv__mp_buf *b,
                   skv_error *err)
{
    if (b->failed) {
        skv__free(b->data);
        return skv__err(err, SKV_ENOMEM, "encoding: out of memory");
    }
    *out = b->data;
    *out_len = b->len;
    return 0;
}

/* Big-endian unsigned integer of n bytes; false when truncated. */
static bool take_be(skv__mp_reader *r, size_t n, uint64_t *v)
{
    if (r->left < n)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x = (x << 8) | r->p[i];
    r->p += n;
    r->left -= n;
    *v = x;
    return true;
}

static bool take_tag(skv__mp_reader *r, unsigned char *tag)
{
    if (r->left == 0)
        return false;
    *tag = *r->p++;
    r->left--;
    return true;
}

bool skv__mp_get_array(skv__mp_reader *r, uint32_t *n)
{
    unsigned char t;
    uint64_t v;
    skv__mp_reader save = *r;
    if (!take_tag(r, &t))
        return false;
    if ((t & 0xf0) == 0x90)
        v = t & 0x0f;
    else if (t == 0xdc ? !take_be(r, 2, &v) : t == 0xdd ? !take_be(r, 4, &v)
                                                         : true) {
        *r = save;
        return false;
    }
    /* Every element takes at least one byte. */
    if (v > r->left) {
        *r = save;
        return false;
    }
    *n = (uint32_t)v;
    return true;
}

bool skv__mp_get_int(skv__mp_reader *r, int64_t *out)
{
    unsigned char t;
    uint64_t v;
    skv__mp_reader save = *r;
    if (!take_tag(r, &t))
        return false;
    if (t <= 0x7f) {
        *out = t;
        return true;
    }
    if (t >= 0xe0) {
        *out = (int64_t)(int8_t)t;
        return true;
    }
    static const size_t width[] = {1, 2, 4, 8};
    bool ok = false;
    if (t >= 0xcc && t <= 0xcf) {          /* uint 8..64 */
        ok = take_be(r, width[t - 0xcc], &v) && v <= INT64_MAX;
        if (ok)
            *out = (int64_t)v;
    } else if (t >= 0xd0 && t <= 0xd3) {   /* int 8..64 */
        size_t w = width[t - 0xd0];
        ok = take_be(r, w, &v);
        if (ok) {
            unsigned shift = (unsigned)(64 - 8 * w);
            /* Sign-extend through the unsigned type, then convert. */
            uint64_t ext = shift ? (v << shift) : v;
            *out = (int64_t)ext;
            if (shift)
                *out /= (int64_t)1 << shift;
        }
    }
    if (!ok)
        *r = save;
    return ok;
}

bool skv__mp_get_str(skv__mp_reader *r, const char **s, size_t *len)
{
    unsigned char t;
    uint64_t v;
    skv__mp_reader save = *r;
    if (!take_tag(r, &t))
        return false;
    bool ok = true;
    if ((t & 0xe0) == 0xa0)
        v = t & 0x1f;
    else if (t >= 0xd9 && t <= 0xdb)
        ok = take_be(r, (size_t)1 << (t - 0xd9), &v);
    else
        ok = false;
    if (!ok || v > r->left) {
        *r = save;
        return false;
    }
    *s = (const char *)r->p;
    *len = (size_t)v;
    r->p += v;
    r->left -= v;
    return true;
}
