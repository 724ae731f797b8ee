/* The sessions' states as this connection last wrote or read them, kept
 * in memory so the manager's check before every transition (RUNNING once
 * all kernels run, settle after an exit, ...) is not a SELECT each time.
 *
 * The cache mirrors what a SELECT on this connection would return, the
 * connection's own uncommitted writes included, and stays right because
 * the store is the only writer of sessions.status (the one UPDATE in
 * sessions.c notes every change here) and every way a write can be undone
 * forgets it: a rollback, a failed commit, a ROLLBACK TO of a batch's or
 * an admin change's unit, a failed statement (which may have ended the
 * transaction) and a new leader's fence (db.c, tx.c, admin_tx.c) bump the
 * connection's epoch, and an entry of an older epoch reads as a miss,
 * i.e. from the database.
 * Direct-mapped and fixed-size: bounded memory, a collision is a miss.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_STATE_CACHE_H
#define SKV_MANAGER_STORE_STATE_CACHE_H

#include <stdbool.h>

#include "db.h"
#include "sokovan/manager.h"

/* Slots of the cache; ids of this length or longer are not cached. */
#define SKV__STATE_CACHE_SLOTS 8192
#define SKV__STATE_CACHE_ID 64

/* true and *out: sid's state as this connection sees it now. */
bool skv__mgr_store_state_cached(skv__db *db, const char *sid,
                                 skv_manager_session_state *out);
/* sid has an entry now, i.e. its row exists on this connection (rows of
 * sessions are never deleted); not counted in the statistics. */
bool skv__mgr_store_state_known(skv__db *db, const char *sid);
/* Known here and not in a final state (uncounted, like _known). */
bool skv__mgr_store_state_live(skv__db *db, const char *sid);
/* sid's state is s on this connection from now on (a write, or a read of
 * the row). Out of memory only makes later reads misses. */
void skv__mgr_store_state_note(skv__db *db, const char *sid,
                               skv_manager_session_state s);
/* Every entry becomes a miss: something this connection wrote may have
 * been undone, or another manager may have written. */
void skv__mgr_store_state_forget(skv__db *db);
/* Entries served from the cache and read from the database, for tests. */
void skv__mgr_store_state_stats(skv__db *db, uint64_t *hits,
                                uint64_t *misses);

#endif
