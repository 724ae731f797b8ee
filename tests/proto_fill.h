/* Test helper shared by the proto and auth suites: fill any message body
 * with non-default values in every field (driven by the library's own
 * field tables), so round trips cover every field of every type.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_PROTO_FILL_H
#define SKV_TEST_PROTO_FILL_H

#include <stdio.h>
#include <string.h>

#include "../src/proto/schema.h"
#include "sokovan/proto.h"

static inline char *skv_test_fill_str(const char *key, int seed)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s-%d", key, seed);
    return skv__strdup(buf);
}

static inline void skv_test_fill_desc(const skv__pdesc *d, void *base, int seed);

static inline void *skv_test_fill_array(const skv__pfield *f, size_t n, int seed)
{
    switch (f->type) {
    case SKV__F_STRLIST: {
        char **v = skv__calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = skv_test_fill_str(f->key, seed + (int)i);
        return v;
    }
    case SKV__F_U32LIST: {
        uint32_t *v = skv__calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = (uint32_t)(seed * 10 + (int)i);
        return v;
    }
    case SKV__F_KVLIST: {
        skv_proto_kv *v = skv__calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            v[i].key = skv_test_fill_str("k", seed + (int)i);
            v[i].value = skv_test_fill_str(f->key, seed + (int)i);
        }
        return v;
    }
    case SKV__F_BIN: {
        uint8_t *v = skv__malloc(n);
        for (size_t i = 0; i < n; i++)
            v[i] = (uint8_t)(seed + (int)i * 37);
        return v;
    }
    default: { /* SKV__F_LIST */
        char *v = skv__calloc(n, f->sub->size);
        for (size_t i = 0; i < n; i++)
            skv_test_fill_desc(f->sub, v + i * f->sub->size, seed + 100 * (int)(i + 1));
        return v;
    }
    }
}

static inline void skv_test_fill_field(const skv__pfield *f, void *base, int seed)
{
    char *p = (char *)base + f->off;
    switch (f->type) {
    case SKV__F_STR: *(char **)p = skv_test_fill_str(f->key, seed); break;
    case SKV__F_I64: *(int64_t *)p = -((int64_t)1 << 40) - seed; break;
    case SKV__F_I32: *(int32_t *)p = -7 - seed; break;
    case SKV__F_U64: *(uint64_t *)p = ((uint64_t)1 << 63) + (uint64_t)seed; break;
    case SKV__F_U32:
        /* "op" fields of admin requests must name an operation */
        *(uint32_t *)p = strcmp(f->key, "op") == 0 ? 2u : 4000000000u + (uint32_t)seed;
        break;
    case SKV__F_BOOL: *(uint8_t *)p = 1; break;
    case SKV__F_SLOTS: {
        char txt[64];
        snprintf(txt, sizeof txt, "cpu=%d.5,mem=%dg,cuda.shares=0.25", seed % 50 + 1,
                 seed % 7 + 1);
        skv_slots_parse((skv_slots **)p, txt, NULL, NULL);
        break;
    }
    case SKV__F_STRUCT: skv_test_fill_desc(f->sub, p, seed + 1); break;
    default: {
        size_t n = f->type == SKV__F_BIN ? 5 : 2;
        *(void **)p = skv_test_fill_array(f, n, seed);
        *(size_t *)((char *)base + f->count_off) = n;
        break;
    }
    }
}

static inline void skv_test_fill_desc(const skv__pdesc *d, void *base, int seed)
{
    for (size_t i = 0; i < d->nfields; i++)
        skv_test_fill_field(&d->fields[i], base, seed + (int)i);
}

/* Fill a body of type t (buf must hold skv_proto_type_size(t) bytes). */
static inline void skv_test_fill(skv_proto_type t, void *buf, int seed)
{
    memset(buf, 0, skv_proto_type_size(t));
    skv_test_fill_desc(skv__proto_types[t].desc, buf, seed);
}

#endif
