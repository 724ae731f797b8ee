/* Array-valued fields: string lists, integer lists, key/value maps and
 * lists of structures. Counts are bounded by the field's maximum and (by
 * the reader) by the bytes left, before anything is allocated.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#define AT(base, off, T) ((T *)(void *)((char *)(base) + (off)))
#define CAT(base, off, T) ((T const *)(const void *)((const char *)(base) + (off)))

/* ---- lists ------------------------------------------------------------- */

int skv__proto_pack_strlist(skv__mpw *w, const skv__pfield *f, const void *base,
                        skv_error *err)
{
    char *const *v = *CAT(base, f->off, char **);
    size_t n = *CAT(base, f->count_off, size_t);
    if (n > f->max || !v)
        return skv__err(err, SKV_EINVAL, "%zu entries (at most %u)", n, f->max);
    msgpack_pack_array(&w->pk, n);
    for (size_t i = 0; i < n; i++) {
        int rc = skv__proto_check_str(v[i], f->max2, err);
        if (rc) {
            skv__err_prefix(err, "[%zu]", i);
            return rc;
        }
        skv__mpw_cstr(w, v[i]);
    }
    return 0;
}

int skv__proto_unpack_strlist(skv__mpr *r, const skv__pfield *f, void *base,
                          skv_error *err)
{
    uint32_t n;
    int rc = skv__mpr_array(r, &n, err);
    if (rc)
        return rc;
    if (n > f->max)
        return skv__err(err, SKV_EPROTO, "%u entries (at most %u)", n, f->max);
    if (n == 0)
        return 0;
    char **v = skv__calloc(n, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *AT(base, f->off, char **) = v;
    *AT(base, f->count_off, size_t) = n;
    for (uint32_t i = 0; i < n; i++) {
        rc = skv__proto_read_str(r, &v[i], f->max2, err);
        if (rc) {
            skv__err_prefix(err, "[%u]", i);
            return rc;
        }
    }
    return 0;
}

int skv__proto_pack_u32list(skv__mpw *w, const skv__pfield *f, const void *base,
                        skv_error *err)
{
    const uint32_t *v = *CAT(base, f->off, uint32_t *);
    size_t n = *CAT(base, f->count_off, size_t);
    if (n > f->max || !v)
        return skv__err(err, SKV_EINVAL, "%zu entries (at most %u)", n, f->max);
    msgpack_pack_array(&w->pk, n);
    for (size_t i = 0; i < n; i++)
        msgpack_pack_uint32(&w->pk, v[i]);
    return 0;
}

int skv__proto_unpack_u32list(skv__mpr *r, const skv__pfield *f, void *base,
                          skv_error *err)
{
    uint32_t n;
    int rc = skv__mpr_array(r, &n, err);
    if (rc)
        return rc;
    if (n > f->max)
        return skv__err(err, SKV_EPROTO, "%u entries (at most %u)", n, f->max);
    if (n == 0)
        return 0;
    uint32_t *v = skv__calloc(n, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *AT(base, f->off, uint32_t *) = v;
    *AT(base, f->count_off, size_t) = n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x;
        rc = skv__mpr_u64(r, &x, err);
        if (!rc && x > UINT32_MAX)
            rc = skv__err(err, SKV_EPROTO, "value %llu exceeds 32 bits",
                          (unsigned long long)x);
        if (rc) {
            skv__err_prefix(err, "[%u]", i);
            return rc;
        }
        v[i] = (uint32_t)x;
    }
    return 0;
}

int skv__proto_pack_list(skv__mpw *w, const skv__pfield *f, const void *base,
                     skv_error *err)
{
    const char *v = *CAT(base, f->off, const char *);
    size_t n = *CAT(base, f->count_off, size_t);
    if (n > f->max || !v)
        return skv__err(err, SKV_EINVAL, "%zu entries (at most %u)", n, f->max);
    msgpack_pack_array(&w->pk, n);
    for (size_t i = 0; i < n; i++) {
        int rc = skv__proto_pack(w, f->sub, v + i * f->sub->size, err);
        if (rc) {
            skv__err_prefix(err, "[%zu]", i);
            return rc;
        }
    }
    return 0;
}

int skv__proto_unpack_list(skv__mpr *r, const skv__pfield *f, void *base,
                       skv_error *err)
{
    uint32_t n;
    int rc = skv__mpr_array(r, &n, err);
    if (rc)
        return rc;
    if (n > f->max)
        return skv__err(err, SKV_EPROTO, "%u entries (at most %u)", n, f->max);
    if (n == 0)
        return 0;
    char *v = skv__calloc(n, f->sub->size);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    /* Zeroed elements are valid to release, so the count is set at once. */
    *AT(base, f->off, char *) = v;
    *AT(base, f->count_off, size_t) = n;
    for (uint32_t i = 0; i < n; i++) {
        rc = skv__proto_unpack(r, f->sub, v + (size_t)i * f->sub->size, err);
        if (rc) {
            skv__err_prefix(err, "[%u]", i);
            return rc;
        }
    }
    return 0;
}

/* ---- key/value maps -------------------------------------------------------- */

static int kv_cmp(const void *a, const void *b)
{
    const skv_proto_kv *x = *(const skv_proto_kv *const *)a;
    const skv_proto_kv *y = *(const skv_proto_kv *const *)b;
    return strcmp(x->key, y->key);
}

/* Duplicate keys make a map ambiguous: sort pointers, compare neighbours. */
static int kv_check_dups(const skv_proto_kv *v, size_t n, int code,
                         skv_error *err)
{
    if (n < 2)
        return 0;
    const skv_proto_kv **idx = skv__calloc(n, sizeof *idx);
    if (!idx)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        idx[i] = &v[i];
    qsort(idx, n, sizeof *idx, kv_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++)
        if (strcmp(idx[i - 1]->key, idx[i]->key) == 0)
            rc = skv__err(err, code, "duplicate key '%.64s'", idx[i]->key);
    skv__free(idx);
    return rc;
}

int skv__proto_pack_kvlist(skv__mpw *w, const skv__pfield *f, const void *base,
                           skv_error *err)
{
    const skv_proto_kv *v = *CAT(base, f->off, skv_proto_kv *);
    size_t n = *CAT(base, f->count_off, size_t);
    if (n > f->max || !v)
        return skv__err(err, SKV_EINVAL, "%zu entries (at most %u)", n, f->max);
    for (size_t i = 0; i < n; i++) {
        int rc = skv__proto_check_str(v[i].key, SKV__PROTO_KEY_MAX, err);
        if (!rc && !v[i].key[0])
            rc = skv__err(err, SKV_EINVAL, "empty key");
        if (!rc)
            rc = skv__proto_check_str(v[i].value, f->max2, err);
        if (rc) {
            skv__err_prefix(err, "[%zu]", i);
            return rc;
        }
    }
    int rc = kv_check_dups(v, n, SKV_EINVAL, err);
    if (rc)
        return rc;
    msgpack_pack_map(&w->pk, n);
    for (size_t i = 0; i < n; i++) {
        skv__mpw_cstr(w, v[i].key);
        skv__mpw_cstr(w, v[i].value);
    }
    return 0;
}

int skv__proto_unpack_kvlist(skv__mpr *r, const skv__pfield *f, void *base,
                             skv_error *err)
{
    uint32_t n;
    int rc = skv__mpr_map(r, &n, err);
    if (rc)
        return rc;
    if (n > f->max)
        return skv__err(err, SKV_EPROTO, "%u entries (at most %u)", n, f->max);
    if (n == 0)
        return 0;
    skv_proto_kv *v = skv__calloc(n, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *AT(base, f->off, skv_proto_kv *) = v;
    *AT(base, f->count_off, size_t) = n;
    for (uint32_t i = 0; i < n; i++) {
        rc = skv__proto_read_str(r, &v[i].key, SKV__PROTO_KEY_MAX, err);
        if (!rc && !v[i].key[0])
            rc = skv__err(err, SKV_EPROTO, "empty key");
        if (!rc)
            rc = skv__proto_read_str(r, &v[i].value, f->max2, err);
        if (rc) {
            skv__err_prefix(err, "entry %u", i);
            return rc;
        }
    }
    return kv_check_dups(v, n, SKV_EPROTO, err);
}
