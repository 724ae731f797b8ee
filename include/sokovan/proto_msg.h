/*
 * sokovan/proto_msg.h - the message bodies of the wire protocol as plain C
 * structures (included by sokovan/proto.h; see docs/protocol.md for the
 * field-by-field description and the msgpack keys).
 *
 * Conventions for every structure here:
 *   - strings are NUL-terminated UTF-8 `char *`; NULL means "absent";
 *   - an array is a pointer plus its `n_` count;
 *   - slot vectors are `skv_slots *` (NULL means absent);
 *   - a structure filled by skv_proto_body_decode() owns all of its memory;
 *     release it with skv_proto_body_free(type, &msg), which frees the
 *     members (not the structure itself) and zeroes it. Structures built by
 *     the caller for encoding are only read.
 *   - zero-initialise before filling (`skv_proto_x m = {0};` / memset):
 *     new fields are appended in later versions and zero means "absent".
 *
 * Thread-safety: plain data; the usual rule (concurrent reads fine).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_PROTO_MSG_H
#define SOKOVAN_PROTO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/slots.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared pieces ------------------------------------------------------ */

typedef struct skv_proto_kv {          /* labels, environment, constraints */
    char *key;
    char *value;
} skv_proto_kv;

typedef struct skv_proto_device {      /* one device's capacity */
    char *id;          /* "cpu", "mem", "cuda:0", "numa1"... unique per agent */
    char *kind;        /* "cpu", "mem", "cuda"... */
    int32_t numa_node; /* -1: unknown */
    skv_slots *slots;  /* what this device offers, per slot name */
    char *model;       /* "NVIDIA H100 80GB HBM3", CPU model... */
    char *bus_id;      /* PCI bus id for PCI devices */
} skv_proto_device;

typedef struct skv_proto_device_alloc { /* one device's share of a kernel */
    char *device_id;
    skv_slots *slots;
} skv_proto_device_alloc;

typedef struct skv_proto_kernel_report { /* a kernel an agent is running */
    char *session_id;
    char *kernel_id;
    char *status;                        /* "preparing", "running", ... */
    skv_proto_device_alloc *alloc;
    size_t n_alloc;
} skv_proto_kernel_report;

/* ---- generic replies ------------------------------------------------------- */

typedef struct skv_proto_error {       /* type "error" */
    int32_t code;                      /* an SKV_E* code */
    char *message;
    char *request_type;                /* type name of the refused request */
} skv_proto_error;

typedef struct skv_proto_ack {         /* type "ack" */
    char *message;                     /* optional */
} skv_proto_ack;

/* ---- agent -> manager ---------------------------------------------------- */

typedef struct skv_proto_image_detail {  /* what an agent knows of an image */
    char *name;
    char *digest;                      /* "sha256:..." of its archive; opt. */
    uint64_t size_bytes;               /* 0: not known */
    char **services;                   /* the image's own service
                                          declarations (image.json); opt. */
    size_t n_services;
    char **command;                    /* the image's default command */
    size_t n_command;
} skv_proto_image_detail;

/* The machine's layout an agent registers (topology-aware placement). */
typedef struct skv_proto_numa_node {   /* one NUMA node */
    int32_t id;                        /* the OS's node number */
    char *cpus;                        /* its PUs as a list, "0-1,24-25" */
    uint32_t cores;                    /* cores on it */
    uint64_t memory_bytes;             /* local memory; 0 unknown */
} skv_proto_numa_node;

typedef struct skv_proto_device_link { /* how close two devices are */
    char *a;                           /* device ids of agent.register's */
    char *b;                           /*   devices (a != b, each pair once) */
    char *link;                        /* PCIe proximity, closest first: "pix"
                                          same PCIe switch, "pxb" bridges,
                                          "phb" same host bridge, "node" same
                                          NUMA node, "sys" across sockets */
    uint64_t nvlink_mbps;              /* NVLink bandwidth MB/s; 0 none */
} skv_proto_device_link;

typedef struct skv_proto_agent_register {        /* "agent.register" */
    char *agent_id;
    char *resource_group;
    char *architecture;                /* "x86_64", "aarch64" */
    char *address;                     /* where the manager reaches it */
    char *version;                     /* agent software version */
    skv_proto_kv *labels;
    size_t n_labels;
    skv_proto_device *devices;         /* device-level capacity */
    size_t n_devices;
    char **images;                     /* images present locally */
    size_t n_images;
    skv_proto_kernel_report *kernels;  /* running now (reconciliation) */
    size_t n_kernels;
    skv_proto_image_detail *image_details; /* size/digest per image; opt. */
    size_t n_image_details;
    bool route_deltas;                 /* applies agent.routes.delta: the
                                          manager then sends route changes,
                                          not the whole table each time */
    skv_proto_numa_node *numa_nodes;   /* the machine's NUMA nodes; opt. */
    size_t n_numa_nodes;
    skv_proto_device_link *links;      /* accelerator pairs; opt. (none: the
                                          manager knows no proximity) */
    size_t n_links;
} skv_proto_agent_register;

typedef struct skv_proto_route {       /* a peer agent's kernel subnet */
    char *subnet;                      /* CIDR, e.g. "10.128.16.0/20" */
    char *via;                         /* that agent's host address */
    char *agent_id;
} skv_proto_route;

typedef struct skv_proto_agent_register_reply {  /* "agent.register.reply" */
    uint32_t heartbeat_interval_ms;
    uint32_t heartbeat_timeout_ms;
    int64_t server_time_ms;
    char *subnet;                      /* this agent's share of the cluster
                                          CIDR for kernel addresses; NULL:
                                          no cluster networking */
    char *cluster_cidr;                /* the whole cluster CIDR */
    skv_proto_route *routes;           /* the other agents' subnets */
    size_t n_routes;
} skv_proto_agent_register_reply;

typedef struct skv_proto_agent_routes {          /* "agent.routes" event,
                                                  * manager -> agent */
    skv_proto_route *routes;           /* the full set (replaces the last) */
    size_t n_routes;
} skv_proto_agent_routes;

typedef struct skv_proto_agent_routes_delta {    /* "agent.routes.delta"
                                                  * event, manager -> agent
                                                  * (to agents that set
                                                  * route_deltas) */
    skv_proto_route *removed;          /* withdrawn: applied first */
    size_t n_removed;
    skv_proto_route *added;            /* new or moved peers */
    size_t n_added;
} skv_proto_agent_routes_delta;

typedef struct skv_proto_agent_heartbeat {       /* "agent.heartbeat" event */
    char *agent_id;
    uint64_t seq;
    skv_slots *occupied;               /* sum over running kernels */
    skv_proto_kernel_report *kernels;
    size_t n_kernels;
} skv_proto_agent_heartbeat;

typedef struct skv_proto_kernel_status {         /* "kernel.status" event */
    char *agent_id;
    char *session_id;
    char *kernel_id;
    char *status;
    char *reason;
    char *container_id;
} skv_proto_kernel_status;

typedef struct skv_proto_kernel_exit {           /* "kernel.exit" event */
    char *agent_id;
    char *session_id;
    char *kernel_id;
    int32_t exit_code;                 /* valid when signal == 0 */
    int32_t signal;                    /* terminating signal or 0 */
    uint8_t oom;                       /* 1: killed by the OOM killer */
    int64_t finished_ms;
    char *reason;
} skv_proto_kernel_exit;

typedef struct skv_proto_kernel_stats {
    char *session_id;
    char *kernel_id;
    uint64_t cpu_usec;
    uint64_t mem_bytes;
    uint64_t mem_peak_bytes;
    uint64_t io_read_bytes;
    uint64_t io_write_bytes;
    uint32_t pids;
} skv_proto_kernel_stats;

typedef struct skv_proto_agent_stats {           /* "agent.stats" event */
    char *agent_id;
    skv_proto_kernel_stats *kernels;
    size_t n_kernels;
} skv_proto_agent_stats;

/* ---- manager -> agent ------------------------------------------------------ */

typedef struct skv_proto_cluster_host {
    char *hostname;                    /* e.g. "main1", "sub2" */
    char *role;
    uint32_t idx;
    char *address;
} skv_proto_cluster_host;

/* A virtual folder mounted into a session's kernels (session.submit,
 * kernel.create). The client names the folder (NAME or its id) and where it
 * goes; the manager checks access and fills source (the folder's host
 * path) before the session is recorded: a client's own source is refused. */
typedef struct skv_proto_mount {
    char *folder;                      /* name or id ("f-...") */
    char *target;                      /* absolute container path; NULL:
                                          /home/work/<folder> */
    uint8_t readonly;                  /* 1: a read-only bind mount */
    char *source;                      /* host path; set by the manager */
    char *folder_id;                   /* set by the manager */
} skv_proto_mount;

typedef struct skv_proto_kernel_create {         /* "kernel.create" */
    char *session_id;
    char *kernel_id;
    char *owner;
    char *session_type;                /* "interactive", "batch", ... */
    char *image;
    char **argv;
    size_t n_argv;
    skv_proto_kv *env;
    size_t n_env;
    char *workdir;
    skv_slots *slots;                  /* total of the allocation */
    skv_proto_device_alloc *alloc;     /* per device, per slot */
    size_t n_alloc;
    uint32_t *cpuset;                  /* CPU ids */
    size_t n_cpuset;
    uint32_t *mems;                    /* NUMA node ids */
    size_t n_mems;
    char *cluster_mode;                /* "single-node", "multi-node" */
    char *cluster_role;                /* "main", "sub" */
    uint32_t cluster_idx;
    uint32_t cluster_size;
    skv_proto_cluster_host *cluster_hosts;
    size_t n_cluster_hosts;
    char *network;                     /* "none", "host", "cluster"; NULL:
                                          "cluster" for more than one kernel,
                                          else "none" */
    char *subnet;                      /* cluster: the session's subnet on
                                          this agent (CIDR); hosts' address
                                          fields hold every kernel's IP */
    uint8_t *ssh_seed;                 /* 32 bytes: the session's SSH key
                                          seed (sshkey.h), same for all */
    size_t ssh_seed_len;
    uint32_t *ports;                   /* container TCP ports to publish */
    size_t n_ports;
    skv_proto_mount *mounts;           /* bind mounts of virtual folders */
    size_t n_mounts;
    uint8_t allow_unenforced_shares;   /* 1: fractional shares the agent
                                          cannot enforce may start (the
                                          group allows it); 0: refused */
    char *numa_policy;                 /* the session's (session.submit);
                                          NULL: prefer-single-node */
} skv_proto_kernel_create;

typedef struct skv_proto_kernel_create_reply {   /* "kernel.create.reply" */
    char *kernel_id;
    char *container_id;
    char *address;                     /* the kernel's IP (cluster network) */
    char **published;                  /* "tcp:22=30001" container port =
                                          host port on the agent */
    size_t n_published;
} skv_proto_kernel_create_reply;

typedef struct skv_proto_kernel_destroy {        /* "kernel.destroy" -> ack */
    char *session_id;
    char *kernel_id;
    char *reason;
    uint32_t grace_ms;                 /* SIGTERM .. SIGKILL delay */
} skv_proto_kernel_destroy;

/* "kernel.logs" (manager -> agent) and "session.logs" (user -> manager);
 * both answered with "logs.reply". */
typedef struct skv_proto_logs_request {
    char *session_id;
    char *kernel_id;                   /* optional for session.logs */
    uint64_t offset;                   /* byte offset to start at */
    uint32_t max_bytes;                /* 0: server default */
    char *stream;                      /* "stdout" (NULL too) or "stderr" */
} skv_proto_logs_request;

typedef struct skv_proto_logs_reply {            /* "logs.reply" */
    char *session_id;
    char *kernel_id;
    uint8_t *data;                     /* raw bytes (not NUL-terminated) */
    size_t data_len;
    uint64_t next_offset;
    uint8_t eof;                       /* 1: the kernel ended, no more */
} skv_proto_logs_reply;

/* ---- user -> manager ---------------------------------------------------------- */

typedef struct skv_proto_kernel_spec {
    char *role;                        /* "main", "sub" */
    char *image;                       /* optional override */
    skv_slots *slots;                  /* request of this kernel */
} skv_proto_kernel_spec;

typedef struct skv_proto_session_submit {        /* "session.submit" */
    char *name;
    char *owner;                       /* admins may submit for others */
    char *project;
    char *resource_group;
    char *session_type;                /* "interactive", "batch", "inference" */
    int32_t priority;
    char *cluster_mode;                /* "single-node", "multi-node" */
    uint32_t cluster_size;
    char *image;
    char **command;
    size_t n_command;
    skv_proto_kv *env;
    size_t n_env;
    skv_proto_kernel_spec *kernels;
    size_t n_kernels;
    skv_proto_kv *constraints;         /* agent label requirements */
    size_t n_constraints;
    char **dependencies;               /* session ids that must finish first */
    size_t n_dependencies;
    uint64_t estimated_duration_ms;
    uint8_t preemptible;
    char *client_token;                /* idempotency: same token, same session */
    uint32_t *ports;                   /* main kernel's container TCP ports to
                                          publish on its agent (cluster
                                          network) */
    size_t n_ports;
    int64_t not_before_ms;             /* earliest start, Unix ms; 0: none */
    uint64_t max_lifetime_ms;          /* terminated this long after it
                                          started (the owner's policy limit
                                          still applies); 0: no own limit */
    skv_proto_mount *mounts;           /* virtual folders, on every kernel */
    size_t n_mounts;
    char **services;                   /* "NAME=PORT/http" or "NAME=PORT/tcp":
                                          named service ports of the main
                                          kernel, each PORT also in ports,
                                          served by the app proxy
                                          (skv_proto_service_parse) */
    size_t n_services;
    char *numa_policy;                 /* "prefer-single-node" (cores and
                                          memory on the GPUs' nodes, memory
                                          bound there) or "interleaved"
                                          (memory interleaved over the
                                          session's nodes); NULL: the first */
} skv_proto_session_submit;

typedef struct skv_proto_session_ref { /* "session.submit.reply",
                                        * "session.terminate.reply" */
    char *session_id;
    char *status;
} skv_proto_session_ref;

typedef struct skv_proto_session_list {          /* "session.list" */
    char *owner;                       /* NULL: the caller's own */
    char *resource_group;
    char **statuses;
    size_t n_statuses;
    uint32_t limit;
    uint32_t offset;
} skv_proto_session_list;

typedef struct skv_proto_status_change {
    char *status;
    int64_t timestamp_ms;
    char *reason;
} skv_proto_status_change;

typedef struct skv_proto_pending_reason {        /* why a session waits */
    char *resource_group;
    char *predicate;                   /* the failing check */
    char *slot;                        /* the short slot, if any */
    int64_t shortfall;                 /* skv_qty of that slot */
    char *message;
    int64_t estimated_start_ms;        /* has-reservation: wall-clock Unix
                                          ms it should start; 0: unknown */
} skv_proto_pending_reason;

typedef struct skv_proto_kernel_info {
    char *kernel_id;
    char *role;
    uint32_t idx;
    char *agent_id;
    char *container_id;
    char *status;
    int32_t exit_code;
    skv_slots *slots;
    char *address;                     /* the kernel's IP on its network */
    char **published;                  /* "tcp:22=HOST:30001" */
    size_t n_published;
} skv_proto_kernel_info;

typedef struct skv_proto_session_info {
    char *session_id;
    char *name;
    char *owner;
    char *project;
    char *resource_group;
    char *session_type;
    char *status;
    char *status_reason;
    int32_t priority;
    char *cluster_mode;
    uint32_t cluster_size;
    char *image;
    int64_t created_ms;
    int64_t started_ms;
    int64_t finished_ms;
    int32_t exit_code;
    skv_slots *slots;                  /* requested, summed over kernels */
    skv_proto_status_change *history;  /* show only */
    size_t n_history;
    skv_proto_pending_reason *pending; /* show only, pending sessions */
    size_t n_pending;
    skv_proto_kernel_info *kernels;    /* show only */
    size_t n_kernels;
    char **services;                   /* show only: as submitted */
    size_t n_services;
} skv_proto_session_info;

typedef struct skv_proto_session_list_reply {    /* "session.list.reply" */
    skv_proto_session_info *sessions;
    size_t n_sessions;
    uint64_t total;                    /* matches before limit/offset */
} skv_proto_session_list_reply;

typedef struct skv_proto_session_id {            /* "session.show" */
    char *session_id;
} skv_proto_session_id;

typedef struct skv_proto_session_show_reply {    /* "session.show.reply" */
    skv_proto_session_info session;
} skv_proto_session_show_reply;

typedef struct skv_proto_session_terminate {     /* "session.terminate" */
    char *session_id;
    char *reason;
    uint8_t force;
} skv_proto_session_terminate;

typedef struct skv_proto_agent_list {            /* "agent.list" */
    char *resource_group;
    uint8_t include_lost;
} skv_proto_agent_list;

/* One device an agent's plugin reports unhealthy. */
typedef struct skv_proto_device_fault {
    char *device_id;                   /* as registered ("cuda1") */
    char *reason;                      /* e.g. "xid 79", "injected fault" */
} skv_proto_device_fault;

typedef struct skv_proto_agent_device_health { /* "agent.device_health" */
    char *agent_id;
    skv_proto_device_fault *unhealthy; /* the whole current set: devices
                                          not named are healthy */
    size_t n_unhealthy;
} skv_proto_agent_device_health;

typedef struct skv_proto_admin_agent {           /* "admin.agent" */
    char *agent_id;
    char *action;                      /* "cordon", "drain", "uncordon" */
} skv_proto_admin_agent;

typedef struct skv_proto_agent_info {
    char *agent_id;
    char *resource_group;
    char *architecture;
    char *address;
    char *status;                      /* "alive", "lost", ... */
    skv_proto_kv *labels;
    size_t n_labels;
    skv_proto_device *devices;
    size_t n_devices;
    skv_slots *capacity;
    skv_slots *occupied;
    int64_t last_heartbeat_ms;
    uint32_t n_running;
    char *admin_state;                 /* "schedulable", "cordoned",
                                          "draining" */
    int64_t drain_deadline_ms;         /* draining: when its sessions are
                                          ended or requeued; 0: none */
    skv_proto_device_fault *unhealthy; /* devices out of service */
    size_t n_unhealthy;
} skv_proto_agent_info;

typedef struct skv_proto_agent_list_reply {      /* "agent.list.reply" */
    skv_proto_agent_info *agents;
    size_t n_agents;
} skv_proto_agent_list_reply;

typedef struct skv_proto_image_list {            /* "image.list" */
    char *architecture;
} skv_proto_image_list;

typedef struct skv_proto_image_info {
    char *name;
    char *architecture;
    char *digest;
    uint64_t size_bytes;
    char **agents;
    size_t n_agents;
} skv_proto_image_info;

typedef struct skv_proto_image_list_reply {      /* "image.list.reply" */
    skv_proto_image_info *images;
    size_t n_images;
} skv_proto_image_list_reply;

/* ---- admin ------------------------------------------------------------------- */

typedef enum skv_proto_admin_op {
    SKV_PROTO_ADMIN_CREATE = 1,
    SKV_PROTO_ADMIN_UPDATE = 2,
    SKV_PROTO_ADMIN_DELETE = 3,        /* the object's name identifies it */
    SKV_PROTO_ADMIN_LIST = 4           /* a set name filters; NULL: all */
} skv_proto_admin_op;

typedef struct skv_proto_user {
    char *name;
    char *email;
    char *role;                        /* "user", "admin" */
    char *domain;
    char **projects;
    size_t n_projects;
    char *resource_policy;
    char *description;
    uint8_t active;
} skv_proto_user;

typedef struct skv_proto_keypair {
    char *access_key;
    char *secret_key;                  /* only in the reply to CREATE */
    char *user;
    char *resource_policy;
    uint8_t active;
    int64_t created_ms;
} skv_proto_keypair;

typedef struct skv_proto_project {
    char *name;
    char *domain;
    char *description;
    char *resource_policy;
    uint8_t active;
} skv_proto_project;

typedef struct skv_proto_domain {
    char *name;
    char *description;
    char **resource_groups;            /* groups its users may use */
    size_t n_resource_groups;
    uint8_t active;
} skv_proto_domain;

typedef struct skv_proto_resource_policy {
    char *name;
    skv_slots *max_slots;              /* per owner, over running sessions */
    uint32_t max_concurrent_sessions;  /* 0: unlimited */
    uint32_t max_pending_sessions;     /* 0: unlimited */
    uint32_t max_cluster_size;         /* 0: unlimited */
    uint64_t max_session_lifetime_ms;  /* 0: unlimited */
    uint64_t idle_timeout_ms;          /* a RUNNING session idle this long
                                          is terminated; 0: never */
} skv_proto_resource_policy;

typedef struct skv_proto_resource_group {
    char *name;
    char *description;
    char *scheduler;                   /* scheduler policy name */
    char *lost_batch_policy;           /* "requeue" or "fail" */
    uint64_t pending_timeout_ms;       /* 0: wait forever */
    char **session_types;              /* allowed; none: all */
    size_t n_session_types;
    uint8_t active;
    char *selector;                    /* agent selector name; NULL: keep
                                          (create: "auto") */
    char *preemption;                  /* "on" / "off"; NULL: keep (create:
                                          "off") */
    int64_t preempt_min_runtime_ms;    /* victims must have run this long;
                                          0: keep (create: 0), < 0: set 0 */
    char *preempt_mode;                /* "requeue" / "terminate"; NULL:
                                          keep (create: "requeue") */
    char *drain_action;                /* sessions of a draining agent:
                                          "requeue" / "terminate"; NULL:
                                          keep (create: "requeue") */
    int64_t drain_grace_ms;            /* how long a drain waits for them;
                                          0: keep (create: 0), < 0: set 0 */
    char *fault_action;                /* batch sessions on an unhealthy
                                          device: "requeue" / "terminate" /
                                          "degrade"; NULL: keep (create:
                                          "requeue"); interactive ones are
                                          always marked degraded */
    char *allow_unenforced_fractions;  /* "on" / "off"; NULL: keep
                                          (create: "off") */
    int64_t idle_timeout_ms;           /* a RUNNING session idle this long
                                          is terminated; 0: keep (create:
                                          never), < 0: set never */
    int64_t max_lifetime_ms;           /* a session running this long is
                                          terminated; 0: keep (create:
                                          none), < 0: set none */
    char *preempt_order;               /* victims first: "lowest-priority"
                                          / "newest"; NULL: keep (create:
                                          "lowest-priority") */
} skv_proto_resource_group;

/* Requests ("admin.user", ...) carry op and one object; replies
 * ("admin.user.reply", ...) the resulting objects (none for DELETE). */
typedef struct skv_proto_admin_user {
    uint32_t op;                       /* skv_proto_admin_op */
    skv_proto_user user;
} skv_proto_admin_user;
typedef struct skv_proto_admin_user_reply {
    skv_proto_user *users;
    size_t n_users;
} skv_proto_admin_user_reply;

typedef struct skv_proto_admin_keypair {
    uint32_t op;
    skv_proto_keypair keypair;
} skv_proto_admin_keypair;
typedef struct skv_proto_admin_keypair_reply {
    skv_proto_keypair *keypairs;
    size_t n_keypairs;
} skv_proto_admin_keypair_reply;

typedef struct skv_proto_admin_project {
    uint32_t op;
    skv_proto_project project;
} skv_proto_admin_project;
typedef struct skv_proto_admin_project_reply {
    skv_proto_project *projects;
    size_t n_projects;
} skv_proto_admin_project_reply;

typedef struct skv_proto_admin_domain {
    uint32_t op;
    skv_proto_domain domain;
} skv_proto_admin_domain;
typedef struct skv_proto_admin_domain_reply {
    skv_proto_domain *domains;
    size_t n_domains;
} skv_proto_admin_domain_reply;

typedef struct skv_proto_admin_resource_policy {
    uint32_t op;
    skv_proto_resource_policy policy;
} skv_proto_admin_resource_policy;
typedef struct skv_proto_admin_resource_policy_reply {
    skv_proto_resource_policy *policies;
    size_t n_policies;
} skv_proto_admin_resource_policy_reply;

typedef struct skv_proto_admin_resource_group {
    uint32_t op;
    skv_proto_resource_group group;
} skv_proto_admin_resource_group;
typedef struct skv_proto_admin_resource_group_reply {
    skv_proto_resource_group *groups;
    size_t n_groups;
} skv_proto_admin_resource_group_reply;

/* "admin.quota": one owner's quota in one resource group. CREATE fails
 * when the owner has one there already; UPDATE creates or changes it (a
 * vector left NULL keeps its value, an empty vector clears it); DELETE
 * removes it; LIST filters by the fields set. */
typedef struct skv_proto_quota {
    char *scope;                       /* "domain", "project" or "user" */
    char *owner;                       /* the domain, project or user name */
    char *resource_group;
    skv_slots *guaranteed;             /* its deserved share; NULL: none */
    skv_slots *limit;                  /* hard max; NULL: none */
    skv_slots *borrow_limit;           /* beyond guaranteed; NULL: none */
} skv_proto_quota;
typedef struct skv_proto_admin_quota {
    uint32_t op;
    skv_proto_quota quota;
} skv_proto_admin_quota;
typedef struct skv_proto_admin_quota_reply {
    skv_proto_quota *quotas;
    size_t n_quotas;
} skv_proto_admin_quota_reply;

/* "admin.quota_tree": domains -> projects -> users of each resource group
 * (of one, when named) that hold a quota or use something there, with
 * their ancestors. A user is listed under every project of theirs; its
 * figures are the user's in the group. */
typedef struct skv_proto_admin_quota_tree {
    char *resource_group;              /* NULL: every group */
} skv_proto_admin_quota_tree;
typedef struct skv_proto_quota_node {
    char *resource_group;
    char *scope;                       /* "domain", "project", "user" */
    char *name;
    char *parent;                      /* NULL for a domain */
    skv_slots *guaranteed;             /* NULL: none */
    skv_slots *limit;
    skv_slots *borrow_limit;
    skv_slots *used;                   /* its running sessions there */
    skv_slots *borrowed;               /* used beyond its guarantee */
    skv_slots *lent;                   /* idle guarantee its siblings use */
} skv_proto_quota_node;
typedef struct skv_proto_admin_quota_tree_reply {
    skv_proto_quota_node *nodes;       /* depth first, names in order */
    size_t n_nodes;
} skv_proto_admin_quota_tree_reply;

/* "admin.backup": an online copy of the manager database (SQLite backup
 * API, one consistent snapshot) written by the manager on its own host, as
 * a new file in its backup_dir. */
typedef struct skv_proto_admin_backup {
    char *name;         /* file name: [A-Za-z0-9_.-], not starting with '.' */
} skv_proto_admin_backup;
typedef struct skv_proto_admin_backup_reply {
    char *path;         /* absolute path of the file written */
    uint64_t bytes;     /* its size */
} skv_proto_admin_backup_reply;

/* ---- exec: a command inside a running kernel ---------------------------------
 * One exec is named by exec_id on each connection it crosses; the sender of
 * exec.start picks it (1..64 of [A-Za-z0-9_.-], unique among its execs on
 * that connection). Flow control is by credit, in bytes of data:
 *   output: the sender of exec.start grants `window` bytes of exec.output
 *   data; the agent sends no more than granted and stops reading the
 *   command's output meanwhile (the command blocks on a full pipe); each
 *   exec.output.ack grants `bytes` more (send it as output is consumed).
 *   stdin: exec.start.reply grants `window` bytes of exec.stdin data; the
 *   agent grants more with exec.stdin.ack as the command reads. Data beyond
 *   the credit ends the exec (exec.exit, reason says why).
 * So no daemon on the path holds more than a window per exec. */

typedef struct skv_proto_exec_start {        /* "exec.start" */
    char *session_id;
    char *kernel_id;            /* a client may omit it: the main kernel */
    char *exec_id;
    char **argv;                /* at least one */
    size_t n_argv;
    skv_proto_kv *env;          /* added to / replacing the kernel's */
    size_t n_env;
    char *workdir;              /* absolute; absent: the kernel's */
    uint8_t tty;                /* 1: a pseudo-terminal (stdout only) */
    uint32_t rows, cols;        /* window size with tty (1..65535; 0: 24x80) */
    uint32_t window;            /* output credit; 0: 256 KiB */
} skv_proto_exec_start;

typedef struct skv_proto_exec_start_reply {  /* "exec.start.reply" */
    char *exec_id;
    int64_t pid;                /* the command's pid on its host */
    uint32_t window;            /* stdin credit */
} skv_proto_exec_start_reply;

/* "exec.stdin" (to the command) and "exec.output" (from it). */
typedef struct skv_proto_exec_data {
    char *exec_id;
    char *stream;               /* exec.output: "stdout" or "stderr" */
    uint8_t *data;              /* at most 1 MiB per frame */
    size_t data_len;
    uint8_t eof;                /* exec.stdin: end of input after data */
} skv_proto_exec_data;

/* "exec.output.ack" (output credit) and "exec.stdin.ack" (stdin credit). */
typedef struct skv_proto_exec_ack {
    char *exec_id;
    uint32_t bytes;             /* more bytes the sender of the data may send */
} skv_proto_exec_ack;

typedef struct skv_proto_exec_resize {       /* "exec.resize" */
    char *exec_id;
    uint32_t rows, cols;        /* 1..65535 */
} skv_proto_exec_resize;

typedef struct skv_proto_exec_signal {       /* "exec.signal" */
    char *exec_id;
    int32_t signal;             /* 1..64 (Linux numbers), to the command */
} skv_proto_exec_signal;

typedef struct skv_proto_exec_exit {         /* "exec.exit" */
    char *exec_id;
    int32_t exit_code;          /* when signal is 0 */
    int32_t signal;             /* the signal that ended it, else 0 */
    char *reason;               /* set when sokovan ended it (kernel ended,
                                   connection lost, agent shutdown, credit
                                   exceeded) or could not run it */
} skv_proto_exec_exit;

/* ---- virtual folders (user -> manager) ------------------------------------ */

typedef struct skv_proto_vfolder_share {
    char *user;
    char *perm;                 /* "ro" or "rw" */
    uint8_t accepted;           /* 0: an invitation not yet accepted */
} skv_proto_vfolder_share;

typedef struct skv_proto_vfolder_info {
    char *id;                   /* "f-<hex>": also its directory's name */
    char *name;
    char *host;                 /* storage host */
    char *owner;
    char *project;              /* project folder: its members share it */
    char *status;               /* "ready" or "trash" */
    char *perm;                 /* the caller's: "owner", "rw", "ro",
                                   "admin", "invited" */
    char *trash_name;
    uint64_t quota_bytes;       /* 0: unlimited */
    uint64_t usage_bytes;
    int64_t created_ms;
    skv_proto_vfolder_share *shares;
    size_t n_shares;
} skv_proto_vfolder_info;

typedef struct skv_proto_vfolder {           /* "vfolder" */
    char *op;                   /* create list info rename delete purge clone
                                   share accept revoke */
    char *name;                 /* the folder: name or id */
    char *new_name;             /* rename, clone */
    char *host;                 /* create; NULL: the default host */
    char *project;              /* create: a project folder */
    uint64_t quota_bytes;       /* create: 0 unlimited */
    char *user;                 /* share, revoke */
    char *perm;                 /* share: "ro" or "rw" */
    uint8_t trash;              /* list: the trash instead */
} skv_proto_vfolder;

typedef struct skv_proto_vfolder_reply {     /* "vfolder.reply" */
    skv_proto_vfolder_info *folders;
    size_t n_folders;
    char *message;
} skv_proto_vfolder_reply;

typedef struct skv_proto_vfolder_entry {
    char *name;
    char *type;                 /* "f", "d", "l", "o" */
    uint64_t size;
    uint32_t mode;
    int64_t mtime_s;
} skv_proto_vfolder_entry;

typedef struct skv_proto_vfolder_file {      /* "vfolder.file" */
    char *op;                   /* ls stat mkdir rm mv sha256 */
    char *folder;               /* name or id */
    char *path;                 /* relative to the folder; "" its top */
    char *to;                   /* mv */
    uint8_t recursive;          /* rm */
} skv_proto_vfolder_file;

typedef struct skv_proto_vfolder_file_reply { /* "vfolder.file.reply" */
    skv_proto_vfolder_entry *entries;
    size_t n_entries;
    uint8_t *sha256;            /* op sha256: 32 bytes */
    size_t sha256_len;
} skv_proto_vfolder_file_reply;

typedef struct skv_proto_vfolder_upload {    /* "vfolder.upload" */
    char *op;                   /* begin write commit abort */
    char *folder;
    char *path;
    char *upload_id;            /* [A-Za-z0-9_-]{1,64}, chosen by the client */
    uint64_t offset;            /* write: where data goes (must be the end) */
    uint8_t *data;              /* write: at most 4 MiB */
    size_t data_len;
    uint8_t *sha256;            /* commit: expected hash (32 bytes) or none */
    size_t sha256_len;
    uint8_t resume;             /* begin: keep what an earlier try wrote */
    uint32_t mode;              /* begin: permission bits; 0: 0644 */
    uint8_t verify;             /* begin: hash what is stored, so commit can
                                   check sha256 and answers with it */
} skv_proto_vfolder_upload;

typedef struct skv_proto_vfolder_upload_reply { /* "vfolder.upload.reply" */
    uint64_t offset;            /* bytes stored so far */
    uint8_t *sha256;            /* commit of a verified upload: the file's
                                   hash */
    size_t sha256_len;
} skv_proto_vfolder_upload_reply;

typedef struct skv_proto_vfolder_download {  /* "vfolder.download" */
    char *folder;
    char *path;
    uint64_t offset;
    uint32_t max_bytes;         /* 0: 1 MiB; at most 4 MiB */
} skv_proto_vfolder_download;

typedef struct skv_proto_vfolder_download_reply { /* "vfolder.download.reply" */
    uint8_t *data;
    size_t data_len;
    uint64_t offset;            /* of data */
    uint64_t file_size;
    uint8_t eof;                /* data reaches the end of the file */
} skv_proto_vfolder_download_reply;
/* ---- service apps through the app proxy (docs/protocol.md) -------------- */

typedef struct skv_proto_app_token {         /* "app.token" (user) */
    char *session_id;
    char *service;              /* a name from the session's services */
    uint32_t ttl_s;             /* 0: 12 hours; at most 7 days */
    bool ssh_key;               /* also the session's SSH private key */
} skv_proto_app_token;

typedef struct skv_proto_app_token_reply {   /* "app.token.reply" */
    char *token;                /* for the session's owner, this service */
    char *path;                 /* "/s/SESSION/SERVICE/" on the proxy */
    int64_t expires_ms;
    char *ssh_private_key;      /* OpenSSH text, when ssh_key was asked */
    char *ssh_public_key;       /* "ssh-ed25519 AAAA... comment" */
} skv_proto_app_token_reply;

typedef struct skv_proto_app_resolve {       /* "app.resolve" (the proxy) */
    char *session_id;
    char *service;
    char *token;                /* as presented to the proxy */
} skv_proto_app_resolve;

typedef struct skv_proto_app_resolve_reply { /* "app.resolve.reply" */
    char *user;                 /* the token's user (the session's owner) */
    char *host;                 /* the agent's address the port is on */
    uint32_t port;              /* the published host port */
    char *protocol;             /* "http" or "tcp" */
    int64_t expires_ms;         /* the token's expiry */
} skv_proto_app_resolve_reply;

/* "app.activity" (the proxy, every activity_report_ms): the sessions it
 * served a request or tunnel for since its previous report. The manager
 * counts them as active now (idle_timeout); unknown ids are ignored. */
#define SKV_PROTO_APP_ACTIVITY_MAX 4096
typedef struct skv_proto_app_activity {
    char **session_ids;
    size_t n_session_ids;
} skv_proto_app_activity;

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_PROTO_MSG_H */
