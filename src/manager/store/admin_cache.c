/* The admin answers kept in memory (admin_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_cache.h"
#include "db_impl.h"
#include "skv_internal.h"

typedef struct admin_slot {
    uint64_t gen;                        /* 0: empty */
    uint64_t epoch;                      /* the connection's, when noted */
    uint32_t len;
    char key[SKV__ADMIN_CACHE_KEY];
    unsigned char val[SKV__ADMIN_CACHE_VAL];
} admin_slot;

struct skv__admin_cache {
    uint64_t gen;        /* bumped by every admin change; never 0 */
    unsigned hold;       /* admin transactions open */
    uint64_t hits, misses;
    admin_slot slot[SKV__ADMIN_CACHE_SLOTS];
};

/* Allocated on first use: a connection that never admits a submission
 * (the lease's, a CLI's) costs nothing. NULL when out of memory. */
static struct skv__admin_cache *cache_of(skv__db *db)
{
    if (!db->admin_cache &&
        (db->admin_cache = skv__calloc(1, sizeof *db->admin_cache)))
        db->admin_cache->gen = 1;
    return db->admin_cache;
}

static size_t slot_of(const char *key)
{
    uint64_t h = 1469598103934665603u;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211u;
    return (size_t)(h % SKV__ADMIN_CACHE_SLOTS);
}

static bool cacheable(const char *key, size_t n)
{
    return key && *key && n <= SKV__ADMIN_CACHE_VAL &&
           strnlen(key, SKV__ADMIN_CACHE_KEY) < SKV__ADMIN_CACHE_KEY;
}

bool skv__mgr_store_admin_cache_get(skv__db *db, const char *key, void *out,
                                    size_t n)
{
    struct skv__admin_cache *c = cache_of(db);
    if (!c)
        return false;
    const admin_slot *s = cacheable(key, n) ? &c->slot[slot_of(key)] : NULL;
    if (c->hold || !s || s->gen != c->gen || s->epoch != db->epoch ||
        s->len != n || strcmp(s->key, key)) {
        c->misses++;
        return false;
    }
    c->hits++;
    memcpy(out, s->val, n);
    return true;
}

void skv__mgr_store_admin_cache_put(skv__db *db, const char *key,
                                    const void *val, size_t n)
{
    struct skv__admin_cache *c = cache_of(db);
    if (!c || c->hold || !cacheable(key, n))
        return;
    admin_slot *s = &c->slot[slot_of(key)];
    s->gen = c->gen;
    s->epoch = db->epoch;
    s->len = (uint32_t)n;
    memcpy(s->key, key, strlen(key) + 1);
    memcpy(s->val, val, n);
}

int skv__mgr_store_admin_cache_hold(skv__db *db, skv_error *err)
{
    struct skv__admin_cache *c = cache_of(db);
    if (!c)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    c->hold++;
    c->gen++;
    return 0;
}

void skv__mgr_store_admin_cache_end(skv__db *db)
{
    struct skv__admin_cache *c = db->admin_cache;
    if (!c)
        return;
    if (c->hold)
        c->hold--;
    c->gen++;
}

void skv__mgr_store_admin_cache_forget(skv__db *db)
{
    if (db->admin_cache)
        db->admin_cache->gen++;
}

void skv__mgr_store_admin_cache_stats(skv__db *db, uint64_t *hits,
                                      uint64_t *misses)
{
    *hits = db->admin_cache ? db->admin_cache->hits : 0;
    *misses = db->admin_cache ? db->admin_cache->misses : 0;
}
