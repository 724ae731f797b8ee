/* The sessions' kernel rows as this connection last wrote or read them
 * (id, index, status, agent), kept in memory so the manager's per-session
 * reads of them (a kernel's row at each reply and exit, the counts that
 * decide RUNNING and the end, the ids to stop) are not a SELECT each.
 *
 * The same contract as the session-state cache (state_cache.h), and the
 * same forgetting: an entry belongs to the connection's epoch, which every
 * rollback, failed commit, ROLLBACK TO, failed statement and fence bumps,
 * so one bump empties both caches. A session is cached whole or not at
 * all (its insert, or one SELECT of all its kernels), and every write of
 * the kernels table in the store updates the entry or drops it
 * (kernels.c, alloc.c, suspects.c), so a count or an id list is as right
 * as the entry.
 * A kernel id finds its session through an index kept so that every
 * kernel of a cached session has its index slot: taking a slot drops the
 * session that held it. A write by kernel id that misses the index thus
 * touches no cached session.
 * Direct-mapped, fixed-size: bounded memory, a collision is a miss.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_KERNEL_CACHE_H
#define SKV_MANAGER_STORE_KERNEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "store.h"

#define SKV__KCACHE_SESSIONS 4096
#define SKV__KCACHE_INDEX 16384
#define SKV__KCACHE_ID 64          /* ids this long or longer: not cached */
#define SKV__KCACHE_KERNELS 4     /* sessions with more: not cached */

typedef struct skv__kc_kernel {
    char kid[SKV__KCACHE_ID];
    char agent[SKV__KCACHE_ID];    /* "" when agent_id is NULL */
    char status[16];
    int idx;
} skv__kc_kernel;

/* What the end of the session reads (skv__mgr_store_kc_finish): the stop
 * asked for and the main kernel's exit; a *_set false is a NULL column. */
typedef struct skv__kc_fin {
    bool known;             /* from the session's insert or a read on */
    bool end_set;           /* end_status is not NULL */
    bool end_reason_set;
    bool exit_set;          /* the main kernel's exit_code is not NULL */
    bool kreason_set;
    int exit_code;
    char end_status[32];
    char end_reason[256];
    char kreason[256];
} skv__kc_fin;

/* A session's kernels in index order, or NULL (a miss). Valid until the
 * next call into the cache. */
const skv__kc_kernel *skv__mgr_store_kc_session(skv__db *db, const char *sid,
                                                size_t *n);
/* kid's row and its session id, or NULL (a miss). */
const skv__kc_kernel *skv__mgr_store_kc_kernel(skv__db *db, const char *kid,
                                               const char **sid);
/* kid is cached here with a status that is not final; not counted in
 * the statistics (a check for the live marker, kernels.c). */
bool skv__mgr_store_kc_live(skv__db *db, const char *kid);
/* sid has exactly these kernels now (its insert, or a read of all). */
void skv__mgr_store_kc_fill(skv__db *db, const char *sid,
                            const skv__kc_kernel *k, size_t n);
/* kid's status (NULL: unchanged) and agent (NULL: unchanged) are now. */
void skv__mgr_store_kc_set(skv__db *db, const char *kid, const char *status,
                           const char *agent);
/* sid's kernels with a status in v[0..nv) (any agent), or with a status
 * not in it on agent (agent non-NULL), now have status to. */
void skv__mgr_store_kc_move(skv__db *db, const char *sid,
                            const char *const *v, size_t nv, bool in,
                            const char *agent, const char *to);
/* sid's entry goes (a write the cache does not follow: renamed ids). */
void skv__mgr_store_kc_drop(skv__db *db, const char *sid);

/* The end's row (sessions.c finish_row: the stop asked for, the main
 * kernel's exit code, status and reason) from memory. Known for a session
 * inserted on this connection (fin_new after its kc_fill: every column
 * NULL) or read whole into the cache (fin_read after its kc_fill, from the
 * same SELECT: kernels.c session_rows), and kept by every write of those
 * columns: a stop's (fin_end), a kernel's exit (fin_exit); a lost agent's
 * kernels (fin_forget), renames and unplacing (kc_drop) make it a miss
 * again, as a kc_fill alone does. */
void skv__mgr_store_kc_fin_new(skv__db *db, const char *sid);
void skv__mgr_store_kc_fin_read(skv__db *db, const char *sid,
                                const skv__kc_fin *f);
void skv__mgr_store_kc_fin_forget(skv__db *db, const char *sid);
void skv__mgr_store_kc_fin_end(skv__db *db, const char *sid,
                               const char *status, const char *reason);
void skv__mgr_store_kc_fin_exit(skv__db *db, const char *kid, int exit_code,
                                const char *reason);
/* true and *out: what finish_row's SELECT would give now. */
bool skv__mgr_store_kc_finish(skv__db *db, const char *sid,
                              skv__mgr_store_finish *out);
void skv__mgr_store_kc_stats(skv__db *db, uint64_t *hits, uint64_t *misses);

#endif
