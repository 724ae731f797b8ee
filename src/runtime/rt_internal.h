/* Internal structures of the runtime module (container spec, handle, shim).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_INTERNAL_H
#define SKV_RT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "skv_internal.h"
#include "skv_seccomp.h"
#include "sokovan/image.h"
#include "sokovan/runtime.h"

#define SKV__RT_ID_MAX 64
#define SKV__RT_DEFAULT_LOG_MAX (16u << 20)
#define SKV__RT_DEFAULT_UID 65534u

typedef struct skv__rt_device {
    char *path;         /* container path, under /dev/ */
    char type;          /* 'c' or 'b' */
    uint32_t major, minor;
    char access[4];     /* subset of "rwm" */
} skv__rt_device;

typedef struct skv__rt_mount {
    char *host;
    char *target;       /* absolute container path */
    bool readonly;
} skv__rt_mount;

typedef struct skv__rt_syscall {
    char *name;
    bool allow;
} skv__rt_syscall;

struct skv_container_spec {
    char id[SKV__RT_ID_MAX + 1];
    char *image, *rootfs;
    char **argv;
    size_t argc;
    char **env;         /* "NAME=value", n_env entries */
    size_t n_env;
    char *cwd;
    uint32_t uid, gid;
    char hostname[65];
    char *cpus, *mems;
    skv_mempolicy mempolicy;
    skv_container_limits limits;
    skv__rt_device *devices;
    size_t n_devices;
    skv__rt_mount *mounts;
    size_t n_mounts;
    skv__rt_syscall *syscalls;
    size_t n_syscalls;
    char **caps;
    size_t n_caps;
    skv_network_mode network;
    char **hosts;       /* extra /etc/hosts lines "ip\tname", n_hosts */
    size_t n_hosts;
    uint32_t userns_base;   /* host id of container id 0 */
    uint32_t userns_count;  /* ids mapped; 0: no user namespace */
};

struct skv_runtime {
    skv_runtime_options opts;   /* strings below are owned copies */
    char *state_dir;
    char *image_dir;
    char *oci_runtime;
    const skv_runtime_backend *backend;
    skv_image_store *images;    /* NULL without image_dir */
    /* The default seccomp profile, compiled once (3 ms of libseccomp work)
     * and shared by every spec without syscall edits. */
    skv_seccomp_prog *default_prog;
};

/* Directory and backend of an existing container (runtime.c), for the
 * operations that are no backend call (exec.c). */
int skv__rt_lookup(skv_runtime *rt, const char *id, char *dir, size_t n,
                   const skv_runtime_backend **b, skv_error *err);

/* ---- validation helpers (spec.c) ---------------------------------------- */
int skv__rt_check_id(const char *id, skv_error *err);
/* Absolute, no "..", no newline; what names the argument in messages. */
int skv__rt_check_abs_path(const char *path, const char *what, skv_error *err);
/* The value of NAME in the spec's env, or NULL. */
const char *skv__rt_spec_getenv(const skv_container_spec *spec,
                                const char *name);

/* ---- files (fsutil.c) ------------------------------------------------- */
int skv__rt_mkdir_p(const char *path, mode_t mode, skv_error *err);
int skv__rt_rm_rf(const char *path, skv_error *err);
/* Replace path atomically (write path.tmp.<pid>, rename). */
/* Two close-on-exec pipes (a control channel each way); on failure none
 * stays open. what names them in the error. */
int skv__rt_pipe_pair(int a[2], int b[2], const char *what, skv_error *err);
int skv__rt_write_file(const char *path, const char *data, size_t len,
                       skv_error *err);
int skv__rt_read_file(const char *path, char **out, skv_error *err);
/* The same, with the length (the content may hold NUL bytes). */
int skv__rt_read_file_len(const char *path, char **out, size_t *len,
                          skv_error *err);
/* fork+execve argv (absolute argv[0]) with stdin /dev/null and stdout+stderr
 * to out_path (NULL: /dev/null); *status_out is the waitpid status. */
int skv__rt_run(const char *const *argv, const char *out_path,
                int *status_out, skv_error *err);

/* ---- key=value state files (state.c) ---------------------------------- */
/* Value of `key` in a "key=value\n" text, copied into buf; false if absent. */
bool skv__rt_kv_get(const char *text, const char *key, char *buf, size_t n);
bool skv__rt_kv_get_i64(const char *text, const char *key, int64_t *out);
/* Start time (clock ticks since boot) of a pid from /proc/<pid>/stat, or 0
 * when the process does not exist. */
uint64_t skv__rt_proc_start_time(pid_t pid);
/* Whether pid is alive and still the process that had start time st. */
bool skv__rt_proc_same(pid_t pid, uint64_t st);

/* ---- shim (shim.c) -------------------------------------------------------- */
/* Everything the detached supervisor and the container's first process
 * need, prepared before fork so the forked side only makes system calls. */
typedef struct skv__rt_launch skv__rt_launch;
typedef void (*skv__rt_child_fn)(const skv__rt_launch *l, void *payload);

struct skv__rt_launch {
    const char *dir;            /* container state directory */
    const char *exit_path;      /* <dir>/exit */
    const char *exit_tmp;       /* <dir>/exit.tmp */
    const char *stdout_path, *stderr_path;
    uint64_t log_max;
    unsigned long clone_flags;  /* CLONE_NEW* for the first process */
    const char *pid_file;       /* oci: the first process is `runc create`;
                                   when it succeeds the shim adopts (as
                                   subreaper) and watches the pid written
                                   here, and reports 'R' itself */
    skv__rt_child_fn child;     /* runs in the first process; never returns */
    void *payload;
    int keep_fd;                /* one more descriptor the first process
                                   needs (as fd 5, close-on-exec); -1 none.
                                   Set it explicitly: 0 is a valid fd */
    /* filled by skv__rt_shim_spawn for the child: */
    int report_fd;              /* write skv__rt_msg to the caller */
    int go_fd;                  /* read: caller's go-ahead */
};

/* Messages on the report pipe: fixed size, below PIPE_BUF, so atomic. */
typedef struct skv__rt_msg {
    char tag;                   /* 'P' pid of the first process, 'R' ready,
                                   'E' error */
    int64_t value;              /* pid, or errno for 'E' */
    int64_t value2;             /* 'P': the shim's pid */
    char text[200];             /* what failed */
} skv__rt_msg;

/* Spawn shim + first process. On success *pid_out and *shim_out are the host
 * pids, *report_fd the pipe to read further messages from ('R'/'E'), and
 * *go_fd the pipe to write one byte to once the pid was placed (cgroup). */
int skv__rt_shim_spawn(const skv__rt_launch *l, pid_t *pid_out,
                       pid_t *shim_out, int *report_fd, int *go_fd,
                       skv_error *err);
/* Read the next message; SKV_EIO at EOF. */
int skv__rt_msg_read(int fd, skv__rt_msg *m, skv_error *err);
/* In a forked child: send a message (async-signal-safe). */
void skv__rt_msg_send(int fd, char tag, int64_t value, const char *what,
                      const char *detail);

/* ---- shared container bookkeeping (container.c) ---------------------- */
/* Exit file parsing into a status; false when there is none yet. */
bool skv__rt_read_exit(const char *dir, skv_container_status *st);
/* Wait for <dir>/exit up to timeout_ms (<0 forever); SKV_ETIMEDOUT. Detects a
 * vanished shim (shim_pid/shim_start from the state file) as LOST. */
int skv__rt_wait_exit(const char *dir, int timeout_ms,
                      skv_container_status *out, skv_error *err);
/* Status from the state and exit files; oom from the cgroup when known. */
int skv__rt_status(const char *dir, skv_container_status *out,
                   skv_error *err);
/* The same; oom false skips reading the cgroup (callers that only need the
 * state, such as destroy). */
int skv__rt_status_ex(const char *dir, skv_container_status *out, bool oom,
                      skv_error *err);
/* Write one byte into <dir>/exec.fifo to let the command start. */
int skv__rt_release(const char *dir, skv_error *err);
int skv__rt_signal_pid(const char *dir, int sig, skv_error *err);

#endif /* SKV_RT_INTERNAL_H */
