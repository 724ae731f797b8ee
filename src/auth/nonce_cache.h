/* Private to src/auth: the per-access-key replay cache.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_AUTH_NONCE_CACHE_H
#define SKV_AUTH_NONCE_CACHE_H

#include <stdbool.h>

#include "sokovan/auth.h"

/* Nonces are grouped by time slice: floor(timestamp / width), width =
 * ceil(skew / SKV__NONCE_SLICES). A replay carries the same timestamp (it
 * is signed), hence lands in the same slice. Accepted timestamps span at
 * most 2 * skew, i.e. 2 * SLICES + 2 consecutive slices, so a ring of
 * 2 * SLICES + 3 buckets indexed by slice id never holds two live ids in
 * one place. Slices finer than the window let a busy key's oldest nonces
 * go early (see floor_ms) instead of refusing its requests. */
#define SKV__NONCE_SLICES 64
#define SKV__NONCE_BUCKETS (2 * SKV__NONCE_SLICES + 3)

typedef struct skv__nonce_bucket {
    bool live;
    int64_t id;
    size_t count, cap;        /* cap: power of two, or 0 */
    uint8_t (*slots)[SKV_AUTH_NONCE_BYTES + 1]; /* last byte: occupied */
} skv__nonce_bucket;

typedef struct skv__nonce_cache {
    skv__nonce_bucket b[SKV__NONCE_BUCKETS];
    size_t total;
    /* Timestamps below this are refused for this key: their slices were
     * dropped to stay within max_total, so their nonces are forgotten
     * (INT64_MIN: nothing dropped early). */
    int64_t floor_ms;
} skv__nonce_cache;

void skv__nonce_cache_init(skv__nonce_cache *c);
/* Drop slices whose messages are all older than lower_bound_ms. */
void skv__nonce_cache_expire(skv__nonce_cache *c, int64_t lower_bound_ms,
                             int64_t skew_ms);
/* 0 when remembered now; SKV_EAUTH when seen before; SKV_EBUSY when full
 * with nothing older to drop, or when ts_ms is below the key's floor;
 * SKV_ENOMEM. hash_key: the verifier's SipHash key. Full, the oldest
 * slices before ts_ms's are dropped and the floor raised past them. */
int skv__nonce_cache_insert(skv__nonce_cache *c, const uint8_t *nonce,
                            int64_t ts_ms, int64_t skew_ms, size_t max_total,
                            const uint8_t *hash_key, skv_error *err);
void skv__nonce_cache_clear(skv__nonce_cache *c);

#endif
