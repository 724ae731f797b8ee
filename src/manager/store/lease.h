/* Leader election and fencing for several managers on one PostgreSQL.
 *
 * Election: a session-level advisory lock, held on the leader's store
 * connection. PostgreSQL drops it the moment that connection ends (the
 * leader killed, its host gone, the connection reset), so a standby that
 * polls skv__mgr_store_lease_try gets it within one poll.
 *
 * Fencing: the row ha_lease('manager') carries an epoch that each new
 * leader increments when elected. Every write transaction of a leader
 * starts with skv__mgr_store_lease_check, which reads the epoch FOR SHARE:
 * the new leader's increment waits for such transactions to end, and a
 * transaction that starts after it sees the new epoch and fails. So a
 * deposed leader (one that lost its connection and opened another, or
 * never noticed) cannot commit a write once a successor exists, and the
 * successor loads the state after every write the old leader committed.
 * The check fails as an error of the server's (not a value the caller
 * compares), so the manager's batch sends it with BEGIN without waiting
 * (db_pg_pipe.c) and a deposed leader's batch fails at its COMMIT.
 *
 * On SQLite (one manager per file, locked exclusively) try always elects
 * and check always passes; the table exists on both for one schema.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_LEASE_H
#define SKV_MANAGER_STORE_LEASE_H

#include <stdint.h>

#include "db.h"

/* The advisory lock's key: "skv-mgr!" as a 64-bit number, so it does not
 * collide with other users of advisory locks on a shared server. */
#define SKV__MGR_LEASE_KEY INT64_C(0x736b762d6d677221)

/* The "ha" component's migration (run by try). */
int skv__mgr_store_lease_schema(skv__db *db, skv_error *err);

/* 1: elected, *epoch is this leader's fencing token; 0: another manager
 * leads (stay standby, poll again); < 0: SKV_E*. holder names this
 * manager in the row (host:pid, for operators). */
int skv__mgr_store_lease_try(skv__db *db, const char *holder, int64_t now_ms,
                             int64_t *epoch, skv_error *err);

/* Inside a write transaction: 0 while epoch is the current one;
 * SKV_ESTATE ("deposed") once another leader has been elected or the
 * row is gone. The server raises that failure itself, so in a
 * transaction with deferred errors (db.h) the check is only queued and
 * costs no wait: its failure then comes from the next statement that
 * needs an answer, or from COMMIT, which rolls back. */
int skv__mgr_store_lease_check(skv__db *db, int64_t epoch, skv_error *err);

/* The lease connection's keepalive bound: PostgreSQL ends this session
 * after lease_ms without a statement (idle_session_timeout, PostgreSQL 14
 * or newer), which drops the advisory lock of a leader that stopped
 * renewing: paused, hung, its host gone. */
int skv__mgr_store_lease_hold(skv__db *db, uint32_t lease_ms, skv_error *err);

/* A leader's check between transactions, on the lease connection: 0 while
 * epoch is current; SKV_ESTATE "deposed" or SKV_EIO (connection lost). */
int skv__mgr_store_lease_renew(skv__db *db, int64_t epoch, skv_error *err);

/* Fence a leader's store connection: every transaction begun on it runs
 * skv__mgr_store_lease_check(*epoch) first (db.h's begin hook), and a
 * transaction left open lease_ms is ended by PostgreSQL
 * (idle_in_transaction_session_timeout) so a paused leader cannot hold up
 * its successor's epoch increment. Checks the epoch once at once. *epoch
 * must outlive db. SQLite: nothing to do. */
int skv__mgr_store_lease_fence(skv__db *db, const int64_t *epoch,
                               uint32_t lease_ms, skv_error *err);

/* Give up leadership (a clean stop): the next standby takes over at once
 * instead of after the connection ends. */
void skv__mgr_store_lease_release(skv__db *db);

/* The current epoch and holder, for status output (holder: 128 bytes). */
int skv__mgr_store_lease_read(skv__db *db, int64_t *epoch, char *holder,
                              skv_error *err);

#endif
