/* What kernel.create is built from (dispatch.c), kept in memory so that
 * dispatching a session is not a join with agents and a kernel's SELECT:
 * each agent's address as the LEFT JOIN of kernels with agents gives it,
 * and each kernel's image and slot request by (session, index).
 *
 * The contract of the state and kernel caches (state_cache.h,
 * kernel_cache.h): an entry belongs to the connection's epoch, which
 * every rollback, failed commit, ROLLBACK TO, failed statement and fence
 * bumps, so an entry a write could have been undone under reads as a
 * miss. What each entry stands for changes only by writes the store
 * notes here:
 *  - an agent's address by the one upsert of its row (agents.c); agent
 *    rows are never deleted, so an agent once seen keeps its answer;
 *  - a kernel's image and slots never change once its row is inserted
 *    (insert.c), and kernel rows are never deleted: the entry of (sid,
 *    idx) stays right through its renames (suspects.c keeps sid and idx).
 * The kernel's id, agent and existence come from the kernel cache.
 * Fixed-size: bounded memory, a collision is a miss. Agents sit in sets
 * of SKV__DCACHE_WAYS (a thousand agents direct-mapped over 4,096 slots
 * shared a slot for ~1 in 5 of them, and the roundrobin walk then missed
 * on every such agent's turn: ~0.2 joins per session); specs stay
 * direct-mapped (a session's entry is read within ticks of its insert).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_DISPATCH_CACHE_H
#define SKV_MANAGER_STORE_DISPATCH_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "kernel_cache.h"
#include "sokovan/slots.h"

#define SKV__DCACHE_AGENTS 8192     /* in sets of SKV__DCACHE_WAYS */
#define SKV__DCACHE_WAYS 4
#define SKV__DCACHE_SPECS 8192
#define SKV__DCACHE_ID 64         /* ids this long or longer: not cached */
#define SKV__DCACHE_ADDR 128      /* the host row's address room */
#define SKV__DCACHE_IMAGE 128
#define SKV__DCACHE_SLOTS 192     /* encoded slot vectors longer: not cached */

/* true and the address the join gives for agent (has: the row exists with
 * an address; addr holds SKV__DCACHE_ADDR bytes). */
bool skv__mgr_store_dc_agent(skv__db *db, const char *agent, bool *has,
                             char *addr);
/* agent's address is now addr (NULL: the join gives none). */
void skv__mgr_store_dc_agent_note(skv__db *db, const char *agent,
                                  const char *addr);
/* true: (sid, idx)'s image (*image NULL: the column is NULL) and its
 * encoded slots (*len 0: NULL), both valid until the next call into the
 * cache. */
bool skv__mgr_store_dc_spec(skv__db *db, const char *sid, int idx,
                            const char **image, const void **slots,
                            size_t *len);
/* (sid, idx) was inserted with image (NULL: NULL) and the encoded slots
 * (len 0: NULL). */
void skv__mgr_store_dc_spec_note(skv__db *db, const char *sid, int idx,
                                 const char *image, const void *slots,
                                 size_t len);
/* kid's image and slots (owned by the caller) with its cached row *k: 1,
 * or 0 on a miss, or < 0 out of memory (dispatch.c). */
int skv__mgr_store_kernel_spec_cached(skv__db *db, const char *kid,
                                      const skv__kc_kernel **k, char **image,
                                      skv_slots **slots, skv_error *err);
void skv__mgr_store_dc_stats(skv__db *db, uint64_t *hits, uint64_t *misses);

#endif
