/* Bounded replay cache: per time bucket an open-addressing hash set of
 * nonces, keyed with SipHash (a secret per verifier) so that a client
 * cannot choose nonces that collide. Whole buckets are dropped once every
 * timestamp they cover is outside the skew window.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "nonce_cache.h"
#include "skv_internal.h"

#define INITIAL_CAP 16
#define OCC SKV_AUTH_NONCE_BYTES /* index of the "occupied" byte */

/* floor division: timestamps may be negative in tests. */
static int64_t bucket_of(int64_t ts, int64_t skew)
{
    int64_t q = ts / skew;
    return (ts % skew != 0 && ts < 0) ? q - 1 : q;
}

static void bucket_drop(skv__nonce_bucket *b)
{
    skv__free(b->slots);
    memset(b, 0, sizeof *b);
}

void skv__nonce_cache_clear(skv__nonce_cache *c)
{
    for (int i = 0; i < SKV__NONCE_BUCKETS; i++)
        bucket_drop(&c->b[i]);
    c->total = 0;
}

void skv__nonce_cache_expire(skv__nonce_cache *c, int64_t lower_bound_ms,
                             int64_t skew_ms)
{
    int64_t lo = bucket_of(lower_bound_ms, skew_ms);
    for (int i = 0; i < SKV__NONCE_BUCKETS; i++) {
        if (c->b[i].live && c->b[i].id < lo) {
            c->total -= c->b[i].count;
            bucket_drop(&c->b[i]);
        }
    }
}

static size_t slot_of(const uint8_t *nonce, size_t cap, const uint8_t *key)
{
    uint8_t h[crypto_shorthash_BYTES];
    crypto_shorthash(h, nonce, SKV_AUTH_NONCE_BYTES, key);
    uint64_t v;
    memcpy(&v, h, sizeof v);
    return (size_t)(v & (cap - 1));
}

/* Returns 1 when present, else 0 and *free_slot is where it would go. */
static int bucket_find(const skv__nonce_bucket *b, const uint8_t *nonce,
                       const uint8_t *key, size_t *free_slot)
{
    size_t i = slot_of(nonce, b->cap, key);
    while (b->slots[i][OCC]) {
        if (memcmp(b->slots[i], nonce, SKV_AUTH_NONCE_BYTES) == 0)
            return 1;
        i = (i + 1) & (b->cap - 1);
    }
    *free_slot = i;
    return 0;
}

static int bucket_grow(skv__nonce_bucket *b, const uint8_t *key)
{
    size_t ncap = b->cap ? b->cap * 2 : INITIAL_CAP;
    uint8_t (*ns)[SKV_AUTH_NONCE_BYTES + 1] = skv__calloc(ncap, sizeof *ns);
    if (!ns)
        return SKV_ENOMEM;
    skv__nonce_bucket nb = {true, b->id, b->count, ncap, ns};
    for (size_t i = 0; i < b->cap; i++) {
        size_t at = 0;
        if (b->slots[i][OCC] && !bucket_find(&nb, b->slots[i], key, &at))
            memcpy(ns[at], b->slots[i], SKV_AUTH_NONCE_BYTES + 1);
    }
    skv__free(b->slots);
    *b = nb;
    return 0;
}

static skv__nonce_bucket *bucket_for(skv__nonce_cache *c, int64_t id)
{
    skv__nonce_bucket *spare = NULL;
    for (int i = 0; i < SKV__NONCE_BUCKETS; i++) {
        if (c->b[i].live && c->b[i].id == id)
            return &c->b[i];
        if (!c->b[i].live && !spare)
            spare = &c->b[i];
    }
    if (spare) {
        spare->live = true;
        spare->id = id;
    }
    return spare;
}

int skv__nonce_cache_insert(skv__nonce_cache *c, const uint8_t *nonce,
                            int64_t ts_ms, int64_t skew_ms, size_t max_total,
                            const uint8_t *hash_key, skv_error *err)
{
    skv__nonce_bucket *b = bucket_for(c, bucket_of(ts_ms, skew_ms));
    if (!b)
        return skv__err(err, SKV_EBUSY, "nonce cache: no free time bucket");
    size_t at = 0;
    if (b->cap && bucket_find(b, nonce, hash_key, &at))
        return skv__err(err, SKV_EAUTH, "replayed request: nonce already used");
    if (c->total >= max_total)
        return skv__err(err, SKV_EBUSY,
                        "nonce cache full (%zu nonces within the skew window); "
                        "retry later", max_total);
    if ((b->count + 1) * 2 > b->cap) {
        if (bucket_grow(b, hash_key))
            return skv__err(err, SKV_ENOMEM, "nonce cache: out of memory");
    }
    bucket_find(b, nonce, hash_key, &at);
    memcpy(b->slots[at], nonce, SKV_AUTH_NONCE_BYTES);
    b->slots[at][OCC] = 1;
    b->count++;
    c->total++;
    return 0;
}
