/*
 * sokovan/agent.h - the node agent as a library object.
 *
 * The agent discovers the node (topology, compute plugins), registers with
 * the manager with its device-level capacity, heartbeats, creates containers
 * with the runtime (runtime.h) on the devices the manager decided, reports
 * kernel exits and stats, keeps its state under state_dir so that a
 * restarted agent re-attaches to running containers, and serves logs.
 *
 * Like the manager it owns no event loop and no socket: the host connects to
 * the manager, calls skv_agent_connected(), feeds received frame payloads to
 * skv_agent_handle_frame() and writes out what the agent hands to the send
 * callback; it calls skv_agent_tick() periodically.
 *
 * A kernel's container is kept (exited, with its status) until the manager
 * confirms the exit with kernel.destroy: an exit that happened while the
 * manager or the connection was down is reported again after the next
 * registration, so no exit status is lost.
 *
 * Thread-safety: not thread-safe; one thread (the event-loop thread)
 * calls every function. The agent starts its own creator threads
 * (options.create_threads), which only call options.wake.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_AGENT_H
#define SOKOVAN_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_agent skv_agent;

/* Hand one complete frame (length prefix included) to the manager
 * connection. Return 0, or negative when it is down. Borrowed: copy it. */
typedef int (*skv_agent_send_fn)(const void *frame, size_t len,
                                 void *payload);

/* Version 2 added `accelerators`, version 3 `run_dir`, version 4
 * `log_max_bytes`, version 5 the host protection (`host_allow` ..
 * `sessions_cpu_reserve`); version 1 to 4 structures are accepted (and
 * get no host protection). */
#define SKV_AGENT_OPTIONS_VERSION 5

typedef struct skv_agent_options {
    unsigned version;           /* SKV_AGENT_OPTIONS_VERSION */
    const char *agent_id;       /* required: 1..63 of [A-Za-z0-9_.-] */
    const char *access_key;     /* required: the agent's keypair */
    const char *secret_key;
    const char *state_dir;      /* required, absolute: containers + agent state */
    const char *image_dir;      /* image store; NULL = state_dir/images */
    const char *resource_group; /* NULL = "default" */
    const char *address;        /* reported to the manager; NULL = "" */
    const char *backend;        /* runtime backend; NULL = "native" */
    const char *oci_runtime;    /* for backend "oci"; NULL = runc */
    /* Node description. topology_xml NULL: this host (hwloc). */
    const char *topology_xml;
    /* Plugin list "name[:config];..." e.g. "cpu;mem;mock:count=2,prefix=cuda".
     * NULL = "cpu;mem" plus "cuda" when NVML is present. */
    const char *plugins;
    /* Slice of the host for several agents on one machine: CPU list
     * ("0-3"), NULL = all; memory in bytes, 0 = all the topology has. */
    const char *cpus;
    uint64_t memory_bytes;
    const char *labels;         /* "k=v,k=v"; NULL = none */
    uint32_t stats_interval_ms; /* 0 = 5000 */
    uint32_t poll_interval_ms;  /* container exit polling; 0 = 20 */
    /* v2: accelerator slice, the registered device ids this agent may use
     * ("cuda0,cuda1"); NULL = all. An unknown id: SKV_EINVAL. */
    const char *accelerators;
    /* v3: where the containers' directories live (runtime state, exit
     * status, output logs and each container's writable layer); created if
     * missing. NULL = state_dir/containers. Point it at a tmpfs (/run) to
     * keep per-container files off the disk: writable layers then use
     * memory, charged to each container's memory limit. It must survive
     * an agent restart (containers are re-attached from it), not a reboot
     * (containers do not survive one either; their kernels are reported
     * lost). */
    const char *run_dir;
    /* v3: containers of kernels outside a cluster network are created by
     * this many background threads side by side, each with its own
     * runtime handle (creating one is mostly waiting for the container's
     * set-up); the manager's kernel.create is answered once its container
     * runs. 0 = online CPUs + 1, at most SKV_AGENT_CREATE_THREADS_MAX_AUTO
     * (more threads than that only add copy-on-write faults: each create
     * forks the agent); 1..64; or -1: every container on the caller's
     * thread, answered at once. */
    int create_threads;
    /* v3: called on a creator thread when a create has finished, so that
     * the host calls skv_agent_tick() soon on the agent's thread (libuv:
     * uv_async_send). It must not call into the agent. NULL: finished
     * creates wait for the next tick (skv_agent_next_tick_ms() asks for
     * one within 2 ms while any is in flight). */
    void (*wake)(void *payload);
    void *wake_payload;
    /* v4: cap of each of a kernel's stdout and stderr logs, in bytes. The
     * head of the output is kept; past the cap one line noting the
     * truncation is written and the rest discarded. 0 = 16 MiB (the
     * runtime's default); otherwise at least SKV_AGENT_LOG_MAX_BYTES_MIN. */
    uint64_t log_max_bytes;
    /* v5: host protection (docs/architecture.md, "Host protection").
     * Kernels on a cluster network reach no address of this host but for
     * replies and these host ports: "tcp:22,udp:8000-8010,dns" (see
     * skv_net_host_allow_check); NULL or "": none. */
    const char *host_allow;
    /* v5: limits on all session containers of the host together, on their
     * common parent cgroup ("sokovan"; agents sharing a host share it):
     * tasks (0: pid_max minus max(1024, pid_max / 8); -1: the parent's
     * limits are left as they are, and so are memory and CPU), */
    int64_t sessions_pids_max;
    /* memory kept for the host and its daemons: the containers together
     * get the host's memory minus this (0: max(512 MiB, 1/16 of it),
     * at most half), */
    uint64_t sessions_memory_reserve;
    /* and milli-CPUs kept for them: the containers together get a CPU
     * quota of the online CPUs minus this (0: no CPU quota; the parent's
     * CPU weight already equals the host's other top-level groups). */
    uint32_t sessions_cpu_reserve;
} skv_agent_options;

#define SKV_AGENT_LOG_MAX_BYTES_MIN 4096u

#define SKV_AGENT_CREATE_THREADS_MAX_AUTO 8

#define SKV_AGENT_OPTIONS_INIT                                               \
    {SKV_AGENT_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL,   \
     NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL, \
     0, NULL, 0, 0, 0}

/* Discover the node, open the runtime and restore containers found in
 * state_dir (they keep running). Nothing is sent yet. */
SKV_EXTERN int skv_agent_open(skv_agent **out, const skv_agent_options *opts,
                              skv_agent_send_fn send, void *payload,
                              int64_t now_ms, skv_error *err);
/* Frees the handle only: containers keep running under their supervisors.
 * Waits for creates in flight (their kernels are found again by the next
 * skv_agent_open on the same directories). */
SKV_EXTERN void skv_agent_free(skv_agent *a);

/* The connection to the manager is up: sends agent.register (with the
 * kernels it runs and the exits not yet confirmed). Creates in flight are
 * finished first, so the registration lists them. */
SKV_EXTERN int skv_agent_connected(skv_agent *a, int64_t now_ms,
                                   skv_error *err);
/* The connection went down; the agent keeps its containers and waits. */
SKV_EXTERN void skv_agent_disconnected(skv_agent *a, int64_t now_ms);

/* One frame payload (without length prefix) from the manager. Returns
 * negative when the host must drop the connection (protocol violation). */
SKV_EXTERN int skv_agent_handle_frame(skv_agent *a, const void *payload,
                                      size_t len, int64_t now_ms,
                                      skv_error *err);

/* Heartbeats, exit detection, stats. Call at least every
 * skv_agent_next_tick_ms() ms. */
SKV_EXTERN int skv_agent_tick(skv_agent *a, int64_t now_ms, skv_error *err);
SKV_EXTERN int64_t skv_agent_next_tick_ms(const skv_agent *a, int64_t now_ms);

/* Import an image archive into the agent's store (see image.h); the next
 * registration or heartbeat reports it. */
SKV_EXTERN int skv_agent_import_image(skv_agent *a, const char *name,
                                      const char *source, skv_error *err);

/* Number of kernels the agent currently holds (running or awaiting the
 * manager's confirmation of their exit). */
SKV_EXTERN size_t skv_agent_kernel_count(const skv_agent *a);

/* ---- exec: commands inside running kernels ---------------------------------
 * The manager's exec.start runs a command in a kernel this agent holds
 * (skv_runtime_exec) and streams it with exec.* messages (docs/protocol.md,
 * "Exec"). Its descriptors (pipes or terminal, and a pidfd) are the
 * agent's, watched by the host: the agent calls watch(fd, events) whenever
 * the events it needs of fd change (0: none any more; always called with 0
 * before the agent closes fd), and the host calls skv_agent_io() when fd
 * is ready. Without a watcher exec.start is refused (SKV_ENOTSUP). Execs
 * end with their command, with their kernel, when the connection goes down
 * (skv_agent_disconnected) and in skv_agent_free; nothing stays behind. */
#define SKV_AGENT_IO_READ 1u
#define SKV_AGENT_IO_WRITE 2u
typedef void (*skv_agent_watch_fn)(int fd, unsigned events, void *payload);

/* Set (or with NULL clear) the host's descriptor watcher; call before
 * skv_agent_connected. */
SKV_EXTERN void skv_agent_set_watch(skv_agent *a, skv_agent_watch_fn watch,
                                    void *payload);
/* fd, one the agent asked to watch, is ready for events (SKV_AGENT_IO_*;
 * error and hang-up conditions count as READ). An fd the agent no longer
 * knows is ignored. */
SKV_EXTERN int skv_agent_io(skv_agent *a, int fd, unsigned events,
                            int64_t now_ms, skv_error *err);
/* Number of execs running. */
SKV_EXTERN size_t skv_agent_exec_count(const skv_agent *a);

/* ---- metrics (sokovan/metrics.h) ------------------------------------------
 * Register (idempotently) the agent's Prometheus families in reg and bring
 * them up to date (see docs/api/agent.md): kernels held by state, the
 * slice's pooled capacity and use, and per running kernel (labels session,
 * kernel) CPU seconds, memory, peak memory and tasks from its cgroup. The
 * per-kernel families are rebuilt on each call: a kernel that ended or was
 * destroyed disappears from them. now_ms is accepted for symmetry with the
 * manager (the figures are the cgroups' own). reg is not kept. Call from
 * the agent's thread. SKV_EINVAL for NULL arguments, SKV_EEXIST when reg
 * holds a different family of one of these names. */
SKV_EXTERN int skv_agent_metrics_collect(skv_agent *a, skv_metrics *reg,
                                         int64_t now_ms, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_AGENT_H */
