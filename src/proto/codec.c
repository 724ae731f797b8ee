/* The generic body engine: a struct described by a field table is a
 * msgpack map from field keys to values. Absent fields (NULL strings,
 * empty arrays, zero numbers) are left out; unknown keys are skipped so
 * newer peers can add fields; duplicate keys are refused.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

int skv__proto_pack(skv__mpw *w, const skv__pdesc *d, const void *base,
                    skv_error *err)
{
    size_t present = 0;
    for (size_t i = 0; i < d->nfields; i++) {
        const skv__pfield *f = &d->fields[i];
        if (skv__proto_field_present(f, base))
            present++;
        else if (f->required)
            return skv__err(err, SKV_EINVAL, "%s: required field '%s' is missing",
                            d->name, f->key);
    }
    if (d->check) {
        int rc = d->check(base, SKV_EINVAL, err);
        if (rc)
            return rc;
    }
    msgpack_pack_map(&w->pk, present);
    for (size_t i = 0; i < d->nfields; i++) {
        const skv__pfield *f = &d->fields[i];
        if (!skv__proto_field_present(f, base))
            continue;
        skv__mpw_cstr(w, f->key);
        int rc = skv__proto_pack_field(w, f, base, err);
        if (rc) {
            skv__err_prefix(err, "%s: field '%s'", d->name, f->key);
            return rc;
        }
    }
    return 0;
}

static const skv__pfield *find_field(const skv__pdesc *d, const char *key,
                                     uint32_t len, size_t *idx)
{
    for (size_t i = 0; i < d->nfields; i++) {
        const char *k = d->fields[i].key;
        if (strlen(k) == len && memcmp(k, key, len) == 0) {
            *idx = i;
            return &d->fields[i];
        }
    }
    return NULL;
}

static int check_required(const skv__pdesc *d, const void *base, skv_error *err)
{
    for (size_t i = 0; i < d->nfields; i++) {
        const skv__pfield *f = &d->fields[i];
        if (f->required && !skv__proto_field_present(f, base))
            return skv__err(err, SKV_EPROTO, "%s: required field '%s' is "
                            "missing", d->name, f->key);
    }
    return 0;
}

/* One key/value pair of the map. */
static int unpack_entry(skv__mpr *r, const skv__pdesc *d, void *base,
                        uint64_t *seen, skv_error *err)
{
    const char *key;
    uint32_t klen;
    int rc = skv__mpr_str(r, &key, &klen, err);
    if (rc) {
        skv__err_prefix(err, "%s: map key", d->name);
        return rc;
    }
    size_t idx = 0;
    const skv__pfield *f = find_field(d, key, klen, &idx);
    if (!f)
        return skv__mpr_skip(r, err); /* a newer peer's field */
    if (*seen & (1ULL << idx))
        return skv__err(err, SKV_EPROTO, "%s: duplicate field '%s'", d->name,
                        f->key);
    *seen |= 1ULL << idx;
    if (skv__mpr_nil(r))
        return 0;
    rc = skv__proto_unpack_field(r, f, base, err);
    if (rc)
        skv__err_prefix(err, "%s: field '%s'", d->name, f->key);
    return rc;
}

/* On failure the struct may be partly filled: the caller releases it (every
 * member is NULL/zero or valid at all times). */
int skv__proto_unpack(skv__mpr *r, const skv__pdesc *d, void *base,
                      skv_error *err)
{
    uint32_t n;
    int rc = skv__mpr_map(r, &n, err);
    if (rc) {
        skv__err_prefix(err, "%s", d->name);
        return rc;
    }
    uint64_t seen = 0;
    for (uint32_t i = 0; i < n; i++) {
        rc = unpack_entry(r, d, base, &seen, err);
        if (rc)
            return rc;
    }
    rc = check_required(d, base, err);
    if (!rc && d->check)
        rc = d->check(base, SKV_EPROTO, err);
    return rc;
}

void skv__proto_release(const skv__pdesc *d, void *base)
{
    for (size_t i = 0; i < d->nfields; i++)
        skv__proto_release_field(&d->fields[i], base);
}
