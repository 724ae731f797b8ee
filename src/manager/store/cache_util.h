/* What the store's in-memory caches share (create_cache.c,
 * dispatch_cache.c, kernel_cache.c, state_cache.c): the hash of a key,
 * the test that a string fits a fixed buffer, the allocation on first
 * use, and the hit and miss counts the tests read.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_CACHE_UTIL_H
#define SKV_MANAGER_STORE_CACHE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* FNV-1a, 64 bits: its prime, for a caller that mixes in more. */
#define SKV__CACHE_FNV_PRIME 1099511628211u

/* Lookups served from memory and read from the database. Every cache's
 * struct has it as its first member, so the calls below take the cache
 * itself (or NULL, not allocated yet). */
typedef struct skv__cache_stats {
    uint64_t hits, misses;
} skv__cache_stats;

/* FNV-1a of s. */
uint64_t skv__mgr_store_cache_hash(const char *s);
/* s is not NULL and fits room bytes with its NUL. */
bool skv__mgr_store_cache_fits(const char *s, size_t room);
/* cache, or a zeroed one of size bytes when NULL (a connection that never
 * uses a cache costs nothing); NULL out of memory, which only makes later
 * lookups misses. Starts db's epochs at 1: 0 marks an empty slot. */
void *skv__mgr_store_cache_new(skv__db *db, void *cache, size_t size);
/* One lookup of cache (nothing when NULL). */
void skv__mgr_store_cache_count(void *cache, bool hit);
/* cache's counts (0 when NULL). */
void skv__mgr_store_cache_stats(const void *cache, uint64_t *hits,
                                uint64_t *misses);

#endif
