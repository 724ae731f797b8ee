/*
 * sokovan/runtime.h - container lifecycle: a container spec, a runtime handle
 * bound to a state directory, and pluggable backends (native isolation, an
 * external OCI runtime such as runc, and an unisolated development backend).
 *
 * Every container lives in <state_dir>/<id>/ with an atomically replaced
 * "state" file. A small detached supervisor (the shim) is the parent of the
 * container's first process, copies its output into size-capped logs and
 * records the exit status in <state_dir>/<id>/exit, so containers survive the
 * exit of the process that created them: a new handle on the same state
 * directory re-attaches with skv_runtime_restore().
 *
 * Thread-safety: a skv_container_spec may be read concurrently but needs
 * exclusive access while modified. A skv_runtime is not thread-safe: use one
 * per thread or serialise the calls. Two handles (even in two processes) on
 * the same state directory may operate on different containers.
 * skv_runtime_create() forks without exec; the forked side only makes system
 * calls on data prepared before the fork, so multi-threaded callers are fine.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_RUNTIME_H
#define SOKOVAN_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- container spec ---------------------------------------------------- */

typedef struct skv_container_spec skv_container_spec;

typedef enum skv_network_mode {
    SKV_NETWORK_NONE = 0, /* own network namespace with loopback only */
    SKV_NETWORK_HOST = 1  /* share the host's network namespace */
} skv_network_mode;

#define SKV_CONTAINER_LIMITS_VERSION 1
/* Resource limits; 0 means "no limit" for every field. */
typedef struct skv_container_limits {
    unsigned version;           /* SKV_CONTAINER_LIMITS_VERSION */
    uint64_t cpu_quota_us;      /* CPU time per period (cfs quota) */
    uint64_t cpu_period_us;     /* period; 0 = 100000 when a quota is set */
    uint64_t memory_bytes;      /* memory limit, swap disabled */
    uint64_t pids_max;          /* most tasks at once */
    uint64_t log_max_bytes;     /* cap of each of stdout.log / stderr.log
                                   (0 = 16 MiB default) */
} skv_container_limits;
#define SKV_CONTAINER_LIMITS_INIT {SKV_CONTAINER_LIMITS_VERSION, 0, 0, 0, 0, 0}

#define SKV_CLUSTER_INFO_VERSION 1
/* One role of a cluster session and how many kernels run it. Hostnames are
 * the role name followed by a 1-based index: main1, sub1, sub2, ... */
typedef struct skv_cluster_role {
    const char *name;   /* [a-z][a-z0-9]* , e.g. "main", "sub" */
    unsigned count;     /* >= 1 */
} skv_cluster_role;

/* Session and cluster identity, exported to the container as SOKOVAN_* and
 * BACKENDAI_* variables (SESSION_ID, KERNEL_ID, CLUSTER_MODE, CLUSTER_SIZE,
 * CLUSTER_ROLE, CLUSTER_IDX, CLUSTER_LOCAL_RANK, CLUSTER_HOST,
 * CLUSTER_HOSTS, CLUSTER_REPLICAS). */
typedef struct skv_cluster_info {
    unsigned version;              /* SKV_CLUSTER_INFO_VERSION */
    const char *session_id;        /* required */
    const char *kernel_id;         /* required */
    const char *mode;              /* "single-node" or "multi-node" */
    const skv_cluster_role *roles; /* at least one role */
    size_t n_roles;
    const char *role;              /* this kernel's role (one of roles) */
    unsigned idx;                  /* 1-based index within its role */
} skv_cluster_info;
#define SKV_CLUSTER_INFO_INIT {SKV_CLUSTER_INFO_VERSION, NULL, NULL, NULL, NULL, 0, NULL, 0}

/* A new spec for container `id` ([A-Za-z0-9][A-Za-z0-9_.-]{0,63}).
 * Defaults: argv unset (required), cwd "/", uid/gid 65534 (nobody), hostname
 * = id (truncated to 63), network none, no limits. */
SKV_EXTERN int skv_container_spec_new(skv_container_spec **out, const char *id,
                                      skv_error *err);
SKV_EXTERN void skv_container_spec_free(skv_container_spec *spec);
/* Borrowed; valid while the spec lives. */
SKV_EXTERN const char *skv_container_spec_id(const skv_container_spec *spec);

/* Root filesystem: an image name from the runtime's image store, or an
 * absolute directory. Setting one clears the other. The directory is used
 * read-only; changes go to an overlay upper layer removed on destroy. */
SKV_EXTERN int skv_container_spec_set_image(skv_container_spec *spec,
                                            const char *image, skv_error *err);
SKV_EXTERN int skv_container_spec_set_rootfs(skv_container_spec *spec,
                                             const char *dir, skv_error *err);
/* argv[0] is searched in the container's PATH when it has no '/'. */
SKV_EXTERN int skv_container_spec_set_argv(skv_container_spec *spec,
                                           size_t argc,
                                           const char *const *argv,
                                           skv_error *err);
/* Adds or replaces NAME=value. NAME: [A-Za-z_][A-Za-z0-9_]*. */
SKV_EXTERN int skv_container_spec_set_env(skv_container_spec *spec,
                                          const char *name, const char *value,
                                          skv_error *err);
SKV_EXTERN int skv_container_spec_set_cwd(skv_container_spec *spec,
                                          const char *cwd, skv_error *err);
SKV_EXTERN int skv_container_spec_set_user(skv_container_spec *spec,
                                           uint32_t uid, uint32_t gid,
                                           skv_error *err);
/* Run the container in its own user namespace (native backend only; the
 * oci and process backends refuse such a spec with SKV_ENOTSUP at create).
 * Container uids and gids 0..count-1 map to host ids host_base..
 * host_base+count-1, so root in the container is host_base on the host and
 * its capabilities only count inside the container's namespaces. count 0
 * turns it off (the default). host_base 0 (container root = host root) and
 * ranges past 2^32-1 are SKV_EINVAL; the spec's uid/gid must be below
 * count, which create checks. Image files owned by host ids outside the
 * range (normally all of them: images are unpacked as host root) show as
 * nobody (65534) inside and are read-only to every container user; the
 * root directory, /etc/hosts, /etc/hostname and new files belong to the
 * container. No idmapped mounts are used. */
SKV_EXTERN int skv_container_spec_set_userns(skv_container_spec *spec,
                                             uint32_t host_base,
                                             uint32_t count, skv_error *err);
SKV_EXTERN int skv_container_spec_set_hostname(skv_container_spec *spec,
                                               const char *hostname,
                                               skv_error *err);
/* The memory policy the command starts with, over the memory nodes of
 * skv_container_spec_set_cpuset (required for BIND and INTERLEAVE), set
 * through libnuma just before exec (native and process backends; the OCI
 * backend binds through the bundle's cpuset.mems only and refuses
 * INTERLEAVE with SKV_ENOTSUP). Processes started by exec into the
 * container keep the kernel's default policy. */
typedef enum skv_mempolicy {
    SKV_MEMPOLICY_DEFAULT = 0,    /* the kernel's: local allocation */
    SKV_MEMPOLICY_BIND = 1,       /* MPOL_BIND: only those nodes */
    SKV_MEMPOLICY_INTERLEAVE = 2  /* MPOL_INTERLEAVE: pages round-robin */
} skv_mempolicy;
/* SKV_EINVAL for another value. */
SKV_EXTERN int skv_container_spec_set_mempolicy(skv_container_spec *spec,
                                                skv_mempolicy policy,
                                                skv_error *err);
/* cpuset lists such as "0-3,8"; NULL leaves that part unrestricted. */
SKV_EXTERN int skv_container_spec_set_cpuset(skv_container_spec *spec,
                                             const char *cpus,
                                             const char *mems, skv_error *err);
SKV_EXTERN int skv_container_spec_set_limits(skv_container_spec *spec,
                                             const skv_container_limits *lim,
                                             skv_error *err);
/* Grant a device node: container path (under /dev/), type 'c' or 'b',
 * major/minor, access a subset of "rwm". */
SKV_EXTERN int skv_container_spec_add_device(skv_container_spec *spec,
                                             const char *path, char type,
                                             uint32_t major, uint32_t minor,
                                             const char *access,
                                             skv_error *err);
/* Bind-mount an existing host path (absolute) at an absolute container
 * path. Data written there lives on the host and survives destroy. */
SKV_EXTERN int skv_container_spec_add_mount(skv_container_spec *spec,
                                            const char *host_path,
                                            const char *container_path,
                                            bool readonly, skv_error *err);
/* Extra seccomp rules on top of the default profile: allow=false denies
 * the syscall (EPERM), allow=true lifts a default denial. */
SKV_EXTERN int skv_container_spec_add_syscall(skv_container_spec *spec,
                                              const char *syscall, bool allow,
                                              skv_error *err);
/* Add a capability ("CAP_SYS_PTRACE" or "sys_ptrace") to the default set. */
SKV_EXTERN int skv_container_spec_add_cap(skv_container_spec *spec,
                                          const char *cap, skv_error *err);
SKV_EXTERN int skv_container_spec_set_network(skv_container_spec *spec,
                                              skv_network_mode mode,
                                              skv_error *err);
/* An extra /etc/hosts entry (cluster hostnames such as "sub1" on a session
 * network). name: 1..63 of [A-Za-z0-9.-], not starting with '.' or '-';
 * ip: an IPv4 or IPv6 address. Entries follow the defaults in the order
 * added. To join a session network (sokovan/net.h), keep network mode
 * NONE, create the container, attach the pid of skv_runtime_status() with
 * skv_net_attach(), then start it. */
SKV_EXTERN int skv_container_spec_add_host(skv_container_spec *spec,
                                           const char *name, const char *ip,
                                           skv_error *err);
/* Session/cluster variables (see skv_cluster_info). The hostname becomes
 * role+idx ("sub2") unless set explicitly afterwards. */
SKV_EXTERN int skv_container_spec_set_cluster(skv_container_spec *spec,
                                              const skv_cluster_info *ci,
                                              skv_error *err);

/* ---- status and stats -------------------------------------------------- */

typedef enum skv_container_state {
    SKV_CONTAINER_CREATED = 0, /* set up, command not started yet */
    SKV_CONTAINER_RUNNING = 1,
    SKV_CONTAINER_EXITED = 2,  /* exit status known */
    SKV_CONTAINER_LOST = 3     /* supervisor vanished without a status */
} skv_container_state;

#define SKV_CONTAINER_STATUS_VERSION 1
typedef struct skv_container_status {
    unsigned version;          /* SKV_CONTAINER_STATUS_VERSION */
    skv_container_state state;
    int64_t pid;               /* host pid of the container's first process */
    int exit_code;             /* EXITED and signal == 0: the exit code */
    int signal;                /* EXITED by a signal: its number, else 0 */
    bool oom_killed;           /* the memory limit's OOM killer fired */
} skv_container_status;
#define SKV_CONTAINER_STATUS_INIT {SKV_CONTAINER_STATUS_VERSION, SKV_CONTAINER_CREATED, 0, 0, 0, false}

#define SKV_CONTAINER_STATS_VERSION 1
typedef struct skv_container_stats {
    unsigned version;          /* SKV_CONTAINER_STATS_VERSION */
    uint64_t cpu_time_ns;      /* user + system CPU time of the cgroup */
    uint64_t memory_current;   /* bytes now */
    uint64_t memory_peak;      /* highest bytes seen */
    uint64_t pids_current;     /* tasks now */
} skv_container_stats;
#define SKV_CONTAINER_STATS_INIT {SKV_CONTAINER_STATS_VERSION, 0, 0, 0, 0}

/* ---- backends ------------------------------------------------------------ */

typedef struct skv_runtime skv_runtime;

#define SKV_RUNTIME_BACKEND_ABI 1
/* A backend: every call receives the handle and the container's state
 * directory (<state_dir>/<id>, created by the runtime before create()). */
typedef struct skv_runtime_backend {
    unsigned abi_version; /* SKV_RUNTIME_BACKEND_ABI */
    const char *name;
    int (*create)(skv_runtime *rt, const skv_container_spec *spec,
                  const char *dir, skv_error *err);
    int (*start)(skv_runtime *rt, const char *dir, skv_error *err);
    int (*signal)(skv_runtime *rt, const char *dir, int sig, skv_error *err);
    /* timeout_ms 0: poll, <0: forever. SKV_ETIMEDOUT when still running. */
    int (*wait)(skv_runtime *rt, const char *dir, int timeout_ms,
                skv_container_status *out, skv_error *err);
    int (*stats)(skv_runtime *rt, const char *dir, skv_container_stats *out,
                 skv_error *err);
    /* Stop (SIGTERM, grace, SIGKILL to everything) and remove all but the
     * state directory itself, which the runtime removes afterwards. */
    int (*destroy)(skv_runtime *rt, const char *dir, uint32_t grace_ms,
                   skv_error *err);
    /* Re-attach to a container found in the state directory. */
    int (*restore)(skv_runtime *rt, const char *dir, skv_error *err);
} skv_runtime_backend;

/* The built-in backends ("native", "oci", "process"). */
SKV_EXTERN const skv_runtime_backend *skv_runtime_backend_native(void);
SKV_EXTERN const skv_runtime_backend *skv_runtime_backend_oci(void);
SKV_EXTERN const skv_runtime_backend *skv_runtime_backend_process(void);

/* ---- runtime handle ------------------------------------------------------ */

#define SKV_RUNTIME_OPTIONS_VERSION 1
typedef struct skv_runtime_options {
    unsigned version;        /* SKV_RUNTIME_OPTIONS_VERSION */
    const char *state_dir;   /* required, absolute; created if missing */
    const char *image_dir;   /* image store for skv_container_spec_set_image */
    const char *backend;     /* "native" (default), "oci", "process" */
    const skv_runtime_backend *custom_backend; /* overrides `backend` */
    const char *oci_runtime; /* OCI runtime binary, default /usr/sbin/runc */
    bool allow_process_backend; /* the process backend refuses without it */
    uint32_t stop_grace_ms;  /* SIGTERM -> SIGKILL grace, 0 = 10000 */
} skv_runtime_options;
#define SKV_RUNTIME_OPTIONS_INIT {SKV_RUNTIME_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, false, 0}

SKV_EXTERN int skv_runtime_open(skv_runtime **out,
                                const skv_runtime_options *opts,
                                skv_error *err);
/* Frees the handle only: containers keep running under their shims. */
SKV_EXTERN void skv_runtime_free(skv_runtime *rt);
/* Borrowed accessors for backends. */
SKV_EXTERN const char *skv_runtime_state_dir(const skv_runtime *rt);
SKV_EXTERN const skv_runtime_options *skv_runtime_get_options(const skv_runtime *rt);

/* Validate the spec, then set the container up without running its command.
 * On failure nothing is left behind. SKV_EEXIST when the id is in use. */
SKV_EXTERN int skv_runtime_create(skv_runtime *rt,
                                  const skv_container_spec *spec,
                                  skv_error *err);
SKV_EXTERN int skv_runtime_start(skv_runtime *rt, const char *id,
                                 skv_error *err);
SKV_EXTERN int skv_runtime_signal(skv_runtime *rt, const char *id, int sig,
                                  skv_error *err);
SKV_EXTERN int skv_runtime_status(skv_runtime *rt, const char *id,
                                  skv_container_status *out, skv_error *err);
/* timeout_ms 0: poll, < 0: forever; SKV_ETIMEDOUT when still running. */
SKV_EXTERN int skv_runtime_wait(skv_runtime *rt, const char *id,
                                int timeout_ms, skv_container_status *out,
                                skv_error *err);
SKV_EXTERN int skv_runtime_stats(skv_runtime *rt, const char *id,
                                 skv_container_stats *out, skv_error *err);
/* Stop if needed (SIGTERM, grace_ms, SIGKILL to the whole container) and
 * remove everything: cgroup, scratch layer, state. grace_ms UINT32_MAX means
 * the handle's stop_grace_ms. Bind-mounted host data is kept. */
SKV_EXTERN int skv_runtime_destroy(skv_runtime *rt, const char *id,
                                   uint32_t grace_ms, skv_error *err);
/* Ids of all containers in the state directory, sorted. Free with
 * skv_runtime_list_free(). */
SKV_EXTERN int skv_runtime_list(skv_runtime *rt, char ***ids, size_t *n,
                                skv_error *err);
SKV_EXTERN void skv_runtime_list_free(char **ids, size_t n);
/* Re-attach to every container of the state directory (after an agent
 * restart); *n_out (may be NULL) receives how many were found. Containers
 * that ended meanwhile report their recorded exit status. */
SKV_EXTERN int skv_runtime_restore(skv_runtime *rt, size_t *n_out,
                                   skv_error *err);
/* Path of a container's log ("stdout" or "stderr"); free with skv_free. */
SKV_EXTERN int skv_runtime_log_path(skv_runtime *rt, const char *id,
                                    const char *stream, char **out,
                                    skv_error *err);
/* What the container's logs lost, once it has ended: *note receives NULL
 * when they are complete (or the container has not ended), else one
 * sentence for people, parts joined by "; ": "no space left for logs on
 * <log path>" (a write failed with ENOSPC or EDQUOT: that log stops there,
 * the output is still drained and the exit status still recorded),
 * "cannot write <log path>: <error>", "<stream> truncated at N bytes (log
 * cap)" (see skv_container_limits.log_max_bytes). Free with skv_free.
 * SKV_ENOENT for an unknown container. */
SKV_EXTERN int skv_runtime_log_note(skv_runtime *rt, const char *id,
                                    char **note, skv_error *err);

/* ---- exec: a command inside a running container ---------------------------
 * skv_runtime_exec() runs a command in a running container of the native
 * backend the way its first process runs: in the same cgroup (every
 * hierarchy: v1, v2, hybrid), namespaces (mount, pid, network, ipc, uts,
 * cgroup, and user when the container has one), with the same capability
 * set (bounded by the first process's current bounding set), user and
 * group, seccomp filter (compiled from the same profile) and environment,
 * in the container's working directory. The process is the caller's child:
 * its exit status is read with skv_exec_wait() and skv_exec_free() leaves
 * nothing behind (the process and its process group are killed if still
 * there, it is reaped, every descriptor is closed, the terminal released).
 * The process backend runs the command unisolated (cwd and environment
 * only); the oci backend and custom backends answer SKV_ENOTSUP. An exec
 * into a container that is not running is SKV_ESTATE. The command starts
 * a new session (setsid): signals sent with skv_exec_signal() reach its
 * process only; a terminal's Ctrl-C reaches its foreground group. */

typedef struct skv_exec skv_exec;

#define SKV_EXEC_OPTIONS_VERSION 1
typedef struct skv_exec_options {
    unsigned version;             /* SKV_EXEC_OPTIONS_VERSION */
    const char *const *argv;      /* required, argc >= 1; argv[0] is searched
                                     in the container's PATH without a '/' */
    size_t argc;
    const char *const *env;       /* "NAME=value" added to / replacing the
                                     container's environment */
    size_t n_env;
    const char *cwd;              /* absolute; NULL: the container's */
    bool tty;                     /* a pseudo-terminal from the container's
                                     own /dev/pts instead of three pipes */
    uint16_t rows, cols;          /* initial window size (tty); 0: 24x80 */
} skv_exec_options;
#define SKV_EXEC_OPTIONS_INIT {SKV_EXEC_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, false, 0, 0}

/* Which descriptor skv_exec_fd() returns. With a terminal, STDIN and
 * STDOUT are both the terminal's master side and STDERR is -1. */
typedef enum skv_exec_stream {
    SKV_EXEC_STDIN = 0,   /* write end, non-blocking */
    SKV_EXEC_STDOUT = 1,  /* read end, non-blocking */
    SKV_EXEC_STDERR = 2,  /* read end, non-blocking */
    SKV_EXEC_PIDFD = 3    /* readable once the process has exited */
} skv_exec_stream;

/* Start; on failure nothing is left behind. SKV_ENOENT: unknown container
 * or a command not found in it (the message says which). */
SKV_EXTERN int skv_runtime_exec(skv_runtime *rt, const char *id,
                                const skv_exec_options *opts, skv_exec **out,
                                skv_error *err);
/* Host pid of the command. */
SKV_EXTERN int64_t skv_exec_pid(const skv_exec *e);
/* Borrowed descriptor (see skv_exec_stream); -1 when there is none or it
 * was closed. Valid until skv_exec_close_stdin() (STDIN) or skv_exec_free. */
SKV_EXTERN int skv_exec_fd(const skv_exec *e, skv_exec_stream which);
/* End of input: closes the stdin pipe, or with a terminal writes the
 * terminal's end-of-file character (^D) at the start of a line. */
SKV_EXTERN int skv_exec_close_stdin(skv_exec *e, skv_error *err);
/* Change the terminal's window size (the command gets SIGWINCH).
 * SKV_ESTATE without a terminal; rows and cols 1..65535. */
SKV_EXTERN int skv_exec_resize(skv_exec *e, unsigned rows, unsigned cols,
                               skv_error *err);
/* Send a signal (1..64) to the command; SKV_ESTATE once it was reaped. */
SKV_EXTERN int skv_exec_signal(skv_exec *e, int sig, skv_error *err);
/* timeout_ms 0: poll, < 0: forever; SKV_ETIMEDOUT while it runs. Exit code
 * or terminating signal (the other is 0); either pointer may be NULL. Once
 * reaped the status stays available. */
SKV_EXTERN int skv_exec_wait(skv_exec *e, int timeout_ms, int *exit_code,
                             int *signal, skv_error *err);
/* Kill (SIGKILL to its process group) if it still runs, reap, close every
 * descriptor. Accepts NULL. */
SKV_EXTERN void skv_exec_free(skv_exec *e);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_RUNTIME_H */
