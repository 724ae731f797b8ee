/* Private to src/auth: the per-access-key replay cache.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_AUTH_NONCE_CACHE_H
#define SKV_AUTH_NONCE_CACHE_H

#include <stdbool.h>

#include "sokovan/auth.h"

/* Nonces are grouped by the time bucket floor(timestamp / skew) of their
 * message. A replay carries the same timestamp (it is signed), hence lands
 * in the same bucket. Accepted timestamps span at most three consecutive
 * buckets, so four slots always suffice. */
#define SKV__NONCE_BUCKETS 4

typedef struct skv__nonce_bucket {
    bool live;
    int64_t id;
    size_t count, cap;        /* cap: power of two, or 0 */
    uint8_t (*slots)[SKV_AUTH_NONCE_BYTES + 1]; /* last byte: occupied */
} skv__nonce_bucket;

typedef struct skv__nonce_cache {
    skv__nonce_bucket b[SKV__NONCE_BUCKETS];
    size_t total;
} skv__nonce_cache;

/* Drop buckets whose messages are all older than lower_bound_ms. */
void skv__nonce_cache_expire(skv__nonce_cache *c, int64_t lower_bound_ms,
                             int64_t skew_ms);
/* 0 when remembered now; SKV_EAUTH when seen before; SKV_EBUSY when full;
 * SKV_ENOMEM. hash_key: the verifier's SipHash key. */
int skv__nonce_cache_insert(skv__nonce_cache *c, const uint8_t *nonce,
                            int64_t ts_ms, int64_t skew_ms, size_t max_total,
                            const uint8_t *hash_key, skv_error *err);
void skv__nonce_cache_clear(skv__nonce_cache *c);

#endif
