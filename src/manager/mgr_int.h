/* The manager core's internal state and the functions its files share.
 * The database is the source of truth for sessions and kernels; memory holds
 * connections, agents' live view and outstanding requests to agents.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_INT_H
#define SKV_MGR_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "admin/admin.h"
#include "skv_internal.h"
#include "sokovan/image.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"
#include "sokovan/sched.h"
#include "store/db.h"
#include "store/store.h"
#include "store/topology.h"

#define SKV__MGR_ID_MAX 256
#define SKV__MGR_SID_MAX 32  /* a new session id and its NUL (mgr_ids.c) */

typedef struct skv__mgr_conn {
    uint64_t id;
    char peer[64];
    char agent_id[SKV__MGR_ID_MAX]; /* "" until agent.register succeeded */
    bool plaintext;                 /* network without encryption */
    bool dead;                      /* the send callback failed */
    bool authenticated;             /* a signed request was verified */
    uint64_t in_batch;              /* mgr_units.c: the batch listing it */
} skv__mgr_conn;

typedef enum skv__mgr_agent_state {
    SKV__AGENT_KNOWN = 0,  /* from the database, not registered since open */
    SKV__AGENT_ALIVE = 1,
    SKV__AGENT_LOST = 2
} skv__mgr_agent_state;

typedef enum skv__mgr_ops_state {   /* mgr_ops.c */
    SKV__OPS_NONE = 0,                  /* schedulable */
    SKV__OPS_CORDONED = 1,              /* no new placements */
    SKV__OPS_DRAINING = 2               /* ... and its sessions go */
} skv__mgr_ops_state;

typedef struct skv__mgr_route {   /* a peer route; subnet "": none */
    char subnet[32];
    char via[128];
} skv__mgr_route;

typedef struct skv__mgr_agent {
    char id[SKV__MGR_ID_MAX];
    char group[SKV__MGR_ID_MAX];
    char arch[64];
    char address[128];
    skv__mgr_agent_state state;
    uint64_t conn;            /* 0: not connected */
    int64_t last_hb_ms;
    bool in_sched;
    char **dev_ids;           /* accelerator ids in scheduler order */
    size_t n_dev;
    char **pool_dev;          /* pooled slot name -> the device offering it */
    char **pool_slot;
    size_t n_pool;
    char **images;
    char **image_digest;      /* per image; NULL entries: not reported */
    uint64_t *image_size;     /* per image; 0: not reported */
    skv_image_meta *image_meta; /* per image: its services and command */
    size_t n_images;
    char **label_keys;        /* labels of the last registration */
    char **label_values;
    size_t n_labels;
    skv__mgr_route route;     /* mgr_routes.c: its route now ... */
    skv__mgr_route told;      /* ... and as the peers last heard it */
    bool route_dirty;
    bool route_deltas;        /* it applies agent.routes.delta */
    skv__mgr_ops_state ops;   /* mgr_ops.c: cordoned / draining */
    int64_t drain_deadline_ms;
    bool drain_done;          /* its sessions were ended or requeued */
    skv_proto_device_fault *unhealthy;  /* mgr_health.c: as reported */
    size_t n_unhealthy;
    skv__mgr_layout layout;   /* NUMA nodes and device links it registered
                                 (mgr_topology.c) */
} skv__mgr_agent;

/* Whether a kernel.create can go to agent a now (mgr_create.c; a pass
 * places the kernels on such agents as PREPARING, mgr_pass.c). */
static inline bool skv__mgr_agent_takes_creates(const skv__mgr_agent *a)
{
    return a && a->conn && a->state == SKV__AGENT_ALIVE;
}

typedef enum skv__mgr_req_kind {
    SKV__REQ_CREATE = 1,
    SKV__REQ_DESTROY = 2,
    SKV__REQ_LOGS = 3,
    SKV__REQ_EXEC = 4                   /* exec.start (mgr_exec.c) */
} skv__mgr_req_kind;

typedef struct skv__mgr_req {           /* a request sent to an agent */
    uint64_t id;
    uint64_t conn;
    skv__mgr_req_kind kind;
    char kernel_id[SKV__MGR_ID_MAX];
    uint64_t user_conn;                 /* LOGS: who asked */
    uint64_t user_req;
    int64_t seen_ms;                    /* first sweep that saw it; 0: none */
} skv__mgr_req;

struct skv__mgr_metrics;
typedef struct skv__mgr_drain skv__mgr_drain;   /* mgr_drain.c */

typedef enum skv__mgr_out_kind {
    SKV__OUT_OTHER = 0,     /* errors, events */
    SKV__OUT_REPLY = 1,     /* req: the request it answers */
    SKV__OUT_REQUEST = 2    /* req: our request's id (in the table) */
} skv__mgr_out_kind;

typedef struct skv__mgr_out {   /* a frame waiting for a commit */
    uint64_t conn;
    void *frame;
    size_t len;
    skv__mgr_out_kind kind;
    uint64_t req;
} skv__mgr_out;

typedef struct skv__mgr_nonce {    /* an accepted request's nonce */
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    uint8_t nonce[SKV_AUTH_NONCE_BYTES];
    int64_t ts_ms;
} skv__mgr_nonce;

/* A hash index over an array of the manager (mgr_index.c). */
typedef struct skv__mgr_ixent {
    uint32_t hash;
    uint32_t pos1;          /* array position + 1; 0: empty */
} skv__mgr_ixent;
typedef struct skv__mgr_ix {
    skv__mgr_ixent *e;
    size_t cap, n;
} skv__mgr_ix;

struct skv_manager {
    skv__db *store;          /* store/: the only SQL speaker */
    skv_sched *sched;
    skv_auth_verifier *verifier;
    skv__mgr_admin_ctx admin;
    char *data_dir;
    char *store_uri;     /* PostgreSQL store; NULL: SQLite in data_dir */
    int64_t ha_epoch;    /* elected leader's fencing epoch; 0: no lease */
    uint32_t ha_lease_ms;
    char *default_group;
    skv_manager_send_fn send;
    void *payload;
    uint32_t hb_interval_ms;
    uint32_t hb_timeout_ms;
    size_t max_frame;
    uint32_t max_per_pass;
    skv__mgr_conn *conns;
    size_t n_conns;
    skv__mgr_agent *agents;
    size_t n_agents;
    skv__mgr_ix agent_ix;    /* by id; kept by agent_slot (never removed) */
    skv__mgr_ix conn_ix;     /* by id; kept by conn_open / conn_close */
    skv__mgr_req *reqs;
    size_t n_reqs;
    uint64_t next_req;
    skv__mgr_drain *drains;  /* requeued sessions still being destroyed */
    size_t n_drains;
    bool dirty;              /* something changed: run a pass soon */
    int64_t last_pass_ms;
    int64_t last_sweep_ms;
    int64_t hb_due_ms;       /* mgr_tick.c: no heartbeat deadline before */
    int64_t ops_due_ms;      /* mgr_ops.c: no drain deadline before */
    skv_manager_stats st;
    struct skv__mgr_metrics *metrics; /* mgr_metrics.h; NULL until bound */
    char *cluster_cidr;               /* mgr_net.c */
    struct skv_net_pool *agent_pool;  /* agents' subnets of cluster_cidr */
    /* store_nonces.c: nonces of accepted requests not yet committed. */
    skv__mgr_nonce *nonces;
    size_t n_nonces, cap_nonces, n_nonces_written;
    int64_t skew_ms;                  /* the verifier's window */
    int64_t nonce_prune_ms;
    char *backup_dir;                 /* mgr_backup.c */
    skv__mgr_out *out;                /* mgr_outbox.c */
    size_t n_out, cap_out;
    struct {                          /* mgr_batch.c: submissions */
        bool open;                    /* a batch transaction is open */
        bool optimistic;              /* its units' releases do not wait */
        unsigned careful;             /* batches left in careful mode */
        size_t mark;                  /* the outbox before this unit */
        char (*sids)[32];             /* sessions recorded in it */
        size_t n, cap;
        int64_t now_ms;               /* of its latest unit */
        /* mgr_units.c: agents' kernel events join the batch too. */
        bool join;                    /* the running handler joins it */
        bool in_unit;                 /* skv__mgr_begin opened a unit */
        uint64_t join_conn;           /* the joining event's connection */
        size_t after_mark;            /* the after queue before the unit */
        uint64_t *conns;              /* agents whose events it holds */
        size_t n_conns, cap_conns;
        uint64_t settled;             /* batches settled: this is + 1 */
        struct skv__mgr_step *after;  /* scheduler steps after its commit */
        size_t n_after, cap_after;
    } batch;
    bool routes_dirty;                /* mgr_routes.c: a route changed */
    struct {                          /* mgr_deps.c: sessions handed to
                                         the scheduler with dependencies */
        struct skv__mgr_dependent *v;
        size_t n, cap;
        bool unsure;                  /* one not noted: read the database */
    } deps;
    struct skv__mgr_vf *vf;           /* mgr_vfolder*.c: storage hosts */
    struct skv__mgr_execs *execs;     /* mgr_exec.c: relayed execs */
    struct skv__mgr_idle *idle;       /* mgr_idle.c: sessions' activity */
    uint32_t idle_cpu_percent;        /* options v7 */
    struct {                          /* mgr_ids.c: session ids */
        bool seeded;
        uint32_t next;
    } ids;
};

/* ---- database (mgr_open.c, mgr_tx.c) ------------------------------------ */
/* init: create a new cluster; refused where a database exists. */
int skv__mgr_db_open(skv_manager *m, bool init, skv_error *err);
void skv__mgr_db_close(skv_manager *m);
int skv__mgr_begin(skv_manager *m, skv_error *err);
/* mgr_lease.c: an elected lease's epoch and lease_ms (options v5). */
int skv__mgr_lease_terms(const struct skv_manager_lease *l, int64_t *epoch,
                         uint32_t *lease_ms, skv_error *err);
int skv__mgr_commit(skv_manager *m, skv_error *err);
void skv__mgr_rollback(skv_manager *m);
/* mgr_nonces.c: the replay window persisted (see there). */
int skv__mgr_nonce_note(skv_manager *m, const skv_auth_block *b,
                        skv_error *err);
int skv__mgr_nonce_flush(skv_manager *m, skv_error *err);
void skv__mgr_nonce_settle(skv_manager *m, bool committed);
void skv__mgr_nonce_tick(skv_manager *m, int64_t now_ms);
int skv__mgr_nonce_restore(skv_manager *m, int64_t now_ms, skv_error *err);
/* The admin plane's own transactions write and settle them too. */
void skv__mgr_nonce_hook_admin(skv_manager *m);
/* Sessions and kernels. */
int skv__mgr_session_set(skv_manager *m, const char *sid,
                         skv_manager_session_state s, const char *reason,
                         int64_t now_ms, skv_error *err);
int skv__mgr_session_set_ended(skv_manager *m, const char *sid,
                               skv_manager_session_state s,
                               const char *reason, int exit_code,
                               int64_t now_ms, skv_error *err);
int skv__mgr_session_get_state(skv_manager *m, const char *sid,
                               skv_manager_session_state *out,
                               skv_error *err);
int skv__mgr_kernel_set(skv_manager *m, const char *kid, const char *status,
                        skv_error *err);
int skv__mgr_history_add(skv_manager *m, const char *sid, const char *status,
                         const char *reason, int64_t now_ms, skv_error *err);

/* mgr_drain.c: a requeued session goes back to the scheduler's queue once
 * its kernels' destroys were answered. */
void skv__mgr_drain_add(skv_manager *m, const char *sid, const char *key,
                        char **kids, size_t n, int64_t now_ms);
/* skv__mgr_session_requeue for a preemption victim: released to the
 * scheduler together with the preemptor's other victims. */
int skv__mgr_session_requeue_for(skv_manager *m, const char *sid,
                                 const char *preemptor, const char *reason,
                                 int64_t now_ms, skv_error *err);
void skv__mgr_drain_check(skv_manager *m, int64_t now_ms);
void skv__mgr_drain_free(skv_manager *m);

/* Kernel ids of sid whose status is in `in` ("A,B"; idx order). */
int skv__mgr_kernel_ids(skv_manager *m, const char *sid, const char *in,
                        char ***out, size_t *n, skv_error *err);
void skv__mgr_ids_free(char **v, size_t n);

/* Agents. */
skv__mgr_agent *skv__mgr_agent_find(skv_manager *m, const char *id);
skv__mgr_agent *skv__mgr_agent_slot(skv_manager *m, const char *id);
void skv__mgr_agent_clear(skv__mgr_agent *a);
/* Build the scheduler's view of an agent from its registered devices. */
/* labels: the agent's (register), as placement labels; NULL/0 none. */
int skv__mgr_agent_spec(skv_manager *m, skv__mgr_agent *a, const char *group,
                        const char *arch, const skv_proto_device *devs,
                        size_t n_dev, const skv_proto_kv *labels,
                        size_t n_labels, bool schedulable, skv_error *err);
int skv__mgr_agents_restore(skv_manager *m, int64_t now_ms, skv_error *err);

/* ---- mgr_topology.c: agent layouts ---- */
/* Links must name two distinct registered devices and a known class, NUMA
 * node ids be distinct and in range with valid CPU lists (SKV_EINVAL). */
int skv__mgr_layout_check(const skv_proto_agent_register *r, skv_error *err);
int skv__mgr_layout_copy(skv__mgr_layout *out,
                         const skv_proto_agent_register *r, skv_error *err);
typedef struct skv__mgr_topo {
    int32_t numa[SKV_SCHED_DEVICES_MAX];
    uint8_t links[SKV_SCHED_DEVICES_MAX * SKV_SCHED_DEVICES_MAX];
    uint32_t bw[SKV_SCHED_DEVICES_MAX * SKV_SCHED_DEVICES_MAX];
    skv_sched_agent_topology t;
} skv__mgr_topo;
/* The scheduler's topology of n accelerators (ids, numa in scheduler
 * order) from l; false when there is nothing to go by (no links, no known
 * NUMA node): the device-order map. */
bool skv__mgr_topo_build(skv__mgr_topo *t, const skv__mgr_layout *l,
                         char *const *ids, const int32_t *numa, size_t n);
void skv__mgr_agent_lost(skv_manager *m, skv__mgr_agent *a, int64_t now_ms);
/* After a->last_hb_ms was set: its deadline may be the earliest. */
void skv__mgr_hb_note(skv_manager *m, const skv__mgr_agent *a);

/* ---- batched submissions (mgr_batch.c) ----------------------------------- */
int skv__mgr_batch_unit(skv_manager *m, int64_t now_ms, skv_error *err);
int skv__mgr_batch_unit_end(skv_manager *m, const char *sid, int rc,
                            skv_error *err);
int skv__mgr_batch_commit(skv_manager *m, int64_t now_ms, skv_error *err);
/* A unit's release failed (careful mode is kept on longer). */
void skv__mgr_batch_refused(skv_manager *m);
void skv__mgr_batch_close(skv_manager *m);

/* ---- kernel events in the batch (mgr_units.c) ---------------------------- */
/* An agent's event (kernel.status, kernel.exit, agent.stats, a create reply
 * or destroy ack) handled with join set: its transactions become units of
 * the open batch and commit with it. */
void skv__mgr_units_join(skv_manager *m, uint64_t conn, int64_t now_ms);
void skv__mgr_units_leave(skv_manager *m);
int skv__mgr_unit_begin(skv_manager *m, skv_error *err);
int skv__mgr_unit_commit(skv_manager *m, skv_error *err);
void skv__mgr_unit_rollback(skv_manager *m);
/* Scheduler steps that follow a committed state change: at once outside
 * a batch, else once the batch committed (dropped if it failed). */
typedef enum skv__mgr_after_kind {
    SKV__AFTER_STARTED = 1,     /* every kernel of sid runs */
    SKV__AFTER_FINISHED = 2,    /* sid ended (failed: not cleanly) */
    SKV__AFTER_PLACED = 3       /* sid placed: back to pending if the
                                   batch fails (never run on success) */
} skv__mgr_after_kind;
void skv__mgr_after(skv_manager *m, skv__mgr_after_kind kind,
                    const char *sid, bool failed, int64_t now_ms);
/* The batch committed (ok) or failed: run or drop the queued steps; a
 * failed batch disconnects the agents whose events it held, so they
 * register again and report their kernels (mgr_reconcile.c). */
void skv__mgr_units_settle(skv_manager *m, bool ok);
void skv__mgr_units_free(skv_manager *m);
/* Open the manager's transaction (nonces first); no batch logic. */
int skv__mgr_tx_open(skv_manager *m, skv_error *err);

/* ---- the outbox (mgr_outbox.c): frames wait for their commit ------------ */
void skv__mgr_outbox_put(skv_manager *m, const skv__mgr_out *o);
void skv__mgr_outbox_release(skv_manager *m);
void skv__mgr_outbox_drop(skv_manager *m, size_t mark, const char *why);
size_t skv__mgr_outbox_mark(const skv_manager *m);
void skv__mgr_outbox_free(skv_manager *m);

/* ---- connections and sending --------------------------------------------- */
skv__mgr_conn *skv__mgr_conn_find(skv_manager *m, uint64_t id);
/* The indexes (mgr_index.c): add the entry at pos after appending it;
 * conn_ix_del before the array moves its last entry into pos. */
int skv__mgr_agent_ix_add(skv_manager *m, size_t pos);
int skv__mgr_conn_ix_add(skv_manager *m, size_t pos);
void skv__mgr_conn_ix_del(skv_manager *m, size_t pos);
void skv__mgr_ix_free(skv_manager *m);
int skv__mgr_ix_verify(skv_manager *m, skv_error *err);
/* A request on conn passed signature verification (manager.c). */
void skv__mgr_conn_authenticated(skv_manager *m, uint64_t id);
void skv__mgr_send_frame(skv_manager *m, uint64_t conn, void *frame,
                         size_t len);
int skv__mgr_reply(skv_manager *m, uint64_t conn, uint64_t req,
                   skv_proto_type type, const void *body);
void skv__mgr_error(skv_manager *m, uint64_t conn, uint64_t req, int code,
                    const char *msg, const char *req_type);
/* Send a request to an agent; remembers it. 0 or negative. */
int skv__mgr_request(skv_manager *m, uint64_t conn, skv__mgr_req_kind kind,
                     skv_proto_type type, const void *body,
                     const char *kernel_id, uint64_t user_conn,
                     uint64_t user_req);
skv__mgr_req *skv__mgr_req_take(skv_manager *m, uint64_t conn, uint64_t id,
                                skv__mgr_req *copy);
void skv__mgr_reqs_conn_gone(skv_manager *m, uint64_t conn);
/* Requests an agent left unanswered (mgr_expire.c), from the sweep. */
void skv__mgr_reqs_expire(skv_manager *m, int64_t now_ms);
/* A kernel.create that failed (error reply or no answer): the kernel and
 * its session end in ERROR with the reason (mgr_response.c). */
void skv__mgr_create_failed(skv_manager *m, const skv__mgr_req *r,
                            const skv_proto_error *e, int64_t now);

/* ---- handlers -------------------------------------------------------------- */
typedef struct skv__mgr_call {      /* one verified request or event */
    uint64_t conn;
    uint64_t req;
    skv_proto_type type;
    const skv_auth_principal *who;
    void *body;
    int64_t now_ms;
} skv__mgr_call;

int skv__mgr_on_register(skv_manager *m, const skv__mgr_call *c,
                         skv_error *err);
int skv__mgr_on_heartbeat(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err);
int skv__mgr_on_kernel_status(skv_manager *m, const skv__mgr_call *c,
                              skv_error *err);
int skv__mgr_on_kernel_exit(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err);
int skv__mgr_on_agent_stats(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err);
/* mgr_ids.c: a new session id, ordered by time (see there). */
int skv__mgr_session_id_new(skv_manager *m, int64_t now_ms,
                            char out[SKV__MGR_SID_MAX], skv_error *err);
int skv__mgr_on_submit(skv_manager *m, const skv__mgr_call *c,
                       skv_error *err);
int skv__mgr_session_info(skv_manager *m, skv_proto_session_info *out,
                          const char *sid, skv_error *err);
/* Fill history, kernels and (pending sessions) the scheduler's reason. */
int skv__mgr_session_pending(skv_manager *m, skv_proto_session_info *i,
                             skv_error *err);
int skv__mgr_session_details(skv_manager *m, skv_proto_session_info *i,
                             skv_error *err);
int skv__mgr_on_list(skv_manager *m, const skv__mgr_call *c, skv_error *err);
int skv__mgr_on_show(skv_manager *m, const skv__mgr_call *c, skv_error *err);
int skv__mgr_on_terminate(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err);
int skv__mgr_on_logs(skv_manager *m, const skv__mgr_call *c, skv_error *err);
/* session.logs: the error when kernel kid's agent (agent, "" when none)
 * cannot be asked now (mgr_logs_why.c). */
void skv__mgr_logs_unavailable(skv_manager *m, const char *sid,
                               const char *kid, const char *agent,
                               int64_t now_ms, skv_error *err);
int skv__mgr_on_agent_list(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err);
/* agent.list's entry for a (mgr_cluster.c). */
int skv__mgr_agent_info(skv_manager *m, const skv__mgr_agent *a,
                        skv_proto_agent_info *i, skv_error *err);
/* An event's sender, registered on c's connection as agent_id
 * (mgr_events.c); NULL with err set otherwise. */
skv__mgr_agent *skv__mgr_reporter(skv_manager *m, const skv__mgr_call *c,
                                  const char *agent_id, skv_error *err);

/* ---- operations: cordon, drain (mgr_ops.c), device health (mgr_health.c) */
const char *skv__mgr_ops_name(skv__mgr_ops_state s);
int skv__mgr_on_admin_agent(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err);
/* After a registration described a to the scheduler. */
void skv__mgr_ops_registered(skv_manager *m, skv__mgr_agent *a);
void skv__mgr_ops_tick(skv_manager *m, int64_t now_ms);
int skv__mgr_on_device_health(skv_manager *m, const skv__mgr_call *c,
                              skv_error *err);
void skv__mgr_health_reapply(skv_manager *m, skv__mgr_agent *a);
int skv__mgr_health_restore(skv_manager *m, skv__mgr_agent *a,
                            skv_error *err);
void skv__mgr_health_free(skv__mgr_agent *a);
size_t skv__mgr_unhealthy_devices(const skv_manager *m);
int skv__mgr_on_image_list(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err);
/* mgr_backup.c: admin.backup into backup_dir. */
int skv__mgr_on_backup(skv_manager *m, const skv__mgr_call *c,
                       skv_error *err);
/* A response from an agent to one of our requests. */
void skv__mgr_on_response(skv_manager *m, uint64_t conn,
                          const skv_proto_envelope *env, int64_t now_ms);

/* ---- exec relay (mgr_exec.c, mgr_exec_relay.c) -------------------------- */
int skv__mgr_on_exec_start(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err);
/* The eight exec events, from clients and from agents. */
int skv__mgr_on_exec_event(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err);
/* The agent's answer to exec.start (reply or error). */
void skv__mgr_exec_on_reply(skv_manager *m, const skv__mgr_req *r,
                            const skv_proto_envelope *env, const void *body);
/* The agent did not answer exec.start in time (mgr_expire.c). */
void skv__mgr_exec_expired(skv_manager *m, const skv__mgr_req *r);
/* A connection closed: its execs end (client: killed on the agent;
 * agent: the client hears why). */
void skv__mgr_execs_conn_gone(skv_manager *m, uint64_t conn);
void skv__mgr_execs_free(skv_manager *m);
/* Execs now relayed into session sid. */
size_t skv__mgr_exec_count_session(const skv_manager *m, const char *sid);

/* ---- lifecycle -------------------------------------------------------------- */
/* Map a submit body to a scheduler spec (arrays owned by *keep). */
typedef struct skv__mgr_spec {
    skv_sched_session_spec spec;
    skv_sched_kernel_spec *kernels;
    const char **deps;
    const char **designated;
    const char **models;
    skv_sched_label *labels;        /* "label.KEY" constraints */
} skv__mgr_spec;
int skv__mgr_spec_build(skv__mgr_spec *out, const skv_proto_session_submit *s,
                        const char *sid, const char *domain,
                        const char *project, const char *user, skv_error *err);
void skv__mgr_spec_free(skv__mgr_spec *x);
/* Drop dependencies that already ended well; strict: refuse ones that ended
 * badly or do not exist. */
/* x (its dependencies after skv__mgr_spec_deps) was just handed to the
 * scheduler as pending (mgr_deps.c). Out of memory: from then on every
 * session end reads the pending specs in the database, as before. */
void skv__mgr_deps_note(skv_manager *m, const skv__mgr_spec *x);
void skv__mgr_deps_free(skv_manager *m);
int skv__mgr_spec_deps(skv_manager *m, skv__mgr_spec *x, bool strict,
                       skv_error *err);
/* Remove an ended session from the scheduler when nothing pending may
 * depend on it. */
void skv__mgr_sched_forget(skv_manager *m, const char *sid);
int skv__mgr_load_submit(skv_manager *m, const char *sid,
                         skv_proto_session_submit *out, char *domain,
                         char *project, char *owner, skv_error *err);

int skv__mgr_pass(skv_manager *m, int64_t now_ms, skv_error *err);
/* Send kernel.create for every SCHEDULED/PREPARING kernel placed on agent. */
void skv__mgr_send_creates(skv_manager *m, const char *agent_id,
                           int64_t now_ms);
/* kernel.destroy with a 5 s grace period (SIGTERM, then SIGKILL). */
void skv__mgr_send_destroy(skv_manager *m, const char *kid,
                           const char *reason);
void skv__mgr_send_destroy_grace(skv_manager *m, const char *kid,
                                 const char *reason, uint32_t grace_ms);
/* A kernel ended (exit, lost, failed start): record it and move the session
 * on. status: "TERMINATED", "ERROR" or "CANCELLED". */
int skv__mgr_kernel_ended(skv_manager *m, const char *kid, const char *status,
                          int exit_code, const char *reason, int64_t now_ms,
                          skv_error *err);
int skv__mgr_kernel_running(skv_manager *m, const char *kid,
                            const char *container_id, int64_t now_ms,
                            skv_error *err);
/* Terminate a live session (user request, lost agent, failed start). */
int skv__mgr_session_stop(skv_manager *m, const char *sid,
                          skv_manager_session_state final_state,
                          const char *reason, const char *lost_agent,
                          int64_t now_ms, skv_error *err);
/* Finish or stop sid according to its kernels (idempotent). */
int skv__mgr_session_settle(skv_manager *m, const char *sid, int64_t now_ms,
                            skv_error *err);
/* Every kernel of sid ended: the session reaches its final state. */
int skv__mgr_session_finish(skv_manager *m, const char *sid, int64_t now_ms,
                            skv_error *err);
/* The states a kernel ends in ("A,B" for skv__mgr_store_kernel_count). */
#define SKV__MGR_KERNEL_FINAL "TERMINATED,CANCELLED,ERROR"
/* Inside the caller's open unit, after a kernel of sid ended: sid's final
 * row too when none of its kernels is live (*done; *failed for the
 * scheduler). */
int skv__mgr_session_end_in(skv_manager *m, const char *sid, int64_t now_ms,
                            bool *done, bool *failed, skv_error *err);
/* sid's end committed: the scheduler's step (after the batch's commit). */
void skv__mgr_session_ended(skv_manager *m, const char *sid, bool failed,
                            int64_t now_ms);
/* Send kernel.create for the session's placed, unstarted kernels (only those
 * on agent_id when not NULL). */
void skv__mgr_send_creates_session(skv_manager *m, const char *sid,
                                   const char *agent_id, int64_t now_ms);
void skv__mgr_send_creates_sessions(skv_manager *m, const char *const *sids,
                                    size_t n, const char *agent_id,
                                    int64_t now_ms);
/* A pass's placement unit: its creates, expect of them (the kernels it
 * placed as PREPARING); SKV_ESTATE when another number went. */
int skv__mgr_creates_placed(skv_manager *m, const char *sid, size_t expect,
                            int64_t now_ms, skv_error *err);
/* Put a placed session back to PENDING (preemption, lost agent). */
int skv__mgr_session_requeue(skv_manager *m, const char *sid,
                             const char *reason, int64_t now_ms,
                             skv_error *err);
/* Same, for a session requeued because lost_agent was lost: its kernels
 * there are kept as suspects (mgr_suspect.c). */
int skv__mgr_session_requeue_lost(skv_manager *m, const char *sid,
                                  const char *lost_agent, const char *reason,
                                  int64_t now_ms, skv_error *err);
int skv__mgr_restore(skv_manager *m, int64_t now_ms, skv_error *err);
/* Admit a stored session to the scheduler: PENDING queued, otherwise
 * adopted on its recorded allocation (mgr_restore.c). */
int skv__mgr_readmit(skv_manager *m, const char *sid, const char *status,
                     int64_t created, int64_t started, skv_error *err);

/* ---- lost agents: suspects and adoption (mgr_suspect.c, mgr_adopt.c) -- */
/* In the requeue transaction: sid's kernels sent to agent become suspects. */
int skv__mgr_suspect_keep(skv_manager *m, const char *sid, const char *agent,
                          int64_t now_ms, skv_error *err);
/* The current id of sid's kernel idx. */
int skv__mgr_kernel_id_at(skv_manager *m, const char *sid, uint32_t idx,
                          char *kid, size_t cap, skv_error *err);
/* A registering agent reports k, which the kernels table does not place
 * there: adopt or destroy it when it is a suspect of a (true), else false. */
bool skv__mgr_adopt_suspect(skv_manager *m, skv__mgr_agent *a,
                            const skv_proto_agent_register *r,
                            const skv_proto_kernel_report *k, int64_t now_ms);
/* Drop a's suspects that its registration does not report. */
void skv__mgr_suspects_forget(skv_manager *m, const skv__mgr_agent *a,
                              const skv_proto_agent_register *r);
void skv__mgr_reconcile(skv_manager *m, skv__mgr_agent *a,
                        const skv_proto_agent_register *r, int64_t now_ms);
int skv__mgr_sweep(skv_manager *m, int64_t now_ms);

/* ---- cluster networking (mgr_net.c, mgr_net_kernel.c) ---------------- */
/* Tables, and the agents' subnets reserved in the pool; NULL cidr means
 * 10.128.0.0/9. */
int skv__mgr_net_open(skv_manager *m, const char *cidr, skv_error *err);
void skv__mgr_net_close(skv_manager *m);
/* Fill subnet, cluster_cidr and routes of an agent.register.reply (the
 * agent's subnet allocated on first use); free with
 * skv__mgr_net_reply_free. */
int skv__mgr_net_register_reply(skv_manager *m, const char *agent_id,
                                skv_proto_agent_register_reply *rep,
                                skv_error *err);
void skv__mgr_net_reply_free(skv_proto_agent_register_reply *rep);
/* Send agent.routes (the whole set) to every connected agent that does
 * not apply agent.routes.delta (older agents). */
void skv__mgr_net_broadcast(skv_manager *m);

/* ---- route changes to the agents (mgr_routes.c) ------------------------- */
/* a registered with subnet (NULL: none) from a->address. */
void skv__mgr_routes_registered(skv_manager *m, skv__mgr_agent *a,
                                const char *subnet, bool deltas);
/* a is lost: its route is withdrawn. */
void skv__mgr_routes_lost(skv_manager *m, skv__mgr_agent *a);
/* Once per tick: what changed goes out, one agent.routes.delta to every
 * agent that applies them, the whole table to the others. */
void skv__mgr_routes_flush(skv_manager *m);
/* The session's subnet on agent_id (allocated on first use) and the
 * address of its kernel idx there; both buffers SKV_NET_ADDR_MAX (19). */
int skv__mgr_net_kernel(skv_manager *m, const char *sid,
                        const char *agent_id, uint32_t idx, char *subnet,
                        char *address, skv_error *err);
/* The session's 32-byte SSH key seed, drawn on first use. */
int skv__mgr_net_seed(skv_manager *m, const char *sid, uint8_t seed[32],
                      skv_error *err);
/* Keep address and published ports of a create reply for session.show. */
void skv__mgr_net_kernel_reply(skv_manager *m, const char *kid,
                               const skv_proto_kernel_create_reply *cr);
int skv__mgr_net_kernel_info(skv_manager *m, skv_proto_kernel_info *k,
                             skv_error *err);

#endif /* SKV_MGR_INT_H */
