/* Private to the runtime's exec (exec.c, exec_conf.c, exec_child.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_EXEC_INT_H
#define SKV_RT_EXEC_INT_H

#include <limits.h>
#include <sys/ioctl.h>

#include "native.h"

/* A container's exec settings as recorded by create (exec_conf.c). */
typedef struct skv__exec_conf {
    bool isolate;               /* native (true) or process backend */
    bool userns;                /* the container has its own user namespace */
    uint32_t uid, gid;          /* as the container sees them */
    uint32_t host_uid, host_gid;
    uint64_t caps;              /* kept capability mask */
    char cwd[PATH_MAX];
    skv__rt_syscall *syscalls;  /* seccomp edits */
    size_t n_syscalls;
    char *env_buf;              /* exec.env's bytes; envp points into it */
    char **envp;                /* NULL-terminated, room for extra entries */
    size_t n_envp;
} skv__exec_conf;

/* extra_env: how many entries the caller may still append to envp. */
int skv__exec_conf_read(skv__exec_conf *c, const char *dir, size_t extra_env,
                        skv_error *err);
void skv__exec_conf_free(skv__exec_conf *c);

/* Everything the forked side needs, prepared before the fork so that it
 * only makes system calls (the caller may be multi-threaded). */
typedef struct skv__exec_launch {
    int pidfd;                  /* the container's first process; -1: enter
                                   no namespace (process backend) */
    int ns_flags;               /* CLONE_NEW* entered through pidfd first */
    bool userns;                /* then its user namespace */
    bool isolate;               /* switch identity, caps, seccomp */
    int go_fd;                  /* one byte once the cgroup is joined */
    int report_fd;              /* SOCK_SEQPACKET to the caller */
    int stdio[3];               /* child ends of the pipes; -1 with a tty */
    bool tty;
    struct winsize ws;
    uid_t tty_uid;              /* the terminal's owner (host ids) */
    gid_t tty_gid;
    const char *cwd;
    char *const *argv;
    char *const *envp;
    const char *path_env;
    skv_caps_plan caps;
    const skv_seccomp_prog *prog;
} skv__exec_launch;

/* The forked side (exec_child.c): enters the namespaces, forks the command
 * as the caller's child (CLONE_PARENT), reports 'P' (its pid, with the
 * terminal's master attached) and exits; the command reports 'E' if it
 * cannot be executed. Never returns. */
_Noreturn void skv__exec_child(const skv__exec_launch *l);

/* One report; *fd_out receives an attached descriptor (close-on-exec) or
 * -1. Returns 1 for a message, 0 at EOF. */
int skv__exec_report_recv(int fd, skv__rt_msg *m, int *fd_out,
                          skv_error *err);

/* One report with fd attached when >= 0 (exec_child.c). Async-signal-safe. */
void skv__exec_report_send(int sock, char tag, int64_t value,
                           const char *what, int fd);

struct skv_exec {
    pid_t pid;
    int pidfd;                  /* of the command, or of its keeper */
    int in, out, errfd;         /* tty: in == out == the master */
    bool tty;
    bool reaped;
    int code, sig;
    /* oci: pid/pidfd are the keeper's (oci_exec_keeper.c), which ends as
     * the command ends; signals go to the command's own pidfd. */
    bool keeper;
    pid_t cmd_pid;
    int cmd_pidfd;
};

/* The oci backend's exec (oci_exec.c): fills e (pid, pidfd, descriptors,
 * cmd_pid, cmd_pidfd) or leaves what it started to skv_exec_free. */
/* Hands the pipes' caller ends (or nothing, with a terminal) and a pidfd
 * of e->pid to the handle (exec_handle.c). */
int skv__exec_take(skv_exec *e, int pipes[3][2], const char *what,
                   skv_error *err);

int skv__oci_exec(skv_runtime *rt, const char *dir, const char *id,
                  const skv_exec_options *o, skv_exec *e, skv_error *err);

#endif
