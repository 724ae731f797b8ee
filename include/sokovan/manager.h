/*
 * sokovan/manager.h - the cluster manager as a library object.
 *
 * The manager keeps the cluster's state in SQLite (WAL; every state change
 * in one transaction), runs the scheduler (sched.h) on events and on ticks,
 * and speaks the wire protocol (proto.h) with users and agents. It owns no
 * event loop and no socket: the host (sokovan-manager, or another
 * orchestrator) accepts connections, feeds received frame payloads to
 * skv_manager_handle_frame() and writes out whatever the manager hands to the
 * send callback. Agents connect to the manager; the manager sends its
 * requests to an agent (kernel.create, kernel.destroy, kernel.logs) over the
 * agent's own connection.
 *
 * Durability: a session.submit is answered only after its row is committed;
 * after a crash, skv_manager_open() rebuilds the scheduler from the database
 * (pending sessions queued again, scheduled and running ones adopted with
 * their allocations) and reconciles with each agent when it registers again.
 *
 * Thread-safety: a skv_manager is not thread-safe; call it from one thread
 * (the event-loop thread). The send callback is called from inside
 * handle_frame / tick / conn_close, never from another thread.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_MANAGER_H
#define SOKOVAN_MANAGER_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_manager skv_manager;

/* Hand one complete frame (length prefix included) to connection conn_id.
 * Return 0, or negative when the connection is gone (the manager then
 * treats it as closed). The frame is borrowed: copy it. */
typedef int (*skv_manager_send_fn)(uint64_t conn_id, const void *frame,
                                   size_t len, void *payload);

/* Version 2 added cluster_cidr, version 3 init and backup_dir, version 4
 * store, version 5 storage_hosts, version 6 lease, version 7
 * sched_plugins, version 8 idle_cpu_percent; older structures are
 * accepted. */
#define SKV_MANAGER_OPTIONS_VERSION 8

/* A storage host of virtual folders (docs/architecture.md, "Virtual
 * folders"): folders live in root/folders/<id> (storage.h lays it out).
 * The manager performs every folder and file operation itself, so root
 * must be mounted on the manager's machine; agents bind-mount the same
 * path, so it must be mounted at that path on the agents that run
 * sessions mounting its folders. */
typedef struct skv_manager_storage_host {
    const char *name;   /* [A-Za-z0-9][A-Za-z0-9_.-]{0,62} */
    const char *root;   /* absolute, existing directory */
    const char *quota;  /* "auto", "none", "btrfs", "xfs", "ext4"; NULL auto */
    uint32_t shared;    /* 1: mounted at root on every agent (a network
                           filesystem): multi-node sessions may mount its
                           folders; 0: one machine's disk */
} skv_manager_storage_host;

typedef struct skv_manager_options {
    unsigned version;               /* SKV_MANAGER_OPTIONS_VERSION */
    const char *data_dir;           /* required, absolute; created 0700 if
                                       missing; holds manager.db and keys */
    uint32_t heartbeat_interval_ms; /* told to agents; 0 = 1000 */
    uint32_t heartbeat_timeout_ms;  /* agent lost after this; 0 = 10000 */
    uint32_t max_frame;             /* largest payload accepted; 0 = default */
    int64_t max_clock_skew_ms;      /* signed requests; 0 = 300000 */
    const char *default_resource_group; /* created when missing; NULL = "default" */
    const char *default_scheduler;  /* sequencer of created groups; NULL = "fifo" */
    const char *default_selector;   /* NULL = "auto" (frag for groups with
                                       accelerators, else concentrated) */
    /* Agent ids whose keypairs are created on first start (comma separated,
     * may be NULL); each is written to data_dir/agents/<id>.key. */
    const char *bootstrap_agents;
    uint32_t max_sessions_per_pass; /* 0 = unlimited */
    /* v2: kernel addresses of cluster networks; each agent gets a /20 of
     * it (stable across restarts), each multi-kernel session a /27 of the
     * agent's on every agent it runs on. NULL = "10.128.0.0/9". */
    const char *cluster_cidr;
    /* v3: 1 = create a new cluster (a new admin.key); refused with
     * SKV_ESTATE where data_dir already holds manager.db or its WAL.
     * Without it a new cluster is created only in a data_dir with no
     * database and no admin.key. */
    uint32_t init;
    /* v3: where admin.backup writes (absolute; created 0700 when first
     * used). NULL = data_dir/backups. */
    const char *backup_dir;
    /* v4: where the state lives. NULL, "" or "sqlite": manager.db in
     * data_dir (the default). "postgresql://..." / "postgres://..." or a
     * libpq "key=value" string: a PostgreSQL server (see
     * docs/architecture.md, "PostgreSQL and standby managers"); checked
     * before anything is created: a malformed string is SKV_EINVAL, an
     * unreachable server SKV_EIO naming it (never its password). The
     * keys (admin.key, agents/) stay in data_dir. */
    const char *store;
    /* v5: storage hosts of virtual folders; the first is the default of
     * folders created without a host. None (n 0): one host "local" at
     * data_dir/storage without quotas (quota "none"). */
    const skv_manager_storage_host *storage_hosts;
    size_t n_storage_hosts;
    /* v6: an elected lease (sokovan/manager_lease.h) on the same
     * PostgreSQL store: this manager leads at the lease's epoch, and every
     * write transaction checks it first (a deposed manager's fails with
     * SKV_ESTATE "deposed"). NULL: no lease (one manager per store).
     * Borrowed: it must outlive the manager. SKV_EINVAL with a SQLite
     * store, SKV_ESTATE when the lease is not elected. */
    const struct skv_manager_lease *lease;
    /* v7: scheduler plugins (shared objects, see skv_sched_load_plugin)
     * loaded before any resource group is created or restored, so the
     * default scheduler/selector and stored groups may name what they
     * register. One that cannot be loaded fails skv_manager_open with its
     * error, which names its path. */
    const char *const *sched_plugins;
    size_t n_sched_plugins;
    /* v8: idle limits (idle_timeout of resource groups and policies): a
     * kernel using at least this much CPU (percent of one CPU, averaged
     * over an agent.stats interval) makes its session active. 0 = 5;
     * at most 100000. */
    uint32_t idle_cpu_percent;
} skv_manager_options;

#define SKV_MANAGER_OPTIONS_INIT \
    {SKV_MANAGER_OPTIONS_VERSION, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, \
     NULL, 0, NULL, NULL, NULL, 0, NULL, NULL, 0, 0}

/* Open (creating on first start) the database in data_dir, load keys, rebuild
 * the scheduler. An existing manager.db must be sokovan's and pass SQLite's
 * quick_check; an empty, foreign or damaged one, or a missing one where a
 * cluster lived (admin.key present), is refused with SKV_ESTATE and left
 * untouched (docs/architecture.md, "Recovering the manager database"). On first start an admin user "admin" and its keypair are
 * created and written to data_dir/admin.key (mode 0600, two lines:
 * "access_key=..." and "secret_key=..."). now_ms: the host's clock. */
SKV_EXTERN int skv_manager_open(skv_manager **out,
                                const skv_manager_options *opts,
                                skv_manager_send_fn send, void *payload,
                                int64_t now_ms, skv_error *err);
/* Closes the database. Accepts NULL. Sends nothing. */
SKV_EXTERN void skv_manager_free(skv_manager *m);

/* Full PRAGMA integrity_check of data_dir/manager.db, for a stopped manager
 * (a running one holds it locked: SKV_EBUSY). 0 when sound; SKV_ESTATE when
 * the file is empty, foreign or damaged, with every problem found, one per
 * line, in *report (may be NULL; free with skv_free); SKV_ENOENT when there
 * is no database. */
SKV_EXTERN int skv_manager_check(const char *data_dir, char **report,
                                 skv_error *err);

/* A connection was accepted. conn_id: chosen by the host, unique while open,
 * never 0. peer: for logs ("unix", "127.0.0.1:5443"); may be NULL. */
SKV_EXTERN int skv_manager_conn_open(skv_manager *m, uint64_t conn_id,
                                     const char *peer, skv_error *err);
/* Mark an open connection as crossing the network without encryption
 * (plain TCP). Requests whose reply would carry a secret key
 * (admin.keypair create) are then refused with SKV_EPERM before anything
 * is created. Hosts call it right after skv_manager_conn_open unless the
 * operator allowed plaintext secrets. SKV_ENOENT for an unknown id. */
SKV_EXTERN int skv_manager_conn_mark_plaintext(skv_manager *m,
                                               uint64_t conn_id,
                                               skv_error *err);
/* The connection closed (either side). An agent's connection closing does
 * not make it lost at once: the heartbeat timeout does. */
SKV_EXTERN void skv_manager_conn_close(skv_manager *m, uint64_t conn_id,
                                       int64_t now_ms);

/* 1 once a request received on conn_id passed signature verification, 0
 * before (the first frame of a connection either authenticates it or gets
 * an error reply and a negative return from handle_frame), SKV_ENOENT for
 * a connection that is not open, SKV_EINVAL for NULL. Hosts use it to lift
 * their pre-authentication limits (a small frame limit, a timeout, being
 * the first dropped under load): sokovan-manager asks after each frame of a
 * connection not yet authenticated. */
SKV_EXTERN int skv_manager_conn_authenticated(const skv_manager *m,
                                              uint64_t conn_id);

/* One frame payload (without the length prefix) received on conn_id. Replies
 * go through the send callback. Returns 0, or negative when the host must
 * close the connection (after flushing what was sent): malformed, oversized
 * or unauthenticated input gets an error reply first. */
SKV_EXTERN int skv_manager_handle_frame(skv_manager *m, uint64_t conn_id,
                                        const void *payload, size_t len,
                                        int64_t now_ms, skv_error *err);

/* Periodic work: connections whose send failed are closed, heartbeat
 * timeouts (agent lost), pending timeouts and session lifetime limits (once a
 * second), and a scheduling pass when something changed (and at least once a
 * second). Requests an agent did not answer before its connection closed are
 * sent again when it registers again. Call it when skv_manager_next_tick_ms()
 * says so and soon after handle_frame returned (the host may call it on every
 * loop iteration; it is cheap when idle). */
SKV_EXTERN int skv_manager_tick(skv_manager *m, int64_t now_ms,
                                skv_error *err);
/* How soon the manager wants the next tick, in ms from now (0: at once). */
SKV_EXTERN int64_t skv_manager_next_tick_ms(const skv_manager *m,
                                            int64_t now_ms);
/* session.submit requests are recorded in one transaction per batch and
 * acknowledged when it commits: at the next tick, before any other
 * request, or now. Hosts that want each reply at once (tests) call this
 * after handle_frame; skv_manager_tick does it first. Writes nothing when
 * no submission waits. A failed commit sends each waiting submission an
 * error reply and returns the error. */
SKV_EXTERN int skv_manager_flush(skv_manager *m, int64_t now_ms,
                                 skv_error *err);

/* Counters for logs and metrics (a snapshot). */
#define SKV_MANAGER_STATS_VERSION 3
typedef struct skv_manager_stats {
    unsigned version;              /* SKV_MANAGER_STATS_VERSION */
    uint64_t sessions_by_state[10];/* index: skv_manager_session_state */
    uint32_t agents_alive;
    uint32_t agents_lost;
    uint64_t passes;               /* scheduling passes run */
    uint64_t placements;           /* sessions placed, total */
    uint64_t pass_ns_total;        /* time spent in passes */
    uint64_t requests;             /* frames handled */
    uint64_t requests_refused;     /* error replies sent */
    /* version >= 2 */
    uint64_t preemptions;          /* sessions evicted (priority, reclaim) */
    /* version >= 3: running sessions the manager terminated for their
     * idle_timeout, and for a maximum lifetime (their own, their group's
     * or their owner's policy's) */
    uint64_t reclaimed_idle;
    uint64_t reclaimed_lifetime;
} skv_manager_stats;

typedef enum skv_manager_session_state {
    SKV_SESSION_PENDING = 0,
    SKV_SESSION_SCHEDULED = 1,
    SKV_SESSION_PREPARING = 2,
    SKV_SESSION_RUNNING = 3,
    SKV_SESSION_TERMINATING = 4,
    SKV_SESSION_TERMINATED = 5,
    SKV_SESSION_CANCELLED = 6,
    SKV_SESSION_ERROR = 7
} skv_manager_session_state;

/* "PENDING", ...; "?" for others. */
SKV_EXTERN const char *skv_manager_session_state_name(
    skv_manager_session_state s);
SKV_EXTERN int skv_manager_session_state_parse(skv_manager_session_state *out,
                                               const char *name,
                                               skv_error *err);

SKV_EXTERN int skv_manager_get_stats(const skv_manager *m,
                                     skv_manager_stats *out, skv_error *err);

/* ---- metrics (sokovan/metrics.h) ------------------------------------------
 * Register (idempotently) the manager's Prometheus families in reg and
 * bring them up to date; see docs/api/manager.md for the list: sessions by
 * state, placements (total and per second over the interval since the
 * previous collect), scheduling pass duration histogram, pending sessions
 * by resource group and reason, agents by state, capacity and use per
 * resource group and slot, container start latency histogram, requests.
 * Call it from the manager's thread, e.g. once a second, then render reg.
 *
 * The first call binds reg to the manager (borrowed): from then on the
 * manager also observes pass durations and start latencies into it as
 * they happen. reg must outlive the manager, or be unbound first with
 * skv_manager_metrics_detach(); a call with another registry rebinds.
 * SKV_EINVAL for NULL arguments, SKV_EEXIST when reg already holds a
 * different family of one of these names (families registered before the
 * failure stay in reg, unbound). */
SKV_EXTERN int skv_manager_metrics_collect(skv_manager *m, skv_metrics *reg,
                                           int64_t now_ms, skv_error *err);
/* Stop observing into the bound registry (it may be freed afterwards).
 * Accepts NULL and an unbound manager. */
SKV_EXTERN void skv_manager_metrics_detach(skv_manager *m);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_MANAGER_H */
