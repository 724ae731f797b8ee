/* Native backend internals: the plan prepared before fork.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_NATIVE_H
#define SKV_RT_NATIVE_H

#include "rt_internal.h"
#include "skv_caps.h"
#include "skv_cgroup.h"
#include "skv_seccomp.h"

typedef struct native_plan {
    const skv_container_spec *spec;
    bool isolate;               /* false: process backend, no isolation */
    char *merged;               /* <dir>/scratch/merged */
    char *overlay_opts;         /* lowerdir=...,upperdir=...,workdir=... */
    bool *mount_is_dir;         /* per spec mount: host source is a dir */
    char *fifo_path;
    char **envp;                /* spec env + defaults, NULL-terminated */
    size_t n_envp;
    const char *path_env;       /* PATH used to find argv[0] */
    skv_caps_plan caps;
    skv_seccomp_prog *prog;
    bool prog_owned;            /* false: the runtime's cached default */
    bool userns;                /* spec->userns_count > 0 */
    /* With a user namespace, the image layer is mounted idmapped (image
     * files owned by host root appear owned by the container's root): */
    char *lower;                /* the image's root file system */
    char *idmap_lower;          /* <dir>/scratch/lower: its idmapped copy */
    char *overlay_opts_idmap;   /* overlay options on idmap_lower */
    int userns_fd;              /* a user namespace with the container's
                                   id maps (the idmap); -1 none */
    uid_t host_uid;             /* the spec's uid/gid as the host sees them */
    gid_t host_gid;             /* (granted device nodes are chowned) */
    int mpol_mode;              /* MPOL_BIND / MPOL_INTERLEAVE, 0: none */
    struct bitmask *mpol_nodes; /* libnuma's mask of the spec's mems */
} native_plan;

/* Validate the spec and prepare every string (native_plan.c). Free the
 * plan with skv__rt_native_plan_free() whatever the result. */
int skv__rt_native_plan_build(native_plan *p, skv_runtime *rt,
                              const skv_container_spec *spec, const char *dir,
                              bool isolate, skv_error *err);
void skv__rt_native_plan_free(native_plan *p);

/* The spec's memory policy as a libnuma node mask (native_mempolicy.c);
 * applied in the child with skv__rt_mempolicy_apply (async-signal-safe:
 * one set_mempolicy call). */
int skv__rt_mempolicy_plan(native_plan *p, const skv_container_spec *spec,
                           skv_error *err);
int skv__rt_mempolicy_apply(const native_plan *p);
void skv__rt_mempolicy_free(native_plan *p);

/* Seccomp program of a syscall edit list (native_plan.c). */
int skv__rt_seccomp_prog(skv_runtime *rt, const skv__rt_syscall *sc, size_t n,
                         skv_seccomp_prog **prog, bool *owned,
                         skv_error *err);

/* What an exec needs of the container, recorded at create (exec_conf.c):
 * <dir>/exec.conf (identity, capabilities, seccomp edits, cwd) and
 * <dir>/exec.env (the environment, NUL-separated). */
int skv__rt_exec_conf_write(const native_plan *p, const char *dir,
                            skv_error *err);

/* PATH search and execve of argv with envp; returns only when every
 * candidate failed (errno of the most telling failure). Async-signal-safe
 * (native_child.c). */
void skv__rt_execvpe(char *const argv[], char *const envp[],
                     const char *path_env);

/* Shared with the OCI backend (native.c). */
void skv__rt_cgroup_name(char *buf, size_t n, const skv_runtime *rt,
                         const char *id);
/* exec.fifo, and with isolate the overlay dirs and /etc/hosts, hostname. */
int skv__rt_scratch_prepare(const skv_container_spec *spec, const char *dir,
                            bool isolate, skv_error *err);
int skv__rt_write_state(const char *dir, const char *backend, pid_t pid,
                        pid_t shim, const char *cg, skv_error *err);
int skv__rt_native_stats(skv_runtime *rt, const char *dir,
                         skv_container_stats *out, skv_error *err);

/* Device allow-list (native_devices.c): the v1 devices controller, or on
 * cgroup v2 an eBPF device program; a no-op where neither is available,
 * which skv__rt_devices_supported() tells. */
int skv__rt_devices_apply(skv_cgroup *cg, const skv_container_spec *spec,
                          skv_error *err);
bool skv__rt_devices_supported(const skv_cgroup *cg);

/* User namespace (native_userns.c): after the first process reported 'U'
 * (it has unshared its user namespace), write its uid_map and gid_map. */
int skv__rt_userns_map(pid_t pid, const skv_container_spec *spec,
                       skv_error *err);
/* A user namespace with the spec's id maps, as an open nsfs descriptor
 * (for MOUNT_ATTR_IDMAP): made by a short-lived helper process. */
int skv__rt_userns_fd(const skv_container_spec *spec, int *out,
                      skv_error *err);
/* Give the container's root the scratch layer's top (upper dir: the "/"
 * of the container, and upper/etc with hosts and hostname). */
int skv__rt_userns_chown_scratch(const skv_container_spec *spec,
                                 const char *dir, skv_error *err);

/* The first process (native_child.c). */
void skv__rt_native_child(const skv__rt_launch *l, void *payload);

#endif /* SKV_RT_NATIVE_H */
