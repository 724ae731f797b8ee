/* Private to src/sched: the scheduler's data model.
 *
 * Quantities inside the scheduler are dense arrays indexed by the
 * scheduler's slot table (at most SKV_SCHED_SLOTS_MAX names), so the hot
 * path compares fixed-size arrays and never looks names up or allocates.
 * Agents, sessions and owners live in index-addressed tables with string
 * hash maps for lookups by id.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SCHED_INT_H
#define SKV_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skv_internal.h"
#include "sokovan/sched.h"
#include "sokovan/slots.h"
#include "sokovan/alloc.h"

#define NSL SKV_SCHED_SLOTS_MAX
#define SKV__NONE UINT32_MAX

/* ---- string -> index hash map (hmap.c) ---- */
typedef struct skv__hent {
    const char *key; /* borrowed from the entry it indexes */
    uint32_t val;
    uint32_t hash;
} skv__hent;

typedef struct skv__hmap {
    skv__hent *t;
    size_t cap; /* power of two, 0 when empty */
    size_t len;
} skv__hmap;

uint32_t skv__sched_hash(const char *s);
/* SKV__NONE when missing. */
uint32_t skv__hmap_get(const skv__hmap *m, const char *key);
int skv__hmap_put(skv__hmap *m, const char *key, uint32_t val, skv_error *err);
void skv__hmap_del(skv__hmap *m, const char *key);
void skv__hmap_fini(skv__hmap *m);

/* ---- device-level state of one agent (dmap.c) ---- */
typedef struct skv__dstate {
    skv_qty used[NSL];
    const skv_qty *cap;            /* NSL entries */
    uint32_t ndev;
    skv_sched_device_view *dev;    /* ndev entries */
    uint32_t dev_slot_mask;        /* slots served by devices */
    uint32_t whole_slot_mask;      /* slots some device serves whole (a
                                      subset of dev_slot_mask; kept so the
                                      trial need not scan the devices) */
} skv__dstate;

/* Where one kernel went on one agent. */
typedef struct skv__kalloc {
    uint32_t agent;                /* SKV__NONE: not placed */
    uint32_t apos;                 /* position in the agent's alloc list */
    uint16_t ndev;
    skv_sched_device_share *dev;   /* ndev entries (heap), NULL when 0 */
    uint8_t nres;
    skv_alloc_result **res;        /* the agent map's results (agentmap.c) */
} skv__kalloc;

/* Compute the devices the map would give req now, without changing it. */
int skv__dmap_trial(const skv__dstate *d, const skv_qty *req,
                    skv_sched_device_share *out, size_t *n_out);
/* Apply / undo exactly a trial's result (apply does not re-check). */
void skv__dmap_apply(skv__dstate *d, const skv_qty *req,
                     const skv_sched_device_share *sh, size_t n);
void skv__dmap_release(skv__dstate *d, const skv_qty *req,
                       const skv_sched_device_share *sh, size_t n);
/* Per-slot shortfall of req on d (0 where the slot is fine). Device slots:
 * the missing amount at the device level. */
void skv__dmap_shortfall(const skv__dstate *d, const skv_qty *req,
                         skv_qty *short_out);
/* Per slot, what the shortfall compares a request with: short_out[s] is
 * req[s] - avail[s] where req[s] > avail[s], unless no slot is short and
 * the request fails as a whole (SKV_QTY_MAX: unlimited). */
void skv__dmap_avail(const skv__dstate *d, skv_qty *avail);

/* ---- model ---- */
typedef struct skv__aref {
    uint32_t sess;
    uint32_t kernel;
} skv__aref;

typedef struct skv__agent {
    char *id;
    char *arch;
    char *gpu_model;
    uint32_t group;
    uint32_t gpos;                 /* index in group->agents */
    bool schedulable;
    skv_qty cap[NSL];
    skv__dstate d;                 /* d.cap points at cap */
    skv_sched_label *labels;
    size_t nlabels;
    skv__aref *allocs;             /* kernels placed here */
    uint32_t nallocs, allocs_cap;
    uint32_t nsess;                /* distinct sessions (for the view) */
    /* pass scratch */
    uint32_t resv_epoch;
    uint32_t resv_sess;
    int64_t resv_start;            /* INT64_MAX: unknown */
    uint32_t mark_epoch;           /* one-kernel-per-agent bookkeeping */
    uint32_t whole_mask;           /* slots its devices serve whole */
    skv_alloc_map *map;            /* the agent's allocation map (devices) */
    int *dnuma;                    /* [ndev] device NUMA nodes, NULL: no
                                      layout (topology.c) */
    uint8_t *links;                /* [ndev * ndev] skv_topo_link, or NULL */
    uint32_t *nvbw;                /* [ndev * ndev] NVLink MB/s, or NULL */
    uint8_t topo_reach[8];         /* topo_rank.c: [L] most devices within
                                      link class L of one (0: not known) */
    uint8_t mslot[NSL];            /* map slot index per slot, or NO_SLOT */
    uint8_t bkey;                  /* free-device level (bucket) */
    uint32_t bpos;                 /* position in the bucket */
    uint32_t fcls, fpos;           /* free-state class and position in it
                                      (selector_frag_index.c) */
    bool fdirty;                   /* touched since the index last looked */
    struct skv__dhealth *health;   /* devices out of service (health.c);
                                      NULL: none ever was */
} skv__agent;

typedef struct skv__kernel {
    skv_sched_role role;
    skv_qty req[NSL];
    skv__kalloc a;
} skv__kernel;

typedef struct skv__reason {
    skv_sched_reason_code code;
    int64_t evaluated_ms;
    const char *detail;            /* borrowed or detail_owned */
    char *detail_owned;
    skv_sched_scope scope;
    uint8_t slot;                  /* QUOTA slot */
    skv_qty shortfall;
    uint32_t agents_candidate;
    uint8_t nshort;
    uint8_t short_slot[SKV_SCHED_REASON_SLOTS_MAX];
    uint32_t short_agents[SKV_SCHED_REASON_SLOTS_MAX];
    skv_qty short_min[SKV_SCHED_REASON_SLOTS_MAX];
    int64_t reserved_at;
    bool deferred;                 /* skipped by an incremental pass: the
                                      resource detail is computed when asked
                                      (pass_inc.c, reason.c) */
} skv__reason;

typedef struct skv__session {
    char *id;
    uint32_t owner[SKV_SCHED_SCOPE_COUNT];
    uint32_t group;
    skv_sched_session_type type;
    int32_t priority;
    skv_sched_cluster_mode mode;
    bool one_per_agent;
    bool preemptible;
    bool preempt_marked;           /* chosen as a victim */
    bool preemptor;                /* has had victims chosen for it: goes
                                      first so others do not take what the
                                      victims free */
    skv_sched_state state;
    uint32_t nk;
    skv__kernel *k;
    skv_qty total[NSL];
    char *arch;
    char **models;
    size_t nmodels;
    char **designated;
    size_t ndesignated;
    skv_sched_label *need_labels;  /* label constraints (copies) */
    size_t nneed_labels;
    char **deps;
    size_t ndeps;
    int64_t not_before, est_dur, submitted, started;
    uint64_t seq;
    uint32_t pend_pos;             /* in group->pending */
    uint32_t waiting_victims;      /* victims still holding resources */
    uint32_t victim_for;           /* waiter's session index */
    uint32_t mark;                 /* pass scratch */
    uint64_t victim_for_seq;
    uint32_t gq[SKV_SCHED_SCOPE_COUNT]; /* its owners' entry for its group
                                      (skv__owner.gq, quota.c) */
    skv__reason reason;
    bool in_ord;                   /* in group->inc's walk order */
    uint32_t pend_gen;             /* times it became pending (pass_inc.c) */
} skv__session;

/* One owner's quota and use in one resource group (quota.c). Keyed by
 * the group's name, so a group removed and added again finds its quota;
 * entries are never removed (sessions index them). */
typedef struct skv__gquota {
    char *group;
    skv_qty usage[NSL];            /* its sessions in that group */
    bool has_quota;                /* set through skv_sched_quota_set */
    bool has_guarantee;
    uint32_t gmask;                /* slots the guarantee names */
    skv_qty guaranteed[NSL];       /* 0 where not named */
    skv_qty limit[NSL];            /* UNLIMITED where none */
    skv_qty borrow[NSL];           /* UNLIMITED where none */
} skv__gquota;

typedef struct skv__owner {
    char *name;
    skv_sched_scope scope;
    skv_qty usage[NSL];
    uint32_t n_active, n_pending;
    bool has_policy;
    skv_qty limit[NSL];            /* UNLIMITED where none */
    uint32_t max_concurrent, max_pending;
    bool has_guarantee;
    skv_qty guaranteed[NSL];
    skv_qty borrow[NSL];           /* UNLIMITED where none */
    uint64_t hist;                 /* fair-share decayed usage */
    int64_t hist_ms;
    /* pass scratch for per-owner sequencing */
    uint32_t q_epoch, q_head, q_len, q_off;
    skv__gquota *gq;               /* per resource group (quota.c) */
    uint32_t ngq, gq_cap;
    bool has_gquota;               /* some entry has_quota (pass_inc.c) */
} skv__owner;

/* Agents of a group by number of entirely free devices (0..64). */
typedef struct skv__bucket {
    uint32_t *ag;
    /* room[i]: agent ag[i]'s shared room over all its share slots
     * (skv__sched_share_room), beside ag so a pack/spread scan skips
     * agents that cannot take a fraction without touching them */
    skv_qty *room;
    uint32_t n, cap;
} skv__bucket;
#define SKV__BUCKET_FULL (SKV_SCHED_DEVICES_MAX + 1) /* no device room */
#define SKV__NBUCKETS (SKV_SCHED_DEVICES_MAX + 2)

typedef struct skv__group {
    char *name;
    skv__bucket bucket[SKV__NBUCKETS];
    uint32_t *agents;
    uint32_t nagents, agents_cap;
    uint32_t *pending;
    uint32_t npending, pending_cap;
    uint32_t nlive;
    const skv_sched_selector *sel;
    void *sel_state;
    const skv_sched_sequencer *seq;
    void *seq_state;
    int64_t aging_ms;
    uint32_t max_reservations;
    bool preemption;
    int64_t min_runtime_ms;
    skv_sched_preempt_order preempt_order;
    struct skv__fidx *fidx;        /* frag/fgd class index, built on use */
    struct skv__inc *inc;          /* incremental pass state (pass_inc.c) */
    uint32_t last_epoch;           /* epoch of its last pass (reservations) */
    int64_t last_pass_ms;          /* now_ms of its last pass */
    void *auto_state;              /* selector "auto" before its switch:
                                      frag's state (selector_auto.c) */
} skv__group;

struct skv_sched {
    int64_t half_life_ms;
    uint8_t nslots;
    char *slot_name[NSL];
    skv_slot_kind slot_kind[NSL];
    skv_qty cap_total[NSL];
    /* slot roles, fixed once seen: whole-device, shared-device, pooled */
    uint32_t whole_mask, share_mask, pooled_mask;

    skv__group **groups;
    uint32_t ngroups;

    skv__agent **agents;
    uint32_t nagents_tab;          /* table size (holes are NULL) */
    uint32_t agents_cap;           /* allocated entries of agents/agent_free */
    uint32_t *agent_free;
    uint32_t nagent_free;
    skv__hmap agent_ix;

    skv__session **sess;
    uint32_t nsess_tab;
    uint32_t sess_cap;             /* allocated entries of sess/sess_free */
    uint32_t *sess_free;
    uint32_t nsess_free;
    skv__hmap sess_ix;
    uint64_t next_seq;

    skv__owner **owners;
    uint32_t nowners, owners_cap;
    skv__hmap owner_ix[SKV_SCHED_SCOPE_COUNT];

    const skv_sched_selector **selectors;
    uint32_t nselectors;
    const skv_sched_sequencer **sequencers;
    uint32_t nsequencers;
    void **dl_handles;
    uint32_t ndl;

    uint32_t epoch;                /* pass scratch generation */
    uint32_t stamp;                /* per-attempt marks on agents/sessions */
};

/* ---- slots (slotmap.c) ---- */
/* Index of name, interning it; SKV_EINVAL on a kind clash, SKV_ERANGE when
 * the table is full. */
int skv__sched_slot(skv_sched *s, uint8_t *out, const char *name,
                    skv_slot_kind kind, skv_error *err);
/* Dense copy of a vector (interning names). */
int skv__sched_dense(skv_sched *s, skv_qty *out, const skv_slots *v,
                     const char *what, skv_error *err);
/* Look up without interning; SKV__NONE-like 0xFF when missing. */
uint8_t skv__sched_slot_find(const skv_sched *s, const char *name);
int skv__sched_to_slots(skv_slots **out, const skv_sched *s,
                        const skv_qty *v, skv_error *err);

/* ---- helpers (sched.c, session.c, owner.c, agent.c) ---- */
skv__group *skv__sched_group(const skv_sched *s, const char *name,
                             uint32_t *idx);
int skv__sched_push(void **arr, uint32_t *len, uint32_t *cap, size_t elsz,
                    const void *el, skv_error *err);
/* Room for entry `len` of an index table and its free list (both of *cap
 * entries), growing both geometrically: adding n entries costs O(n). */
int skv__sched_table_room(void **tab, uint32_t **freel, uint32_t len,
                          uint32_t *cap, size_t elsz, skv_error *err);
/* Room for entry `len` of a plain array of *cap entries (geometric). */
int skv__sched_room(void **arr, uint32_t len, uint32_t *cap, size_t elsz,
                    skv_error *err);
skv__session *skv__sched_session(const skv_sched *s, const char *id,
                                 uint32_t *idx, skv_error *err);
skv__agent *skv__sched_agent(const skv_sched *s, const char *id,
                             uint32_t *idx, skv_error *err);
int skv__sched_owner(skv_sched *s, uint32_t *out, skv_sched_scope scope,
                     const char *name, skv_error *err);
void skv__sched_owner_decay(const skv_sched *s, skv__owner *o, int64_t now);
/* quota.c: the session's per-group entries of its owners (created on first
 * use: at submit and adopt, so charging never allocates); freeing them. */
int skv__sched_session_gq(skv_sched *s, skv__session *x, skv_error *err);
void skv__sched_owner_gq_free(skv__owner *o);
uint64_t skv__sched_share_ppm(const skv_qty *usage, const skv_qty *cap);
void skv__sched_agent_view(skv_sched_agent_view *v, const skv_sched *s,
                           const skv__agent *a);
void skv__sched_reason_reset(skv__reason *r);

/* A session object from a spec (validated, slot names interned; not yet in
 * any table), and its entry in the session table and id index (also
 * reserving room on its group's pending list). session.c; shared with
 * adopt.c. */
int skv__sched_session_build(skv__session **out, skv_sched *s,
                             const skv_sched_session_spec *sp, skv_error *err);
int skv__sched_session_link(skv_sched *s, skv__session *x, uint32_t *out,
                            skv_error *err);

/* Commit/release of a session's allocations (account.c). alloc records
 * for every kernel must be filled in (a.agent/a.dev) and already applied
 * to the agents' maps; commit links them and charges owners. */
int skv__sched_commit(skv_sched *s, uint32_t si, int64_t now,
                      skv_error *err);
/* Free everything a session holds and unlink it (state is the caller's). */
void skv__sched_release(skv_sched *s, uint32_t si, int64_t now);
void skv__sched_pending_add(skv_sched *s, uint32_t si);
void skv__sched_pending_del(skv_sched *s, uint32_t si);
void skv__sched_owner_charge(skv_sched *s, skv__session *x, int sign,
                             int64_t now);
/* A session left SCHEDULED/RUNNING: tell its preemption waiter. */
void skv__sched_victim_gone(skv_sched *s, skv__session *x);

void skv__sched_plugins_close(skv_sched *s);
/* Incremental pass state of a group (pass_inc.c); NULL is fine. */
struct skv__inc;
void skv__inc_free(struct skv__inc *inc);
void skv__inc_fresh(struct skv__inc *inc, uint32_t si);
const char *skv__sched_scope_name(skv_sched_scope sc);
void skv__sched_group_free(skv__group *g);
int skv__sched_name_check(const char *what, const char *name, skv_error *err);
void skv__sched_session_free(skv__session *x);
void skv__sched_agent_free(skv__agent *a);

/* Live map changes of an agent: every change goes through these so the
 * free-device index follows (bucket.c). */
void skv__sched_agent_apply(skv_sched *s, skv__agent *a, const skv_qty *req,
                            const skv_sched_device_share *sh, size_t n);
void skv__sched_agent_release(skv_sched *s, skv__agent *a, const skv_qty *req,
                              const skv_sched_device_share *sh, size_t n);
uint8_t skv__sched_free_devices(const skv__agent *a);
/* Bucket of an agent: its free-device count, or SKV__BUCKET_FULL when it
 * has devices but none can take any more (whole or shared). */
uint8_t skv__sched_bucket_key(const skv__agent *a);
/* Free shared room on devices that can still be shared, summed over every
 * share slot: no shared request larger than this fits the agent. */
skv_qty skv__sched_share_room(const skv__agent *a);
/* Hinted scans skip agents whose shared room is below the request (on by
 * default; tests turn it off to compare with the plain scan). */
extern bool skv__sched_room_skip;
int skv__sched_bucket_add(skv_sched *s, uint32_t ai, skv_error *err);
void skv__sched_bucket_del(skv_sched *s, uint32_t ai);
void skv__sched_rebucket(skv_sched *s, skv__agent *a);

/* ---- devices out of service (health.c) ---- */
typedef struct skv__dhealth skv__dhealth;
/* Hold free down devices, cut shared ones, give back healthy ones. */
void skv__sched_health_sync(skv_sched *s, skv__agent *a);
void skv__sched_health_detach(skv_sched *s, skv__agent *a);
void skv__sched_health_free(skv__agent *a);
/* old's down devices as a mask over na's (same ids). */
uint64_t skv__sched_health_in(const skv__agent *old, const skv__agent *na);
/* Set a's down devices (out of memory: none are, logged). */
void skv__sched_health_set(skv_sched *s, skv__agent *a, uint64_t down);
uint64_t skv__sched_health_held(const skv__agent *a);
void skv__sched_health_cap(const skv__agent *a, skv_qty *cap);

/* The agent's real allocation map (agentmap.c). */
/* topology.c: copy/free the spec's layout; choose k whole devices of map
 * slot mslot into pick (ascending). false: no layout or not enough free. */
int skv__sched_agent_topology(skv__agent *a, const skv_sched_agent_spec *sp,
                              skv_error *err);
void skv__sched_agent_topology_free(skv__agent *a);
bool skv__sched_topo_pick(const skv__agent *a, uint8_t mslot, size_t k,
                          size_t *pick);
int skv__sched_agent_map_build(const skv_sched *s, skv__agent *a,
                               skv_error *err);
int skv__sched_map_alloc(skv__agent *a, skv__kalloc *ka, const skv_qty *req,
                         skv_sched_device_share *sh, size_t *n);
void skv__sched_map_release(skv__agent *a, skv__kalloc *ka);
int skv__sched_map_verify(const skv__agent *a, skv_error *err);

/* ---- built-in plugins ---- */
extern const skv_sched_selector skv__sel_concentrated;
extern const skv_sched_selector skv__sel_dispersed;
extern const skv_sched_selector skv__sel_roundrobin;
bool skv__sel_rr_cursor(const skv__group *g, uint32_t *cursor);
/* Test hook (suite sched, tcase "rr_walk"): false makes roundrobin score
 * every agent as any selector does. */
extern bool skv__sched_rr_walk;
extern const skv_sched_sequencer skv__seq_fifo;
extern const skv_sched_sequencer skv__seq_lifo;
extern const skv_sched_sequencer skv__seq_priority;
extern const skv_sched_sequencer skv__seq_drf;
extern const skv_sched_sequencer skv__seq_fairshare;

/* selector_auto.c: the default selector ("auto" or none named). */
bool skv__sched_sel_auto_name(const char *name);
int skv__sched_sel_auto_start(skv_sched *s, skv__group *g, const char *config,
                              skv_error *err);
void skv__sched_sel_auto_agent(skv__group *g, const skv__agent *a);
void skv__sched_sel_auto_drop(skv__group *g);

#endif
