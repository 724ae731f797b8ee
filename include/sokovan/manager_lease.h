/*
 * sokovan/manager_lease.h - leadership among several managers sharing one
 * PostgreSQL store: one leads, the others stand by.
 *
 * A host (sokovan-manager) opens a lease on the store before it opens the
 * manager, and calls skv_manager_lease_try every poll interval until it is
 * elected; only then does it open the manager (skv_manager_open with
 * skv_manager_options.lease), which loads the cluster from the store like
 * a restarted manager and fences each of its write transactions with the
 * lease's epoch. While leading, the host calls skv_manager_lease_renew at
 * the same interval: any failure means another manager may lead now, and
 * the host must stop serving at once (sokovan-manager exits).
 *
 * The lease holds a PostgreSQL advisory lock on its own connection with
 * idle_session_timeout = lease_ms: a leader that stops renewing (paused,
 * hung, its host gone) loses the lock after lease_ms, and a leader killed
 * loses it at once. The manager's own connection gets
 * idle_in_transaction_session_timeout = lease_ms so a paused leader cannot
 * hold up its successor's epoch increment. Details: docs/architecture.md,
 * "PostgreSQL and standby managers". Needs PostgreSQL 14 or newer.
 *
 * Not thread-safe: one lease per host thread.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_MANAGER_LEASE_H
#define SOKOVAN_MANAGER_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_manager_lease skv_manager_lease;

#define SKV_MANAGER_LEASE_OPTIONS_VERSION 1

typedef struct skv_manager_lease_options {
    unsigned version;       /* SKV_MANAGER_LEASE_OPTIONS_VERSION */
    const char *store;      /* a PostgreSQL URI or conninfo (required) */
    /* Names this manager to operators and in standby answers ("host pid N
     * at ADDRESS"): 1 to 127 bytes. */
    const char *holder;
    /* A leader silent this long loses the lease: 200 .. 3600000 ms. */
    uint32_t lease_ms;
} skv_manager_lease_options;

#define SKV_MANAGER_LEASE_OPTIONS_INIT \
    {SKV_MANAGER_LEASE_OPTIONS_VERSION, NULL, NULL, 0}

/* Connect to the store and create the lease table when missing. SQLite
 * stores are refused with SKV_EINVAL (one manager per database file).
 * SKV_EIO: the server is unreachable or too old (the reason says which). */
SKV_EXTERN int skv_manager_lease_open(skv_manager_lease **out,
                                      const skv_manager_lease_options *opts,
                                      skv_error *err);

/* 1: elected now (the epoch went up; skv_manager_lease_epoch has it);
 * 0: another manager leads (stand by, call again later); < 0: SKV_E*
 * (the lease is unusable: free it). Calling it when already elected
 * returns 1 without a new election. */
SKV_EXTERN int skv_manager_lease_try(skv_manager_lease *lease,
                                     int64_t now_ms, skv_error *err);

/* While elected: 0 while this manager still leads at its epoch; otherwise
 * SKV_ESTATE "deposed: ..." (another manager was elected) or SKV_EIO (the
 * lease connection was lost: after lease_ms of silence PostgreSQL ends
 * it). Either way stop serving at once. SKV_ESTATE when not elected. */
SKV_EXTERN int skv_manager_lease_renew(skv_manager_lease *lease,
                                       skv_error *err);

/* This manager's fencing epoch; 0 while not elected. */
SKV_EXTERN int64_t skv_manager_lease_epoch(const skv_manager_lease *lease);

/* Who leads now, as its holder text (written to holder, n bytes, "" when
 * nobody ever led) and its epoch (may be NULL). */
SKV_EXTERN int skv_manager_lease_leader(skv_manager_lease *lease,
                                        char *holder, size_t n,
                                        int64_t *epoch, skv_error *err);

/* Release (a clean stop: a standby takes over at its next try) and
 * close. NULL is fine. */
SKV_EXTERN void skv_manager_lease_free(skv_manager_lease *lease);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_MANAGER_LEASE_H */
