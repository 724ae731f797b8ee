/* The rest of what kernel.create is built from (mgr_create.c), kept in
 * memory beside the dispatch cache (dispatch_cache.h) under its contract:
 * an entry belongs to the connection's epoch, which every rollback,
 * failed commit, ROLLBACK TO, failed statement and fence bumps, so an
 * entry a write could have been undone under reads as a miss, and a miss
 * reads the database. What each entry stands for changes only by writes
 * the store notes here:
 *  - a session's submit body as accepted (the spec blob) with its domain,
 *    project and owner: noted by the insert of its row (insert.c); session
 *    rows are never deleted and these columns never written again;
 *  - a kernel's allocation rows (kernel_alloc), in (device, slot) byte
 *    order: an entry starts empty when the kernel is placed from PENDING
 *    (alloc.c; a PENDING kernel has no rows: inserted without, and
 *    unplacing a session deletes them before its kernels become PENDING),
 *    then takes each row alloc_add writes for it. Every other write of
 *    kernel_alloc (unplace's DELETE, a suspect's rows put back in
 *    suspects.c) forgets all entries. An entry lost to a collision is only
 *    started again by a placement, so an entry holds all of its kernel's
 *    rows or is absent.
 * A group's operations policy is an admin row: it lives in the admin
 * cache (ops.c, admin_cache.h).
 * Direct-mapped, fixed-size: bounded memory, a collision is a miss.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_CREATE_CACHE_H
#define SKV_MANAGER_STORE_CREATE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "store.h"

#define SKV__CCACHE_SUBMITS 8192
#define SKV__CCACHE_BODY 4096     /* encoded bodies longer: not cached */
#define SKV__CCACHE_ID 64         /* ids and owners this long: not cached */
#define SKV__CCACHE_ALLOCS 4096
#define SKV__CCACHE_ROWS 8        /* kernels with more rows: not cached */
#define SKV__CCACHE_SLOT 32

/* true: sid's body (*body valid until the next call into the cache) and
 * its owners (buffers of SKV__STORE_ID_MAX). */
bool skv__mgr_store_cc_submit(skv__db *db, const char *sid,
                              const void **body, size_t *len, char *domain,
                              char *project, char *owner);
/* sid's row was inserted with body and these owners. */
void skv__mgr_store_cc_submit_note(skv__db *db, const char *sid,
                                   const void *body, size_t len,
                                   const char *domain, const char *project,
                                   const char *owner);
/* kid, PENDING until now, was placed: it has no allocation rows. */
void skv__mgr_store_cc_alloc_start(skv__db *db, const char *kid);
/* The row a was inserted. */
void skv__mgr_store_cc_alloc_note(skv__db *db, const skv__mgr_store_alloc *a);
/* kernel_alloc was written otherwise: every entry goes. */
void skv__mgr_store_cc_alloc_forget(skv__db *db);
/* kid's rows as skv__mgr_store_alloc_of gives them: 1, 0 on a miss, or
 * < 0 out of memory. */
int skv__mgr_store_cc_alloc(skv__db *db, const char *kid,
                            skv__mgr_store_alloc **out, size_t *n,
                            skv_error *err);
void skv__mgr_store_cc_stats(skv__db *db, uint64_t *hits, uint64_t *misses);
void skv__mgr_store_cc_free(skv__db *db);

#endif
