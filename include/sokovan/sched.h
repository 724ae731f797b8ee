/*
 * sokovan/sched.h - the cluster-level scheduler (Sokovan core).
 *
 * A scheduler object holds the whole model: resource groups, agents (each
 * with a device-level view of its accelerators, the same allocation code the
 * agent runs), sessions (gangs of kernels with slot requests), owners
 * (domain / project / user) with their resource policies, and every
 * allocation. Allocations are the single source of truth; agent and owner
 * usage are derived from them and skv_sched_check() verifies that.
 *
 * A scheduling pass (skv_sched_pass) works per resource group: a sequencer
 * orders the pending sessions, predicates (start time, dependencies, quota,
 * concurrency, constraints) filter them, a selector chooses agents and
 * devices, and each session is committed whole or rolled back without a
 * trace. Blocked heads get a reservation that later sessions backfill around;
 * higher-priority sessions may name lower-priority victims to preempt. The
 * pass returns placements and preemption decisions; it never kills anything.
 *
 * Time never comes from a clock: every call that needs it takes now_ms
 * (any monotonic millisecond scale the caller chooses), so decisions are
 * deterministic and a simulator can drive the same code.
 *
 * Plugins: selectors and sequencers are versioned function tables
 * (abi_version first, fields only appended); they can be built in, registered
 * by the host, or loaded from a shared object.
 *
 * Thread-safety: a skv_sched object is not thread-safe; serialize every call
 * on one object (reads included, since reads may update cached usage).
 * Distinct objects are independent. Results (skv_sched_result) are plain
 * caller-owned data, independent of the scheduler once returned.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_SCHED_H
#define SOKOVAN_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/slots.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of one scheduler. */
#define SKV_SCHED_SLOTS_MAX 16      /* distinct slot names in one scheduler */
#define SKV_SCHED_DEVICES_MAX 64    /* devices (accelerators) per agent */
#define SKV_SCHED_KERNELS_MAX 4096  /* kernels per session */
#define SKV_SCHED_NAME_MAX 256      /* ids and names, including the NUL */
#define SKV_SCHED_REASON_SLOTS_MAX 8

typedef struct skv_sched skv_sched;

/* ---- scheduler ---------------------------------------------------------- */

#define SKV_SCHED_OPTIONS_VERSION 1
typedef struct skv_sched_options {
    unsigned version;              /* SKV_SCHED_OPTIONS_VERSION */
    /* Fair-share: historical usage halves every half_life_ms (default 1 h). */
    int64_t fairshare_half_life_ms;
} skv_sched_options;
#define SKV_SCHED_OPTIONS_INIT {SKV_SCHED_OPTIONS_VERSION, 3600000}

/* opts may be NULL (defaults). */
SKV_EXTERN int skv_sched_new(skv_sched **out, const skv_sched_options *opts,
                             skv_error *err);
SKV_EXTERN void skv_sched_free(skv_sched *s);

/* ---- resource groups ---------------------------------------------------- */

/* The default selector: "frag" for a group with accelerators (switched to
 * when the first agent with a device joins it, and kept), "concentrated"
 * until then. Not a registered selector: a name no plugin may take. */
#define SKV_SCHED_SELECTOR_AUTO "auto"

#define SKV_SCHED_GROUP_OPTIONS_VERSION 1
typedef struct skv_sched_group_options {
    unsigned version;            /* SKV_SCHED_GROUP_OPTIONS_VERSION */
    const char *sequencer;       /* registered name; NULL = "fifo" */
    const char *sequencer_config;/* passed to the plugin's create(); may be NULL */
    const char *selector;        /* registered name; NULL = "auto"
                                    (SKV_SCHED_SELECTOR_AUTO) */
    const char *selector_config; /* may be NULL */
    /* Aging: a pending session gains one priority level per aging_ms waited
     * (0 = no aging). Applies to the ordering (sequencers see the aged
     * priority) and to preemption rank. */
    int64_t aging_ms;
    /* Backfill: the first max_reservations sessions blocked for lack of
     * resources hold a reservation; later sessions may not use reserved
     * agents unless they are estimated to end before it starts. 0 = no
     * reservations (pure greedy: big sessions may starve). */
    uint32_t max_reservations;
    /* Priority preemption and reclaim of borrowed capacity. */
    bool preemption;
    int64_t preempt_min_runtime_ms; /* victims must have run this long */
} skv_sched_group_options;
#define SKV_SCHED_GROUP_OPTIONS_INIT \
    {SKV_SCHED_GROUP_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 0, 1, false, 0}

/* name: 1..SKV_SCHED_NAME_MAX-1 printable characters. opts may be NULL.
 * Unknown sequencer or selector: SKV_ENOENT. Existing name: SKV_EEXIST. */
SKV_EXTERN int skv_sched_group_add(skv_sched *s, const char *name,
                                   const skv_sched_group_options *opts,
                                   skv_error *err);
/* Only an empty group (no agents, no live sessions): else SKV_EBUSY. */
SKV_EXTERN int skv_sched_group_remove(skv_sched *s, const char *name,
                                      skv_error *err);
/* Replace the agent selector of a group in place (agents and sessions
 * stay); later passes use it. The selector starts with fresh state from
 * config (may be NULL). Unknown group or selector: SKV_ENOENT; a config
 * the selector refuses: its error. On any error the old selector stays. */
SKV_EXTERN int skv_sched_group_set_selector(skv_sched *s, const char *name,
                                            const char *selector,
                                            const char *config,
                                            skv_error *err);
/* Turn a group's priority preemption on or off and set how long a victim
 * must have run (>= 0), in place; the next pass uses them. Unknown group:
 * SKV_ENOENT; a negative min_runtime_ms: SKV_EINVAL (nothing changes). */
SKV_EXTERN int skv_sched_group_set_preemption(skv_sched *s, const char *name,
                                              bool preemption,
                                              int64_t min_runtime_ms,
                                              skv_error *err);

/* Which victims a preemptor considers first; either way it takes whole
 * sessions, the fewest that make it fit, and drops any it can do without.
 * LOWEST_PRIORITY (the default): the lowest priority first, then the
 * least work lost (the youngest). NEWEST: the youngest first (least work
 * lost), then the lowest priority. */
typedef enum skv_sched_preempt_order {
    SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY = 0,
    SKV_SCHED_PREEMPT_ORDER_NEWEST = 1
} skv_sched_preempt_order;

/* Set a group's preemption order in place; the next pass uses it. Unknown
 * group: SKV_ENOENT; an order not in the enum: SKV_EINVAL (nothing
 * changes). */
SKV_EXTERN int skv_sched_group_set_preempt_order(skv_sched *s,
                                                 const char *name,
                                                 skv_sched_preempt_order order,
                                                 skv_error *err);

/* ---- agents ------------------------------------------------------------- */

/* One accelerator of an agent. A device can be taken whole through
 * whole_slot (requests of whole units, e.g. "cuda.device=2") or shared
 * through share_slot (e.g. "cuda.shares=0.5"), never both at once. */
typedef struct skv_sched_device_spec {
    const char *id;          /* e.g. "nvml3"; may be NULL (then "<index>") */
    const char *whole_slot;  /* e.g. "cuda.device" (required) */
    const char *share_slot;  /* e.g. "cuda.shares"; NULL = not shareable */
    skv_qty share_capacity;  /* share units this device holds (1000 = 1.0);
                                0 means 1000 */
} skv_sched_device_spec;

typedef struct skv_sched_label {
    const char *key;
    const char *value;
} skv_sched_label;

/* An agent's layout, for whole-device choices that follow the node mapper
 * (sokovan/node.h): a kernel asking for k whole devices of one slot gets the
 * k free devices closest to each other (PCIe switch, then NVLink bandwidth)
 * on the fewest NUMA nodes, leaving PCIe-switch pairs whole. Arrays are
 * copied. */
typedef struct skv_sched_agent_topology {
    const int32_t *device_numa;   /* [n_devices] NUMA node, -1 unknown
                                     (required) */
    /* [n_devices * n_devices]: the skv_topo_link value (sokovan/topo.h,
     * 1 "pix" .. 5 "sys") of devices i and j at [i * n_devices + j], the
     * diagonal ignored. NULL: by NUMA node only ("node" or "sys"). */
    const uint8_t *links;
    const uint32_t *nvlink_mbps;  /* same shape, NVLink MB/s; NULL: none */
} skv_sched_agent_topology;

/* Version 2 added the topology; version 1 structures are accepted. */
#define SKV_SCHED_AGENT_SPEC_VERSION 2
typedef struct skv_sched_agent_spec {
    unsigned version;              /* SKV_SCHED_AGENT_SPEC_VERSION */
    const char *id;
    const char *resource_group;    /* must exist */
    const char *architecture;      /* e.g. "x86_64"; NULL = "" */
    const char *gpu_model;         /* e.g. "V100"; NULL = "" */
    bool schedulable;              /* false: keeps running work, gets none */
    const skv_slots *capacity;     /* pooled slots (cpu, mem, ...); device
                                      slots must not appear here */
    size_t n_devices;
    const skv_sched_device_spec *devices;
    size_t n_labels;
    const skv_sched_label *labels;
    /* v2: NULL = no layout: whole devices are taken in device order. */
    const skv_sched_agent_topology *topology;
} skv_sched_agent_spec;
#define SKV_SCHED_AGENT_SPEC_INIT \
    {SKV_SCHED_AGENT_SPEC_VERSION, NULL, NULL, NULL, NULL, true, NULL, 0, NULL, 0, NULL, \
     NULL}

SKV_EXTERN int skv_sched_agent_add(skv_sched *s,
                                   const skv_sched_agent_spec *spec,
                                   skv_error *err);
/* Replace an agent's description (same id). Its allocations must still fit
 * (device list unchanged where devices are in use; pooled capacity >= use),
 * else SKV_EBUSY and nothing changes. Changing the resource group needs an
 * idle agent. */
SKV_EXTERN int skv_sched_agent_update(skv_sched *s,
                                      const skv_sched_agent_spec *spec,
                                      skv_error *err);
/* Toggle schedulable without touching anything else. */
SKV_EXTERN int skv_sched_agent_set_schedulable(skv_sched *s, const char *id,
                                               bool schedulable,
                                               skv_error *err);
/* Take one device of an agent out of service (healthy false) or put it back.
 * A device out of service gets no new placement: free, the scheduler holds
 * it whole itself; shared, its share capacity is cut to what its sessions
 * use until they leave; sessions already on it keep it (the caller decides
 * what happens to them). skv_sched_agent_usage leaves it out of the
 * capacity. The state survives skv_sched_agent_update for devices of the
 * same id. Unknown agent or device: SKV_ENOENT. */
SKV_EXTERN int skv_sched_agent_set_device_health(skv_sched *s,
                                                 const char *agent_id,
                                                 const char *device_id,
                                                 bool healthy, skv_error *err);
/* Remove an idle agent; SKV_EBUSY when sessions still hold resources on it. */
SKV_EXTERN int skv_sched_agent_remove(skv_sched *s, const char *id,
                                      skv_error *err);
/* The agent is gone: every session with a kernel on it loses all of its
 * allocations (on every agent) and ends in state SKV_SCHED_LOST, then the
 * agent is removed. *n_lost (may be NULL) receives the number of sessions. */
SKV_EXTERN int skv_sched_agent_lost(skv_sched *s, size_t *n_lost,
                                    const char *id, int64_t now_ms,
                                    skv_error *err);

/* ---- owners and resource policies --------------------------------------- */

typedef enum skv_sched_scope {
    SKV_SCHED_SCOPE_DOMAIN = 0,
    SKV_SCHED_SCOPE_PROJECT = 1,
    SKV_SCHED_SCOPE_USER = 2
} skv_sched_scope;
#define SKV_SCHED_SCOPE_COUNT 3

#define SKV_SCHED_POLICY_VERSION 1
typedef struct skv_sched_policy {
    unsigned version;          /* SKV_SCHED_POLICY_VERSION */
    const skv_slots *limit;    /* hard slot limit; NULL or missing keys =
                                  unlimited (SKV_QTY_UNLIMITED also) */
    uint32_t max_concurrent;   /* scheduled+running sessions; 0 = unlimited */
    uint32_t max_pending;      /* pending sessions (checked at submit);
                                  0 = unlimited */
    /* Hierarchical queue: the share this owner is guaranteed; NULL = none.
     * Owners may use idle capacity beyond it up to guaranteed + borrow_limit
     * (borrow_limit NULL = unlimited borrowing). While an owner is below its
     * guarantee, preemption may reclaim capacity from owners of the same
     * scope that are above theirs (their preemptible sessions). */
    const skv_slots *guaranteed;
    const skv_slots *borrow_limit;
} skv_sched_policy;
#define SKV_SCHED_POLICY_INIT {SKV_SCHED_POLICY_VERSION, NULL, 0, 0, NULL, NULL}

/* Set (replace) the policy of one owner; policy NULL removes it. Lowering a
 * limit below current use is allowed: running work is kept, new work waits. */
SKV_EXTERN int skv_sched_policy_set(skv_sched *s, skv_sched_scope scope,
                                    const char *name,
                                    const skv_sched_policy *policy,
                                    skv_error *err);

/* Current use of one owner. usage: a new vector (free with skv_slots_free),
 * may be NULL. Counts may be NULL. Unknown owner: zeros, not an error. */
SKV_EXTERN int skv_sched_owner_usage(skv_slots **usage, uint32_t *n_active,
                                     uint32_t *n_pending, const skv_sched *s,
                                     skv_sched_scope scope, const char *name,
                                     skv_error *err);

/* ---- quotas per resource group (the quota tree) ------------------------- */

/* One owner's quota in one resource group. Owners form a tree through
 * their sessions: domain -> project -> user. guaranteed is the owner's
 * deserved share of the group; what it leaves idle others may borrow. The
 * owner may use up to min(limit, guaranteed + borrow_limit) (a missing key
 * of limit or borrow_limit: no ceiling there). With the group's preemption
 * on, a pending session whose owner is under its guarantee reclaims from
 * its sibling (the owner of the same scope where the two sessions' owners
 * first differ, domain first) that uses more than its own guarantee of a
 * slot the waiter is guaranteed: that sibling's preemptible sessions holding
 * that slot, cause SKV_SCHED_PREEMPT_RECLAIM. Flat owner policies
 * (skv_sched_policy_set) apply as well, across groups. */
#define SKV_SCHED_QUOTA_VERSION 1
typedef struct skv_sched_quota {
    unsigned version;              /* SKV_SCHED_QUOTA_VERSION */
    const skv_slots *guaranteed;   /* NULL = no guarantee */
    const skv_slots *limit;        /* NULL or missing keys = no hard max */
    const skv_slots *borrow_limit; /* beyond guaranteed; NULL = no ceiling */
} skv_sched_quota;
#define SKV_SCHED_QUOTA_INIT {SKV_SCHED_QUOTA_VERSION, NULL, NULL, NULL}

/* Set (replace) the quota of owner `name` of `scope` in resource group
 * `group` (which must exist: SKV_ENOENT); q NULL removes it. Use above a
 * lowered quota is kept; new work waits. Too many slot names: SKV_ERANGE;
 * on any error nothing changes. */
SKV_EXTERN int skv_sched_quota_set(skv_sched *s, skv_sched_scope scope,
                                   const char *name, const char *group,
                                   const skv_sched_quota *q, skv_error *err);
/* What owner `name` of `scope` uses in `group` now (its scheduled and
 * running sessions there): a new vector (skv_slots_free). Unknown owner or
 * group: an empty vector, not an error. */
SKV_EXTERN int skv_sched_quota_usage(skv_slots **used, const skv_sched *s,
                                     skv_sched_scope scope, const char *name,
                                     const char *group, skv_error *err);

/* ---- sessions ----------------------------------------------------------- */

typedef enum skv_sched_session_type {
    SKV_SCHED_INTERACTIVE = 0,
    SKV_SCHED_BATCH = 1,
    SKV_SCHED_INFERENCE = 2
} skv_sched_session_type;

typedef enum skv_sched_cluster_mode {
    SKV_SCHED_SINGLE_NODE = 0, /* every kernel on the same agent */
    SKV_SCHED_MULTI_NODE = 1   /* kernels may spread over agents */
} skv_sched_cluster_mode;

typedef enum skv_sched_role {
    SKV_SCHED_ROLE_MAIN = 0,
    SKV_SCHED_ROLE_SUB = 1
} skv_sched_role;

typedef struct skv_sched_kernel_spec {
    skv_sched_role role;        /* exactly one MAIN per session */
    const skv_slots *request;   /* must not be empty or all zero */
} skv_sched_kernel_spec;

/* Version 2 added the label constraints; version 1 structures (without
 * them) are accepted. */
#define SKV_SCHED_SESSION_SPEC_VERSION 2
typedef struct skv_sched_session_spec {
    unsigned version;                 /* SKV_SCHED_SESSION_SPEC_VERSION */
    const char *id;
    const char *domain;               /* owners; NULL = "" (no policy) */
    const char *project;
    const char *user;
    const char *resource_group;       /* must exist */
    skv_sched_session_type type;
    int32_t priority;                 /* higher runs first (priority bands) */
    skv_sched_cluster_mode cluster_mode;
    bool one_kernel_per_agent;        /* multi-node: distinct agents */
    size_t n_kernels;                 /* cluster size, 1..KERNELS_MAX */
    const skv_sched_kernel_spec *kernels;
    /* constraints */
    const char *architecture;         /* NULL = any */
    size_t n_gpu_models;              /* accepted agent gpu_model; 0 = any */
    const char *const *gpu_models;
    size_t n_designated;              /* only these agents; 0 = any */
    const char *const *designated_agents;
    /* sessions that must have FINISHED before this one may start */
    size_t n_depends;
    const char *const *depends_on;
    int64_t not_before_ms;            /* earliest start; 0 = none */
    int64_t estimated_duration_ms;    /* 0 = unknown */
    bool preemptible;
    /* v2: agent labels every agent of the session must carry (key and
     * value equal; all of them); 0 = any */
    size_t n_label_constraints;
    const skv_sched_label *label_constraints;
} skv_sched_session_spec;
#define SKV_SCHED_SESSION_SPEC_INIT                                          \
    {SKV_SCHED_SESSION_SPEC_VERSION, NULL, NULL, NULL, NULL, NULL,           \
     SKV_SCHED_BATCH, 0, SKV_SCHED_SINGLE_NODE, false, 0, NULL, NULL, 0,     \
     NULL, 0, NULL, 0, NULL, 0, 0, false, 0, NULL}

typedef enum skv_sched_state {
    SKV_SCHED_PENDING = 0,    /* waiting for a pass */
    SKV_SCHED_SCHEDULED = 1,  /* resources allocated by a pass */
    SKV_SCHED_RUNNING = 2,    /* the agent confirmed the start */
    SKV_SCHED_FINISHED = 3,   /* ended normally; resources freed */
    SKV_SCHED_FAILED = 4,     /* ended with an error; resources freed */
    SKV_SCHED_CANCELLED = 5,  /* cancelled; resources freed */
    SKV_SCHED_LOST = 6        /* its agent was lost; resources freed */
} skv_sched_state;

SKV_EXTERN const char *skv_sched_state_name(skv_sched_state state);

/* Add a pending session, submitted at now_ms. Refused (nothing kept):
 * SKV_EEXIST duplicate id, SKV_ENOENT unknown group, SKV_ENOSPC when an
 * owner's max_pending is reached, SKV_EINVAL bad spec (names the field). */
SKV_EXTERN int skv_sched_submit(skv_sched *s,
                                const skv_sched_session_spec *spec,
                                int64_t now_ms, skv_error *err);
/* Pending, scheduled or running -> CANCELLED, freeing its resources. */
SKV_EXTERN int skv_sched_cancel(skv_sched *s, const char *id, int64_t now_ms,
                                skv_error *err);
/* SCHEDULED -> RUNNING (the agent started it; preemption runtime counts
 * from here). */
SKV_EXTERN int skv_sched_mark_started(skv_sched *s, const char *id,
                                      int64_t now_ms, skv_error *err);
/* SCHEDULED or RUNNING -> FINISHED (failed false) or FAILED, freeing its
 * resources. Dependants of a FAILED session never start (reason
 * SKV_SCHED_REASON_DEPENDENCY_FAILED). */
SKV_EXTERN int skv_sched_mark_finished(skv_sched *s, const char *id,
                                       bool failed, int64_t now_ms,
                                       skv_error *err);
/* SCHEDULED or RUNNING -> PENDING again (e.g. after preemption, or the agent
 * refused the start), freeing its resources; keeps its submit time. */
SKV_EXTERN int skv_sched_requeue(skv_sched *s, const char *id, int64_t now_ms,
                                 skv_error *err);

/* ---- adoption (a manager restarting from its database) -------------------- */

/* One device-level share of an adopted kernel, named (slot indexes are not
 * stable across scheduler instances). */
typedef struct skv_sched_adopt_share {
    const char *device_id;    /* the agent's device id */
    const char *slot;         /* its whole_slot or share_slot */
    bool whole;               /* taken whole (exclusive) */
    skv_qty amount;           /* 1000 for whole, else share units */
} skv_sched_adopt_share;

typedef struct skv_sched_adopt_kernel {
    const char *agent_id;     /* must be known to the scheduler */
    size_t n_shares;
    const skv_sched_adopt_share *shares;
} skv_sched_adopt_kernel;

/* Re-admit a session that already holds resources: spec as for
 * skv_sched_submit (its kernels' requests give the pooled slots), kernels[i]
 * where kernel i sits (n_kernels == spec->n_kernels), state SCHEDULED or
 * RUNNING. Owner usage, agent and device use are charged exactly as a pass
 * would have. All or nothing: SKV_ENOSPC naming the agent and slot when it
 * no longer fits (nothing changed), SKV_EEXIST for a known id, SKV_ENOENT
 * for an unknown agent, device or group. */
SKV_EXTERN int skv_sched_adopt(skv_sched *s, const skv_sched_session_spec *spec,
                               const skv_sched_adopt_kernel *kernels,
                               size_t n_kernels, skv_sched_state state,
                               int64_t submitted_ms, int64_t started_ms,
                               skv_error *err);
/* Forget a session in a final state (FINISHED/FAILED/CANCELLED/LOST);
 * SKV_ESTATE otherwise. */
SKV_EXTERN int skv_sched_session_remove(skv_sched *s, const char *id,
                                        skv_error *err);
SKV_EXTERN int skv_sched_session_state(skv_sched_state *out,
                                       const skv_sched *s, const char *id,
                                       skv_error *err);

/* ---- pending reasons ---------------------------------------------------- */

typedef enum skv_sched_reason_code {
    SKV_SCHED_REASON_NONE = 0,          /* not looked at by a pass yet */
    SKV_SCHED_REASON_NOT_BEFORE = 1,    /* earliest start in the future */
    SKV_SCHED_REASON_DEPENDENCY = 2,    /* `detail` has not finished yet */
    SKV_SCHED_REASON_DEPENDENCY_FAILED = 3, /* `detail` failed, was
                                               cancelled or lost */
    SKV_SCHED_REASON_DEPENDENCY_UNKNOWN = 4, /* no session named `detail` */
    SKV_SCHED_REASON_QUOTA = 5,         /* owner `scope`/`detail` limit: slot
                                           short by shortfall */
    SKV_SCHED_REASON_CONCURRENCY = 6,   /* owner's max_concurrent reached */
    SKV_SCHED_REASON_NO_AGENT = 7,      /* no schedulable agent of the group
                                           meets the constraints */
    SKV_SCHED_REASON_RESOURCES = 8,     /* candidates exist but are short; see
                                           slots[] */
    SKV_SCHED_REASON_RESERVED = 9,      /* fits only on agents reserved for a
                                           blocked session (`detail`) */
    SKV_SCHED_REASON_PREEMPTING = 10,   /* waits for its preemption victims */
    SKV_SCHED_REASON_HAS_RESERVATION = 11, /* blocked, holds a reservation
                                              starting at reserved_at_ms */
    SKV_SCHED_REASON_PASS_LIMIT = 12    /* the pass stopped before it */
} skv_sched_reason_code;

SKV_EXTERN const char *skv_sched_reason_name(skv_sched_reason_code code);

typedef struct skv_sched_reason_slot {
    const char *slot;       /* slot name */
    uint32_t agents_short;  /* candidate agents where this slot is short */
    skv_qty min_shortfall;  /* smallest shortfall over those agents */
} skv_sched_reason_slot;

/* Strings are borrowed from the scheduler: valid until it is next modified. */
typedef struct skv_sched_reason {
    skv_sched_reason_code code;
    const char *resource_group;
    int64_t evaluated_ms;          /* now_ms of the pass that set it */
    const char *detail;            /* dependency id, owner name, or the
                                      session holding the reservation */
    skv_sched_scope scope;         /* QUOTA / CONCURRENCY */
    const char *slot;              /* QUOTA: the slot over the limit */
    skv_qty shortfall;             /* QUOTA: by how much */
    uint32_t agents_candidate;     /* RESOURCES: agents meeting constraints */
    size_t n_slots;                /* RESOURCES: short slots, name order */
    skv_sched_reason_slot slots[SKV_SCHED_REASON_SLOTS_MAX];
    int64_t reserved_at_ms;        /* HAS_RESERVATION: estimated start, or -1
                                      when unknown (no duration estimates) */
} skv_sched_reason;

/* The reason of a pending session (SKV_ESTATE when not pending). */
SKV_EXTERN int skv_sched_session_reason(skv_sched_reason *out,
                                        const skv_sched *s, const char *id,
                                        skv_error *err);
/* One line, e.g. "resources short in group 'gpu': cuda.device short on 12
 * of 12 candidate agents (by >= 1)". Free with skv_free. */
SKV_EXTERN int skv_sched_reason_format(char **out, const skv_sched_reason *r,
                                       skv_error *err);

/* ---- plugin views (borrowed, valid during the callback only) ------------ */

typedef struct skv_sched_device_view {
    const char *id;
    uint8_t whole_slot;       /* index into the scheduler's slot names */
    uint8_t share_slot;       /* SKV_SCHED_NO_SLOT when not shareable */
    bool whole_taken;         /* allocated whole (exclusive) */
    skv_qty share_capacity;   /* share units */
    skv_qty share_used;       /* share units taken through share_slot */
} skv_sched_device_view;
#define SKV_SCHED_NO_SLOT 0xFF

typedef struct skv_sched_agent_view {
    const char *id;
    const char *architecture;
    const char *gpu_model;
    uint32_t index;           /* position in its resource group, 0..n-1 */
    uint32_t group_size;      /* agents in the group */
    size_t n_slots;           /* the scheduler's slot table (same for all) */
    const char *const *slot_names;
    const skv_qty *capacity;  /* n_slots entries (device slots: summed) */
    const skv_qty *used;      /* n_slots entries */
    size_t n_devices;
    const skv_sched_device_view *devices;
    uint32_t n_sessions;      /* sessions with a kernel here */
} skv_sched_agent_view;

typedef struct skv_sched_kernel_view {
    const char *session_id;
    uint32_t kernel;          /* index in the session */
    uint32_t n_kernels;
    skv_sched_role role;
    int32_t priority;
    skv_sched_session_type type;
    size_t n_slots;
    const skv_qty *request;   /* n_slots entries, dense, 0 = not requested */
} skv_sched_kernel_view;

/* One device-level share of a placement. */
typedef struct skv_sched_device_share {
    uint32_t device;          /* index in the agent's device list */
    uint8_t slot;             /* slot index (whole_slot or share_slot) */
    bool whole;               /* device taken whole */
    skv_qty amount;           /* 1000 for whole, else share units */
} skv_sched_device_share;

/* The devices the allocation map would give this kernel on this agent now,
 * without changing anything (what a selector can use to judge the result,
 * e.g. fragmentation). *n_out receives the count (<= SKV_SCHED_DEVICES_MAX
 * entries are written to out). Returns 0 when the kernel fits, SKV_ENOSPC
 * when not (pooled or device level). */
SKV_EXTERN int skv_sched_agent_view_trial(skv_sched_device_share *out,
                                          size_t *n_out,
                                          const skv_sched_agent_view *agent,
                                          const skv_sched_kernel_view *kernel);

/* Owner state a sequencer sees. */
typedef struct skv_sched_owner_view {
    const char *name;
    skv_sched_scope scope;
    size_t n_slots;
    const skv_qty *usage;           /* current allocations, n_slots entries */
    const skv_qty *capacity;        /* the group's total capacity */
    uint64_t dominant_share_ppm;    /* max over slots usage/capacity, 1e6 = all */
    uint64_t decayed_usage;         /* fair-share: dominant-share-ppm x ms,
                                       decayed by the half-life */
} skv_sched_owner_view;

typedef struct skv_sched_session_view {
    const char *id;
    const char *domain;
    const char *project;
    const char *user;
    skv_sched_session_type type;
    int32_t priority;          /* as submitted */
    int32_t aged_priority;     /* priority + waited / aging_ms */
    int64_t submitted_ms;
    uint64_t seq;              /* submit order (unique, increasing) */
    uint32_t n_kernels;
    int64_t estimated_duration_ms;
} skv_sched_session_view;

/* ---- selector plugins --------------------------------------------------- */

#define SKV_SCHED_SELECTOR_ABI 1
#define SKV_SCHED_SCORE_REJECT INT64_MIN

typedef struct skv_sched_selector {
    unsigned abi_version;     /* SKV_SCHED_SELECTOR_ABI */
    const char *name;         /* registry key */
    /* Optional: per-group state from the group's selector_config. */
    int (*create)(void **state, const char *config, skv_error *err);
    void (*destroy)(void *state);
    /* Required: score one candidate agent for one kernel. Only called for
     * agents that meet the constraints and on which the kernel fits at the
     * device level. Higher wins; ties go to the lower agent index.
     * SKV_SCHED_SCORE_REJECT refuses the agent. */
    int64_t (*score)(void *state, const skv_sched_agent_view *agent,
                     const skv_sched_kernel_view *kernel);
    /* Optional: a kernel was placed on agent (after the map changed). */
    void (*placed)(void *state, const skv_sched_agent_view *agent,
                   const skv_sched_kernel_view *kernel);
    /* Optional: a pass over the group starts. */
    void (*pass_begin)(void *state, int64_t now_ms);
    /* SKV_SCHED_SEL_HINT_*: 0 = score every candidate (exact, O(agents)
     * per kernel). A hint promises that the score only prefers agents with
     * fewer (PACK) or more (SPREAD) entirely free devices; the pass then
     * walks its free-device index in that order and takes the first agent
     * of the best non-empty level that fits and is not rejected (within a
     * level, index order, not score order). */
    unsigned hints;
} skv_sched_selector;

#define SKV_SCHED_SEL_HINT_PACK 0x1u
#define SKV_SCHED_SEL_HINT_SPREAD 0x2u

/* ---- sequencer plugins -------------------------------------------------- */

#define SKV_SCHED_SEQUENCER_ABI 1

/* The sequencer's rank depends on the owner's usage: the pass groups pending
 * sessions per owner (of `scope`, in submit order) and ranks each owner's
 * head, re-ranking that owner after every placement. */
#define SKV_SCHED_SEQ_PER_OWNER 0x1u

typedef struct skv_sched_sequencer {
    unsigned abi_version;     /* SKV_SCHED_SEQUENCER_ABI */
    const char *name;
    unsigned flags;           /* SKV_SCHED_SEQ_* */
    skv_sched_scope scope;    /* owner scope for SKV_SCHED_SEQ_PER_OWNER */
    int (*create)(void **state, const char *config, skv_error *err);
    void (*destroy)(void *state);
    /* Required: the rank of a pending session; lower goes first; ties by
     * submit order. owner is the session's owner of `scope` (always given,
     * only meaningful with SKV_SCHED_SEQ_PER_OWNER). */
    int64_t (*rank)(void *state, const skv_sched_session_view *session,
                    const skv_sched_owner_view *owner, int64_t now_ms);
} skv_sched_sequencer;

/* Make a plugin available by name to groups added later. The table must
 * outlive the scheduler. SKV_EVERSION on an ABI mismatch, SKV_EEXIST when
 * the name is taken. Built in: sequencers "fifo", "lifo", "priority", "drf",
 * "fairshare"; selectors "concentrated", "dispersed", "roundrobin". */
SKV_EXTERN int skv_sched_register_selector(skv_sched *s,
                                           const skv_sched_selector *sel,
                                           skv_error *err);
SKV_EXTERN int skv_sched_register_sequencer(skv_sched *s,
                                            const skv_sched_sequencer *seq,
                                            skv_error *err);
/* dlopen a plugin and register what it exports: the symbols
 * "skv_sched_selector_plugin" and/or "skv_sched_sequencer_plugin", each a
 * function `const skv_sched_selector *(void)` / `const skv_sched_sequencer
 * *(void)`. The object stays loaded until skv_sched_free. SKV_ENOENT when it
 * exports neither; SKV_EVERSION on ABI mismatch (names both versions). */
SKV_EXTERN int skv_sched_load_plugin(skv_sched *s, const char *path,
                                     skv_error *err);

/* ---- the pass ----------------------------------------------------------- */

/* Optional veto of one kernel on one agent (health checks, tests). Return
 * true to allow. */
typedef bool (*skv_sched_agent_filter_fn)(const char *session_id,
                                          uint32_t kernel,
                                          const char *agent_id,
                                          void *payload);

#define SKV_SCHED_PASS_OPTIONS_VERSION 2
typedef struct skv_sched_pass_options {
    unsigned version;             /* SKV_SCHED_PASS_OPTIONS_VERSION (1 or 2) */
    const char *resource_group;   /* NULL = every group, in name order */
    size_t max_placements;        /* 0 = unlimited */
    skv_sched_agent_filter_fn filter; /* may be NULL */
    void *filter_payload;
    /* v2: try every pending session in full (no shape-class skipping; see
     * "Incremental pass" in docs/architecture.md). Same placements either
     * way; for comparison and benchmarks. */
    bool full_walk;
} skv_sched_pass_options;
#define SKV_SCHED_PASS_OPTIONS_INIT \
    {SKV_SCHED_PASS_OPTIONS_VERSION, NULL, 0, NULL, NULL, false}

typedef struct skv_sched_kernel_placement {
    uint32_t kernel;                /* index in the session's kernel list */
    const char *agent_id;
    size_t n_devices;
    const skv_sched_device_share *devices;
} skv_sched_kernel_placement;

typedef struct skv_sched_placement {
    const char *session_id;
    const char *resource_group;
    size_t n_kernels;
    const skv_sched_kernel_placement *kernels;
} skv_sched_placement;

typedef enum skv_sched_preempt_cause {
    SKV_SCHED_PREEMPT_PRIORITY = 0, /* lower priority than the waiter */
    SKV_SCHED_PREEMPT_RECLAIM = 1   /* its owner borrows beyond guarantee */
} skv_sched_preempt_cause;

typedef struct skv_sched_preemption {
    const char *victim_id;
    const char *for_session_id;
    skv_sched_preempt_cause cause;
} skv_sched_preemption;

/* A pass's decisions, owned by the caller (skv_sched_result_free). Slot
 * indexes in device shares name entries of slot_names. */
typedef struct skv_sched_result {
    int64_t now_ms;
    size_t n_placements;
    const skv_sched_placement *placements;
    size_t n_preemptions;
    const skv_sched_preemption *preemptions;
    size_t n_considered;           /* pending sessions looked at */
    size_t n_slots;
    const char *const *slot_names;
} skv_sched_result;

/* Run one pass at now_ms. Placed sessions become SCHEDULED; victims are
 * marked and reported (they keep their resources until the caller calls
 * skv_sched_requeue/mark_finished/cancel on them). On error nothing
 * changes. opts may be NULL. */
SKV_EXTERN int skv_sched_pass(skv_sched_result **out, skv_sched *s,
                              int64_t now_ms,
                              const skv_sched_pass_options *opts,
                              skv_error *err);
SKV_EXTERN void skv_sched_result_free(skv_sched_result *r);

/* ---- accounting --------------------------------------------------------- */

/* Recompute every agent's, device's and owner's usage from the allocations
 * and compare with the maintained figures; also checks use <= capacity and
 * the session counters. SKV_ESTATE with the first mismatch described. */
SKV_EXTERN int skv_sched_check(const skv_sched *s, skv_error *err);

/* Current use and capacity of one agent (new vectors, skv_slots_free; either
 * may be NULL). */
SKV_EXTERN int skv_sched_agent_usage(skv_slots **used, skv_slots **capacity,
                                     const skv_sched *s, const char *id,
                                     skv_error *err);

/* Where a scheduled/running session's kernels are (a one-placement result;
 * free with skv_sched_result_free). SKV_ESTATE when it holds nothing. */
SKV_EXTERN int skv_sched_session_placement(skv_sched_result **out,
                                           const skv_sched *s, const char *id,
                                           skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_SCHED_H */
