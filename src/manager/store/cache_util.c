/* What the store's in-memory caches share (cache_util.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "cache_util.h"
#include "db_impl.h"
#include "skv_internal.h"

uint64_t skv__mgr_store_cache_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * SKV__CACHE_FNV_PRIME;
    return h;
}

bool skv__mgr_store_cache_fits(const char *s, size_t room)
{
    return s && strnlen(s, room) < room;
}

void *skv__mgr_store_cache_new(skv__db *db, void *cache, size_t size)
{
    if (!cache && !(cache = skv__calloc(1, size)))
        return NULL;
    if (!db->epoch)
        db->epoch = 1;
    return cache;
}

void skv__mgr_store_cache_count(void *cache, bool hit)
{
    skv__cache_stats *s = cache;
    if (s)
        *(hit ? &s->hits : &s->misses) += 1;
}

void skv__mgr_store_cache_stats(const void *cache, uint64_t *hits,
                                uint64_t *misses)
{
    const skv__cache_stats *s = cache;
    *hits = s ? s->hits : 0;
    *misses = s ? s->misses : 0;
}
