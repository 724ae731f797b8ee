/* Private to src/agent/: the agent's state and the steps shared between its
 * files (node setup, kernel records, messages to the manager).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_AGENT_INTERNAL_H
#define SKV_AGENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skv_cgroup.h"
#include "skv_internal.h"
#include "sokovan/agent.h"
#include "sokovan/image.h"
#include "sokovan/net.h"
#include "sokovan/node.h"
#include "sokovan/proto.h"
#include "sokovan/runtime.h"

#define SKV__AGENT_DEFAULT_HEARTBEAT_MS 5000u
#define SKV__AGENT_LOG_RETENTION_MS (3600 * 1000)
#define SKV__AGENT_LOG_KEEP 1000            /* kernels whose logs are kept */
#define SKV__AGENT_LOGS_DEFAULT (64u * 1024)
#define SKV__AGENT_LOGS_MAX (1024u * 1024)
#define SKV__AGENT_PIDS_MAX 4096
#define SKV__AGENT_CPU_PERIOD_US 100000

/* One accelerator as the manager knows it ("cuda0"), and where it lives. */
typedef struct skv__agent_dev {
    char *id;                   /* "<prefix><plugin device id>" */
    size_t plugin;              /* node plugin index */
    char *dev;                  /* the plugin's device id ("0") */
    char *kind;                 /* plugin name */
    bool excluded;              /* outside the agent's accelerator slice */
} skv__agent_dev;

typedef struct skv__agent_kernel {
    skv_proto_kernel_create req;    /* the manager's request (owned) */
    skv_node_placement *pl;         /* cores, memory, accelerators */
    skv_qty cpu, mem;               /* pooled amounts held (ledger) */
    bool exited;
    bool exit_sent;                 /* kernel.exit sent for this exit */
    skv_container_status st;
    int64_t finished_ms;
    /* kernel.destroy of a running kernel: SIGTERM sent, answered once the
     * container ends or the grace period is over (the loop never blocks). */
    bool destroying;
    uint64_t destroy_req;
    int64_t destroy_deadline;
    /* Network (net.c): the resolved mode; with SKV__AGENT_NET_CLUSTER the
     * request's subnet, ssh_seed and cluster host addresses are filled (by
     * the manager or the agent) before the record is written, so a
     * restarted agent finds the same network. */
    int net_mode;
    unsigned host_index;            /* address index in req.subnet */
    char address[SKV_NET_ADDR_MAX]; /* the kernel's IP, "" without one */
    char *ssh_dir;                  /* state_dir/ssh/<kernel id> or NULL */
} skv__agent_kernel;

enum { SKV__AGENT_NET_NONE, SKV__AGENT_NET_HOST, SKV__AGENT_NET_CLUSTER };

/* A rendered record: its bytes and path (owned). */
typedef struct skv__agent_record {
    char *path;
    void *bytes;
    size_t len;
} skv__agent_record;

/* A kernel whose container a background thread creates (creator.c). The
 * agent's thread owns everything but rc/err until the job is finished;
 * the worker reads k->req.kernel_id, spec and rec, and writes rc/err. */
typedef struct skv__agent_job {
    skv__agent_kernel *k;           /* resources taken; not in the table */
    skv_container_spec *spec;
    skv__agent_record rec;          /* rendered; stored by the worker */
    uint64_t create_req;            /* the kernel.create to answer */
    bool destroy_wanted;            /* a kernel.destroy came meanwhile */
    uint64_t destroy_req;
    uint32_t destroy_grace;
    int rc;                         /* the worker's result */
    skv_error err;
    struct skv__agent_job *next;    /* creator queue link */
} skv__agent_job;

typedef struct skv__agent_creator skv__agent_creator;

/* A session network held on this agent (one per session, shared by the
 * session's kernels here). */
typedef struct skv__agent_net {
    char *session_id;
    skv_net_session *ns;
} skv__agent_net;

struct skv_agent {
    char *agent_id, *access_key, *secret_key, *state_dir, *resource_group;
    char *address, *labels;
    skv_agent_send_fn send;
    void *payload;
    /* node */
    skv_topo *topo;
    skv_plugin **pl;
    size_t npl;
    skv_node *node;
    skv_node_placement *reserve;    /* what lies outside the slice */
    char *slice_cpus;               /* PUs of the slice's cores */
    skv__agent_dev *devs;
    size_t ndevs;
    skv_qty cpu_cap, mem_cap, cpu_used, mem_used;
    /* containers */
    skv_runtime *rt;
    skv_image_store *images;
    skv__agent_kernel **k;
    size_t nk, capk;
    /* background creation (creator.c): jobs submitted, not yet finished */
    skv__agent_creator *cr;
    skv__agent_job **jobs;
    size_t njobs;
    void (*wake)(void *payload);
    void *wake_payload;
    /* cluster networking (net.c) */
    char net_prefix[5];             /* link prefix of this agent's pieces */
    bool host_guard;                /* session networks: host guard on */
    char *host_allow;               /* its allow-list (NULL: none) */
    char *subnet, *cluster_cidr;    /* from agent.register.reply, or NULL */
    skv_net_pool *pool;             /* local session subnets (lazy) */
    skv__agent_net *nets;
    size_t nnets;
    /* manager connection */
    bool connected, registered;
    uint64_t next_req_id, register_id, seq;
    uint32_t hb_ms, stats_ms, poll_ms;
    uint64_t log_max_bytes;         /* each log of a kernel; 0 = default */
    int64_t next_hb, next_stats, next_poll, next_prune;
    /* exec into kernels (exec.c, exec_io.c) */
    struct skv__agent_exec **ex;
    size_t nex, capex;
    skv_agent_watch_fn watch;       /* the host's descriptor watcher */
    void *watch_payload;
    /* device health (health.c): the set last sent, since registering */
    char *health_sent;
    bool health_told;
};

/* ---- exec.c / exec_io.c: commands run inside kernels for the manager ---- */
#define SKV__AGENT_EXEC_MAX 256             /* execs at once */
#define SKV__AGENT_EXEC_WINDOW (256u * 1024) /* stdin credit, output default */
#define SKV__AGENT_EXEC_WINDOW_MAX (64u * 1024 * 1024)
#define SKV__AGENT_EXEC_CHUNK (64u * 1024)  /* output bytes per frame */

typedef struct skv__agent_exec {
    char *id;                       /* the manager's exec_id */
    char *kernel_id;
    skv_exec *x;
    int fd[4];                      /* stdin, stdout, stderr, pidfd; -1 done */
    unsigned watched[4];            /* events asked of the host per fd */
    bool tty;
    uint8_t *in;                    /* stdin not yet written, [in_off, in_len) */
    size_t in_off, in_len;
    uint64_t in_credit;             /* stdin bytes the manager may still send */
    uint64_t in_written;            /* written since the last stdin ack */
    bool in_eof;                    /* close stdin once `in` is drained */
    uint64_t out_credit;            /* output bytes we may still send */
    bool out_eof[3];                /* [1] stdout, [2] stderr at EOF */
    bool exited;
    const char *end_reason;         /* why sokovan ends it, or NULL */
} skv__agent_exec;

int skv__agent_on_exec_start(skv_agent *a, const skv_proto_envelope *env,
                             int64_t now_ms, skv_error *err);
/* exec.stdin / .output.ack / .resize / .signal events. */
int skv__agent_on_exec_event(skv_agent *a, const skv_proto_envelope *env,
                             int64_t now_ms, skv_error *err);
skv__agent_exec *skv__agent_exec_find(const skv_agent *a, const char *id);
/* Unwatch, kill if running, free, and remove from the table; with
 * `send`, exec.exit goes out first. */
void skv__agent_exec_end(skv_agent *a, skv__agent_exec *e, bool send,
                         int64_t now_ms);
/* End every exec (of kernel_id, or all when NULL) with `reason`. */
void skv__agent_execs_end(skv_agent *a, const char *kernel_id,
                          const char *reason, bool send, int64_t now_ms);
/* End the execs whose kernel ended or went away (from the tick). */
void skv__agent_execs_check(skv_agent *a, int64_t now_ms);
/* exec_io.c: move data as far as credit and descriptors allow, update the
 * host's watches, and finish an exec that is done (then e is freed). */
void skv__agent_exec_pump(skv_agent *a, skv__agent_exec *e, int64_t now_ms);
/* Tell the host which events of e's descriptors matter now. */
void skv__agent_exec_watch(skv_agent *a, skv__agent_exec *e);

/* ---- logs_keep.c: a destroyed kernel's logs to state_dir/logs ---- */
void skv__agent_keep_logs(skv_agent *a, const char *id);
bool skv__agent_kept_empty(const skv_agent *a, const char *id,
                           const char *stream);

/* ---- health.c: unhealthy devices to the manager ---- */
int skv__agent_health_check(skv_agent *a, int64_t now_ms, skv_error *err);
/* ---- layout.c: NUMA nodes and accelerator links for agent.register ---- */
int skv__agent_layout(skv_proto_agent_register *m, const skv_agent *a,
                      skv_error *err);
void skv__agent_layout_free(skv_proto_agent_register *m);

/* ---- hostmap.c: an XML topology's CPUs and nodes on this host ---- */
bool skv__agent_topo_is_xml(const skv_agent *a);
/* The host CPUs / memory nodes standing for the topology's (either list
 * may be NULL: its output stays NULL); free both with skv_free. */
int skv__agent_host_cpuset(const skv_agent *a, const char *cpus,
                           const char *mems, char **cpus_out, char **mems_out,
                           skv_error *err);

/* ---- setup.c: topology, plugins, slice, node, device table ---- */
int skv__agent_setup_node(skv_agent *a, const skv_agent_options *o,
                          skv_error *err);
void skv__agent_free_node(skv_agent *a);
/* slice.c: reserve what lies outside the CPU list / memory budget. */
int skv__agent_slice(skv_agent *a, const char *cpus, uint64_t mem,
                     skv_error *err);
/* Mark the accelerators outside list ("cuda0,cuda1"; NULL: none). */
int skv__agent_accel_slice(skv_agent *a, const char *list, skv_error *err);
/* The registered accelerator named id, NULL when none. */
const skv__agent_dev *skv__agent_dev_find(const skv_agent *a, const char *id);
/* The *.device / *.shares slot of plugin (NULL when none). */
const char *skv__agent_plugin_slot(const skv_agent *a, size_t plugin,
                                   const char *suffix);

/* ---- kernels.c: the kernel table ---- */
skv__agent_kernel *skv__agent_kernel_find(const skv_agent *a, const char *id);
int skv__agent_kernel_add(skv_agent *a, skv__agent_kernel *k, skv_error *err);
/* Remove k from the table and free it (its placement must be released). */
void skv__agent_kernel_remove(skv_agent *a, skv__agent_kernel *k);
void skv__agent_kernel_free(skv__agent_kernel *k);
/* Give back k's node placement and ledger amounts. */
void skv__agent_kernel_release(skv_agent *a, skv__agent_kernel *k);
/* Take k's resources: ledger amounts and node placement (fixed: the amounts
 * to take exactly, NULL to place around the accelerators of alloc[]). */
int skv__agent_kernel_take(skv_agent *a, skv__agent_kernel *k,
                           const skv_device_amount *fixed, size_t nfixed,
                           skv_error *err);

/* ---- record.c: state_dir/kernels/<id>.rec ---- */
int skv__agent_record_write(skv_agent *a, const skv__agent_kernel *k,
                            const void *body, size_t len, skv_error *err);
void skv__agent_record_remove(skv_agent *a, const char *kernel_id);
int skv__agent_record_render(skv__agent_record *out, const skv_agent *a,
                             const skv__agent_kernel *k, const void *body,
                             size_t len, skv_error *err);
/* Write it atomically (tmp, fsync, rename); any thread. */
int skv__agent_record_store(const skv__agent_record *r, skv_error *err);
void skv__agent_record_clear(skv__agent_record *r);
/* Load every record, take its resources and match it with its container. */
int skv__agent_records_restore(skv_agent *a, int64_t now_ms, skv_error *err);

/* ---- creator.c: containers created on background threads ---- */
/* nthreads workers, each with a runtime handle opened with ro. */
int skv__agent_creator_open(skv_agent *a, const skv_runtime_options *ro,
                            unsigned nthreads, skv_error *err);
/* Waits for the jobs in flight, then stops the workers. Jobs still
 * unfinished by the agent are freed (their containers keep running and
 * their records stay: a restarted agent finds them). */
void skv__agent_creator_close(skv_agent *a);
/* Queue j (owned by the agent's job list from now on). */
int skv__agent_creator_submit(skv_agent *a, skv__agent_job *j,
                              skv_error *err);
/* One job the workers have finished, removed from the agent's list (the
 * caller finishes and frees it); NULL when none. With wait, blocks until
 * one finishes while any is in flight. */
skv__agent_job *skv__agent_creator_take(skv_agent *a, bool wait);
skv__agent_job *skv__agent_job_find(const skv_agent *a, const char *kid);
void skv__agent_job_free(skv__agent_job *j);
/* create.c: answer every finished job; with wait, all jobs in flight. */
void skv__agent_jobs_finish(skv_agent *a, bool wait, int64_t now_ms);

/* ---- spec.c: the container of a kernel ---- */
int skv__agent_build_spec(skv_container_spec **out, skv_agent *a,
                          const skv__agent_kernel *k, skv_error *err);

/* ---- send.c: messages to the manager ---- */
/* Encode and hand one message to the send callback; events and requests
 * are signed with the agent's keypair, responses are not. */
int skv__agent_emit(skv_agent *a, skv_proto_kind kind, uint64_t id,
                    skv_proto_type type, const void *body, int64_t now_ms,
                    skv_error *err);
int skv__agent_reply_error(skv_agent *a, uint64_t id, int code,
                           const char *message, const char *request_type,
                           int64_t now_ms);
/* Reports of every kernel held (alloc borrowed from the kernels). Free
 * the array with skv__free. */
skv_proto_kernel_report *skv__agent_reports(const skv_agent *a,
                                            size_t *n, skv_error *err);
/* Sets k->exit_sent once the event is out. */
int skv__agent_send_exit(skv_agent *a, skv__agent_kernel *k,
                         int64_t now_ms, skv_error *err);
int skv__agent_send_status(skv_agent *a, const skv__agent_kernel *k,
                           const char *status, const char *reason,
                           int64_t now_ms, skv_error *err);

/* ---- register.c ---- */
int skv__agent_send_register(skv_agent *a, int64_t now_ms, skv_error *err);
int skv__agent_on_register_reply(skv_agent *a, const skv_proto_envelope *env,
                                 int64_t now_ms, skv_error *err);

/* ---- create.c / destroy.c / logs.c: the manager's requests ---- */
int skv__agent_on_create(skv_agent *a, const skv_proto_envelope *env,
                         int64_t now_ms, skv_error *err);
int skv__agent_on_destroy(skv_agent *a, const skv_proto_envelope *env,
                          int64_t now_ms, skv_error *err);
int skv__agent_on_logs(skv_agent *a, const skv_proto_envelope *env,
                       int64_t now_ms, skv_error *err);
/* Finish a kernel.destroy: logs kept, container destroyed, resources and
 * record released, k removed; then the ack to k->destroy_req. */
int skv__agent_destroy_finish(skv_agent *a, skv__agent_kernel *k,
                              int64_t now_ms, skv_error *err);
/* kernel.destroy req of k with grace: SIGTERM and wait, or at once. */
int skv__agent_destroy_start(skv_agent *a, skv__agent_kernel *k,
                             uint64_t req, uint32_t grace, int64_t now_ms,
                             skv_error *err);
int skv__agent_ack(skv_agent *a, uint64_t id, const char *message,
                   int64_t now_ms, skv_error *err);
/* Remove retained logs older than an hour or beyond the newest 1000. */
void skv__agent_prune_logs(skv_agent *a, int64_t now_ms);

/* ---- net.c / net_kernel.c / net_routes.c: cluster networking ---- */
/* Session subnets of an agent the manager gave no subnet. */
#define SKV__AGENT_LOCAL_CIDR "10.250.0.0/16"
bool skv__agent_net_inside(const char *subnet, const char *ip);
skv__agent_net *skv__agent_net_find(const skv_agent *a, const char *sid);
/* Remove n from the table: destroy its network, or only free the handle. */
void skv__agent_net_drop(skv_agent *a, skv__agent_net *n, bool destroy);
/* state_dir/network: the subnet and cluster CIDR of the last registration
 * (isolation rules of adopted networks need them before the next one). */
int skv__agent_net_load(skv_agent *a, skv_error *err);
/* Limits on all session containers of the host together (host_limits.c):
 * computed from the options and the host (*apply false: none to write),
 * then written to the containers' parent cgroup. */
int skv__agent_host_budget(const skv_agent_options *o,
                           skv_cgroup_limits *lim, bool *apply,
                           skv_error *err);
int skv__agent_host_limits(const skv_agent *a, const skv_cgroup_limits *lim,
                           skv_error *err);
/* The link prefix from the agent id (several agents may share a host). */
void skv__agent_net_prefix(skv_agent *a);
/* Resolve k's network mode; for a cluster network fill the request's
 * subnet (the session's, or a new one from the local pool), host
 * addresses and SSH seed, and compute host_index and address. A restored
 * record without a subnet comes from an agent that ran multi-kernel
 * sessions on the host network: it stays there. */
int skv__agent_net_resolve(skv_agent *a, skv__agent_kernel *k, bool restore,
                           skv_error *err);
/* Session network up (created or adopted), peers allowed, SSH files
 * written. On failure what this call created is removed again. */
int skv__agent_net_prepare(skv_agent *a, skv__agent_kernel *k, bool adopt,
                           skv_error *err);
/* Between create and start: attach the container; publish the ports. */
int skv__agent_net_attach(skv_agent *a, skv__agent_kernel *k,
                          skv_error *err);
/* The kernel's published ports as "tcp:22=30001" (free with
 * skv__agent_net_published_free). */
int skv__agent_net_published(const skv_agent *a, const skv__agent_kernel *k,
                             char ***out, size_t *n, skv_error *err);
void skv__agent_net_published_free(char **p, size_t n);
/* k goes: its SSH files; the session network when no other kernel of the
 * session is left on this agent. */
void skv__agent_net_release(skv_agent *a, skv__agent_kernel *k);
/* After restore: remove networks of sessions no longer held. */
void skv__agent_net_cleanup(skv_agent *a);
void skv__agent_net_free(skv_agent *a);
/* Register reply / agent.routes: forwarding, routes to the peers. */
int skv__agent_net_registered(skv_agent *a,
                              const skv_proto_agent_register_reply *r,
                              skv_error *err);
int skv__agent_net_set_routes(skv_agent *a, const skv_proto_route *routes,
                              size_t n, skv_error *err);
int skv__agent_on_routes(skv_agent *a, const skv_proto_envelope *env,
                         int64_t now_ms, skv_error *err);
/* agent.routes.delta: withdraw, then add, single routes (net_routes_delta.c). */
int skv__agent_on_routes_delta(skv_agent *a, const skv_proto_envelope *env,
                               skv_error *err);

/* ---- tick.c ---- */
/* Poll every running kernel's container; report the exits. */
void skv__agent_poll_exits(skv_agent *a, int64_t now_ms);

/* Join state_dir and a relative path; NULL when out of memory. */
char *skv__agent_path(const skv_agent *a, const char *rel);

/* vf_mounts.c: kernel.create's virtual folder bind mounts, checked. */
int skv__agent_vf_mounts(skv_container_spec *spec,
                         const skv_proto_kernel_create *r, skv_error *err);

#endif
