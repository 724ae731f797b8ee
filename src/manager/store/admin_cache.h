/* The admin rows the manager asks on every submission (is the user
 * active, a member of the project, may its domain use the group, which
 * limits and NUMA default apply), and a group's operations policy at every
 * kernel.create (ops.c), kept in memory so a submission in steady state
 * costs no admin SELECT. The admin plane (admin/query*.c) stores the
 * answers it built from the rows here, under a key naming the question.
 *
 * What makes a cached answer right is that it reads exactly as the rows
 * would now on this connection:
 *  - every admin write goes through one admin transaction (admin/tx.c:
 *    requests, bootstrap, key sync, quotas, ...; store/admin_*.c have no
 *    other caller, check-sql keeps SQL in the store): its begin holds the
 *    cache (every lookup misses, nothing is stored: the rows are changing
 *    under it) and its commit or rollback forgets everything;
 *  - every way the connection's writes can be undone (rollback, failed
 *    commit, ROLLBACK TO, a failed statement) and a new leader's fence
 *    bump the connection's epoch (db.c, tx.c, db_unit.c, admin_tx.c;
 *    state_cache.h), and an entry of an older epoch is a miss;
 *  - nobody else writes these rows while the manager runs. SQLite: the
 *    manager holds the file in locking_mode=EXCLUSIVE (open.c) from its
 *    first write on, so no other process can even read it, let alone
 *    write. PostgreSQL: only an elected leader opens a manager object
 *    (daemons/sokovan-manager/ha.c: a standby answers without one), every
 *    write transaction is fenced by the lease's epoch (lease.c), and a
 *    deposed leader exits at its first fenced BEGIN. A deposed leader that
 *    has not noticed yet may admit a submission on an answer a new leader
 *    has since changed, but that submission's rows are written in a
 *    transaction the fence refuses, so nothing it decided is kept (the
 *    same window existed without the cache: the SELECTs ran outside the
 *    fenced transaction too).
 * Nothing here counts usage (sessions, quotas in use): only admin rows,
 * which per-session writes never change.
 * Direct-mapped and fixed-size: bounded memory; a collision, a key or an
 * answer too long is a miss.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_ADMIN_CACHE_H
#define SKV_MANAGER_STORE_ADMIN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "skv_internal.h"

#define SKV__ADMIN_CACHE_SLOTS 2048
#define SKV__ADMIN_CACHE_KEY 288    /* bytes with the NUL */
#define SKV__ADMIN_CACHE_VAL 160

/* true and n bytes into out: the answer noted under key, still valid. */
bool skv__mgr_store_admin_cache_get(skv__db *db, const char *key, void *out,
                                    size_t n);
/* The answer to key is val (n bytes) from now on, until an admin change,
 * a rollback or a fence. Out of memory only makes later lookups misses. */
void skv__mgr_store_admin_cache_put(skv__db *db, const char *key,
                                    const void *val, size_t n);
/* An admin transaction begins (hold) / ends, committed or not (end):
 * in between every lookup misses and nothing is noted; each forgets
 * everything noted before. A hold allocates the cache, so that no lookup
 * inside the transaction can start a fresh one that knows of no hold:
 * SKV_ENOMEM when it cannot, and the transaction must not begin. */
int skv__mgr_store_admin_cache_hold(skv__db *db, skv_error *err);
void skv__mgr_store_admin_cache_end(skv__db *db);
/* Everything becomes a miss: the rows were changed behind the manager's
 * back (a test editing the file by hand stands for an offline edit
 * followed by a restart). */
void skv__mgr_store_admin_cache_forget(skv__db *db);
/* Lookups answered from memory and missed, for tests. */
void skv__mgr_store_admin_cache_stats(skv__db *db, uint64_t *hits,
                                      uint64_t *misses);

#endif
