/* Private to src/proto: a bounds-checked msgpack pull reader (decoding
 * untrusted bytes without msgpack-c's up-front allocations) and a writer
 * that packs with msgpack-c into a buffer from the library's allocator.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_PROTO_MP_H
#define SKV_PROTO_MP_H

#include <msgpack.h>
#include <stdbool.h>

#include "skv_internal.h"

typedef struct skv__mpr {
    const uint8_t *p;
    const uint8_t *end;
} skv__mpr;

static inline size_t skv__mpr_left(const skv__mpr *r)
{
    return (size_t)(r->end - r->p);
}

/* Every reader returns 0 or SKV_EPROTO with a message ("expected a
 * string, got an array"); the caller prefixes the field's name. */
/* Consume a nil and return true when the next value is nil. */
bool skv__mpr_nil(skv__mpr *r);
/* Map header; n entries (pairs), checked against the bytes left. */
int skv__mpr_map(skv__mpr *r, uint32_t *n, skv_error *err);
int skv__mpr_array(skv__mpr *r, uint32_t *n, skv_error *err);
/* A string (str family), borrowed from the input. */
int skv__mpr_str(skv__mpr *r, const char **s, uint32_t *len, skv_error *err);
int skv__mpr_bin(skv__mpr *r, const uint8_t **b, uint32_t *len, skv_error *err);
/* Integers of either msgpack family, range-checked. */
int skv__mpr_u64(skv__mpr *r, uint64_t *v, skv_error *err);
int skv__mpr_i64(skv__mpr *r, int64_t *v, skv_error *err);
int skv__mpr_bool(skv__mpr *r, bool *v, skv_error *err);
/* Skip one complete value of any type (iterative: no recursion depth). */
int skv__mpr_skip(skv__mpr *r, skv_error *err);

typedef struct skv__mpw {
    uint8_t *buf;
    size_t len, cap;
    bool failed; /* out of memory: the content is unusable */
    msgpack_packer pk;
} skv__mpw;

void skv__mpw_init(skv__mpw *w);
/* Hand the buffer over (NULL when failed); w is reset. */
uint8_t *skv__mpw_take(skv__mpw *w, size_t *len);
void skv__mpw_dispose(skv__mpw *w);
void skv__mpw_str(skv__mpw *w, const char *s, size_t len);
void skv__mpw_cstr(skv__mpw *w, const char *s);

#endif
