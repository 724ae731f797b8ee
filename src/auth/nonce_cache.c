/* Bounded replay cache: per time slice an open-addressing hash set of
 * nonces, keyed with SipHash (a secret per verifier) so that a client
 * cannot choose nonces that collide. Whole slices are dropped once every
 * timestamp they cover is outside the skew window. A key that sends more
 * than max_total requests within the window (a client submitting 5,000
 * sessions/s, an agent reporting for thousands of kernels) does not hit a
 * wall: its oldest slices are dropped early and its floor raised past
 * them, so a replay of a forgotten nonce is refused by its timestamp
 * instead. Replay protection stays exact; only that key's window shrinks
 * (to about max_total / its rate), and only while it is that busy.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "nonce_cache.h"
#include "skv_internal.h"

#define INITIAL_CAP 16
#define OCC SKV_AUTH_NONCE_BYTES /* index of the "occupied" byte */

static int64_t width_of(int64_t skew)
{
    return (skew + SKV__NONCE_SLICES - 1) / SKV__NONCE_SLICES;
}

/* floor division: timestamps may be negative in tests. */
static int64_t bucket_of(int64_t ts, int64_t skew)
{
    int64_t w = width_of(skew);
    int64_t q = ts / w;
    return (ts % w != 0 && ts < 0) ? q - 1 : q;
}

/* Ring position of slice id (floor modulo). */
static size_t ring_of(int64_t id)
{
    int64_t r = id % SKV__NONCE_BUCKETS;
    return (size_t)(r < 0 ? r + SKV__NONCE_BUCKETS : r);
}

void skv__nonce_cache_init(skv__nonce_cache *c)
{
    memset(c, 0, sizeof *c);
    c->floor_ms = INT64_MIN;
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
    c->floor_ms = INT64_MIN;
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
    skv__nonce_bucket *b = &c->b[ring_of(id)];
    if (b->live)
        return b->id == id ? b : NULL;  /* not expired: cannot happen */
    b->live = true;
    b->id = id;
    return b;
}

/* The live slice with the smallest id below before, or NULL. */
static skv__nonce_bucket *oldest_below(skv__nonce_cache *c, int64_t before)
{
    skv__nonce_bucket *o = NULL;
    for (int i = 0; i < SKV__NONCE_BUCKETS; i++)
        if (c->b[i].live && c->b[i].id < before && (!o || c->b[i].id < o->id))
            o = &c->b[i];
    return o;
}

/* Full: forget the oldest slices before id, raising the floor past each. */
static bool make_room(skv__nonce_cache *c, int64_t id, int64_t skew_ms,
                      size_t max_total)
{
    skv__nonce_bucket *o;
    while (c->total >= max_total && (o = oldest_below(c, id)) != NULL) {
        int64_t end;
        if (__builtin_mul_overflow(o->id + 1, width_of(skew_ms), &end))
            end = INT64_MAX;
        if (end > c->floor_ms)
            c->floor_ms = end;
        c->total -= o->count;
        bucket_drop(o);
    }
    return c->total < max_total;
}

int skv__nonce_cache_insert(skv__nonce_cache *c, const uint8_t *nonce,
                            int64_t ts_ms, int64_t skew_ms, size_t max_total,
                            const uint8_t *hash_key, skv_error *err)
{
    if (ts_ms < c->floor_ms)
        return skv__err(err, SKV_EBUSY, "request timestamp %lld ms is older "
                        "than this key's replay window (it starts at %lld ms "
                        "while the key sends more than %zu requests per "
                        "window); sign it again", (long long)ts_ms,
                        (long long)c->floor_ms, max_total);
    int64_t id = bucket_of(ts_ms, skew_ms);
    skv__nonce_bucket *b = bucket_for(c, id);
    if (!b)
        return skv__err(err, SKV_EBUSY, "nonce cache: no free time slice");
    size_t at = 0;
    if (b->cap && bucket_find(b, nonce, hash_key, &at))
        return skv__err(err, SKV_EAUTH, "replayed request: nonce already used");
    if (!make_room(c, id, skew_ms, max_total)) {
        if (!b->count)
            bucket_drop(b);
        return skv__err(err, SKV_EBUSY,
                        "nonce cache full (%zu nonces within one %lld ms "
                        "slice of the skew window); retry later", max_total,
                        (long long)width_of(skew_ms));
    }
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
