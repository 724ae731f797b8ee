/* Field values of the generic engine: bounds are checked on both sides, so
 * the library never emits what it would refuse to read.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "skv_slots_msgpack.h"

#define AT(base, off, T) ((T *)(void *)((char *)(base) + (off)))
#define CAT(base, off, T) ((T const *)(const void *)((const char *)(base) + (off)))

/* An embedded structure is present when any of its fields is, so an
 * all-absent one is left out rather than failing its required checks. */
static bool struct_present(const skv__pdesc *d, const void *base)
{
    for (size_t i = 0; i < d->nfields; i++)
        if (skv__proto_field_present(&d->fields[i], base))
            return true;
    return false;
}

bool skv__proto_field_present(const skv__pfield *f, const void *base)
{
    switch (f->type) {
    case SKV__F_STR: return *CAT(base, f->off, char *) != NULL;
    case SKV__F_SLOTS: return *CAT(base, f->off, skv_slots *) != NULL;
    case SKV__F_I64: return *CAT(base, f->off, int64_t) != 0;
    case SKV__F_I32: return *CAT(base, f->off, int32_t) != 0;
    case SKV__F_U64: return *CAT(base, f->off, uint64_t) != 0;
    case SKV__F_U32: return *CAT(base, f->off, uint32_t) != 0;
    case SKV__F_BOOL: return *CAT(base, f->off, uint8_t) != 0;
    case SKV__F_STRUCT: return struct_present(f->sub, CAT(base, f->off, char));
    case SKV__F_BIN: case SKV__F_STRLIST: case SKV__F_U32LIST:
    case SKV__F_KVLIST: case SKV__F_LIST:
        return *CAT(base, f->count_off, size_t) != 0;
    }
    return false;
}

/* ---- strings ----------------------------------------------------------- */

int skv__proto_check_str(const char *s, uint32_t max, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "NULL string");
    size_t len = strnlen(s, (size_t)max + 1);
    if (len > max)
        return skv__err(err, SKV_EINVAL, "string longer than %u bytes", max);
    if (!skv__proto_utf8_valid(s, len))
        return skv__err(err, SKV_EINVAL, "string is not valid UTF-8");
    return 0;
}

/* A string from untrusted bytes: bounded, no embedded NUL, copied. */
int skv__proto_read_str(skv__mpr *r, char **out, uint32_t max, skv_error *err)
{
    const char *s;
    uint32_t len;
    int rc = skv__mpr_str(r, &s, &len, err);
    if (rc)
        return rc;
    if (len > max)
        return skv__err(err, SKV_EPROTO, "string of %u bytes exceeds %u",
                        len, max);
    if (memchr(s, 0, len))
        return skv__err(err, SKV_EPROTO, "string contains a NUL byte");
    if (!skv__proto_utf8_valid(s, len))
        return skv__err(err, SKV_EPROTO, "string is not valid UTF-8");
    *out = skv__strndup(s, len);
    return *out ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
}


/* ---- byte strings and slot vectors ------------------------------------------- */

static int unpack_bin(skv__mpr *r, const skv__pfield *f, void *base,
                      skv_error *err)
{
    const uint8_t *b;
    uint32_t len;
    int rc = skv__mpr_bin(r, &b, &len, err);
    if (rc)
        return rc;
    if (len > f->max)
        return skv__err(err, SKV_EPROTO, "%u bytes exceed %u", len, f->max);
    if (len == 0)
        return 0;
    uint8_t *copy = skv__malloc(len);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    memcpy(copy, b, len);
    *AT(base, f->off, uint8_t *) = copy;
    *AT(base, f->count_off, size_t) = len;
    return 0;
}

static int pack_bin(skv__mpw *w, const skv__pfield *f, const void *base,
                    skv_error *err)
{
    const uint8_t *b = *CAT(base, f->off, uint8_t *);
    size_t len = *CAT(base, f->count_off, size_t);
    if (len > f->max || !b)
        return skv__err(err, SKV_EINVAL, "%zu bytes (at most %u)", len, f->max);
    msgpack_pack_bin(&w->pk, len);
    msgpack_pack_bin_body(&w->pk, b, len);
    return 0;
}

/* The slot vector's bytes are measured with the bounds-checked skipper
 * first; only then does msgpack-c unpack that (complete, small) range, so
 * its allocations are proportional to bytes actually present. */
static int unpack_slots(skv__mpr *r, void *base, skv_error *err)
{
    skv__mpr probe = *r;
    uint32_t n;
    int rc = skv__mpr_map(&probe, &n, err);
    if (rc)
        return rc;
    if (n > SKV_SLOTS_DECODE_MAX)
        return skv__err(err, SKV_EPROTO, "slot vector of %u entries (at most "
                        "%d)", n, SKV_SLOTS_DECODE_MAX);
    const uint8_t *start = r->p;
    rc = skv__mpr_skip(r, err);
    if (rc)
        return rc;
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    msgpack_unpack_return ur = msgpack_unpack_next(
        &up, (const char *)start, (size_t)(r->p - start), &off);
    if (ur != MSGPACK_UNPACK_SUCCESS) {
        msgpack_unpacked_destroy(&up);
        return skv__err(err, SKV_EPROTO, "slot vector does not unpack");
    }
    skv_slots *s = NULL;
    rc = skv__slots_unpack(&s, &up.data, NULL, err);
    msgpack_unpacked_destroy(&up);
    if (rc)
        return rc; /* SKV_EPROTO (or ENOMEM) with the slots module's detail */
    *AT(base, 0, skv_slots *) = s;
    return 0;
}

/* ---- scalars ------------------------------------------------------------------ */

static int unpack_int(skv__mpr *r, const skv__pfield *f, void *base,
                      skv_error *err)
{
    int64_t s;
    uint64_t u;
    int rc;
    switch (f->type) {
    case SKV__F_I64:
        return skv__mpr_i64(r, AT(base, f->off, int64_t), err);
    case SKV__F_U64:
        return skv__mpr_u64(r, AT(base, f->off, uint64_t), err);
    case SKV__F_I32:
        rc = skv__mpr_i64(r, &s, err);
        if (!rc && (s < INT32_MIN || s > INT32_MAX))
            rc = skv__err(err, SKV_EPROTO, "%lld exceeds 32 bits", (long long)s);
        if (!rc)
            *AT(base, f->off, int32_t) = (int32_t)s;
        return rc;
    default: /* U32 */
        rc = skv__mpr_u64(r, &u, err);
        if (!rc && u > UINT32_MAX)
            rc = skv__err(err, SKV_EPROTO, "%llu exceeds 32 bits",
                          (unsigned long long)u);
        if (!rc)
            *AT(base, f->off, uint32_t) = (uint32_t)u;
        return rc;
    }
}

static int pack_scalar(skv__mpw *w, const skv__pfield *f, const void *base)
{
    switch (f->type) {
    case SKV__F_I64: msgpack_pack_int64(&w->pk, *CAT(base, f->off, int64_t)); break;
    case SKV__F_I32: msgpack_pack_int32(&w->pk, *CAT(base, f->off, int32_t)); break;
    case SKV__F_U64: msgpack_pack_uint64(&w->pk, *CAT(base, f->off, uint64_t)); break;
    case SKV__F_U32: msgpack_pack_uint32(&w->pk, *CAT(base, f->off, uint32_t)); break;
    default:
        if (*CAT(base, f->off, uint8_t))
            msgpack_pack_true(&w->pk);
        else
            msgpack_pack_false(&w->pk);
        break;
    }
    return 0;
}

/* ---- dispatch ----------------------------------------------------------------- */

int skv__proto_pack_field(skv__mpw *w, const skv__pfield *f, const void *base,
                          skv_error *err)
{
    int rc;
    switch (f->type) {
    case SKV__F_STR:
        rc = skv__proto_check_str(*CAT(base, f->off, char *), f->max, err);
        if (!rc)
            skv__mpw_cstr(w, *CAT(base, f->off, char *));
        return rc;
    case SKV__F_BIN: return pack_bin(w, f, base, err);
    case SKV__F_SLOTS:
        return skv__slots_pack(&w->pk, *CAT(base, f->off, skv_slots *), err);
    case SKV__F_STRLIST: return skv__proto_pack_strlist(w, f, base, err);
    case SKV__F_U32LIST: return skv__proto_pack_u32list(w, f, base, err);
    case SKV__F_KVLIST: return skv__proto_pack_kvlist(w, f, base, err);
    case SKV__F_LIST: return skv__proto_pack_list(w, f, base, err);
    case SKV__F_STRUCT: return skv__proto_pack(w, f->sub, CAT(base, f->off, char), err);
    default: return pack_scalar(w, f, base);
    }
}

int skv__proto_unpack_field(skv__mpr *r, const skv__pfield *f, void *base,
                            skv_error *err)
{
    bool b;
    int rc;
    switch (f->type) {
    case SKV__F_STR: return skv__proto_read_str(r, AT(base, f->off, char *), f->max, err);
    case SKV__F_BIN: return unpack_bin(r, f, base, err);
    case SKV__F_SLOTS: return unpack_slots(r, AT(base, f->off, char), err);
    case SKV__F_STRLIST: return skv__proto_unpack_strlist(r, f, base, err);
    case SKV__F_U32LIST: return skv__proto_unpack_u32list(r, f, base, err);
    case SKV__F_KVLIST: return skv__proto_unpack_kvlist(r, f, base, err);
    case SKV__F_LIST: return skv__proto_unpack_list(r, f, base, err);
    case SKV__F_STRUCT: return skv__proto_unpack(r, f->sub, AT(base, f->off, char), err);
    case SKV__F_BOOL:
        rc = skv__mpr_bool(r, &b, err);
        if (!rc)
            *AT(base, f->off, uint8_t) = b ? 1 : 0;
        return rc;
    default: return unpack_int(r, f, base, err);
    }
}

static void release_array(const skv__pfield *f, void *base)
{
    void **pp = AT(base, f->off, void *);
    size_t n = *AT(base, f->count_off, size_t);
    if (*pp && f->type == SKV__F_STRLIST)
        for (size_t i = 0; i < n; i++)
            skv__free(((char **)*pp)[i]);
    if (*pp && f->type == SKV__F_KVLIST) {
        for (size_t i = 0; i < n; i++) {
            skv__free(((skv_proto_kv *)*pp)[i].key);
            skv__free(((skv_proto_kv *)*pp)[i].value);
        }
    }
    if (*pp && f->type == SKV__F_LIST)
        for (size_t i = 0; i < n; i++)
            skv__proto_release(f->sub, (char *)*pp + i * f->sub->size);
    skv__free(*pp);
    *pp = NULL;
    *AT(base, f->count_off, size_t) = 0;
}

void skv__proto_release_field(const skv__pfield *f, void *base)
{
    switch (f->type) {
    case SKV__F_STR:
        skv__free(*AT(base, f->off, char *));
        *AT(base, f->off, char *) = NULL;
        return;
    case SKV__F_SLOTS:
        skv_slots_free(*AT(base, f->off, skv_slots *));
        *AT(base, f->off, skv_slots *) = NULL;
        return;
    case SKV__F_STRUCT:
        skv__proto_release(f->sub, AT(base, f->off, char));
        return;
    case SKV__F_BIN: case SKV__F_STRLIST: case SKV__F_U32LIST:
    case SKV__F_KVLIST: case SKV__F_LIST:
        release_array(f, base);
        return;
    default:
        return;
    }
}
