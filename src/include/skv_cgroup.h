/*
 * Internal: the cgroup manager used by the container runtimes (module
 * src/cgroup/). Not installed; names are skv__cgroup_*.
 *
 * Modes. The host's cgroup layout is detected from <sysroot>/proc/self/
 * mountinfo (read through skv__sys_read_alloc, so a test can fake it):
 *   - V2:     a cgroup2 filesystem is mounted at /sys/fs/cgroup;
 *   - V1:     cgroup (v1) hierarchies are mounted below /sys/fs/cgroup, one
 *             per controller or co-mounted ("cpu,cpuacct"), no usable v2;
 *   - HYBRID: like V1, plus a cgroup2 mount at /sys/fs/cgroup/unified. The v1
 *             hierarchies carry every limit; the container also gets a
 *             directory in the unified tree for process tracking (and
 *             cgroup.kill where the kernel has it).
 * mountinfo is used instead of statfs() magic numbers because statfs cannot
 * be faked under a test sysroot; on a real host both agree (the fstype
 * column of mountinfo is what statfs reports). The mode can also be forced
 * through skv_cgroup_config.mode (then nothing is detected for the mode,
 * but mount points still come from mountinfo, or from the default layout
 * /sys/fs/cgroup/<controller> when mountinfo lists none).
 *
 * One function table per mode (src/cgroup/v1.c, v2.c, hybrid.c) sits behind
 * this API; callers never see it.
 *
 * Paths. A container cgroup is "<parent>/<name>" inside each hierarchy, e.g.
 * /sys/fs/cgroup/memory/sokovan/<name> (v1) or /sys/fs/cgroup/sokovan/<name>
 * (v2). With nest_in_self the parent is taken relative to the calling
 * process's own cgroup in each hierarchy (from /proc/self/cgroup), which is
 * what a daemon running in a delegated cgroup needs.
 *
 * Every file access goes through skv__sys_* (the sysroot). Directories are
 * created with mkdir(2) and removed with rmdir(2) on the sysroot-prefixed
 * path; on a fake tree nothing populates the new directories, so tests
 * install skv__cgroup_set_fs_hooks() to play the kernel's part.
 *
 * Thread-safety: a skv_cgroup handle needs exclusive access for create /
 * apply / devices_set / add / kill / destroy / free; skv__cgroup_stats()
 * and the getters may run concurrently with each other. Distinct handles
 * are independent. skv__cgroup_set_fs_hooks() is process-wide (tests only).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKV_CGROUP_H
#define SKV_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sokovan/common.h"
#include "sokovan/slots.h"

typedef enum skv_cgroup_mode {
    SKV_CGROUP_MODE_AUTO = 0,   /* detect (only valid in skv_cgroup_config) */
    SKV_CGROUP_MODE_V1 = 1,
    SKV_CGROUP_MODE_V2 = 2,
    SKV_CGROUP_MODE_HYBRID = 3
} skv_cgroup_mode;

/* "auto", "v1", "v2", "hybrid"; "?" otherwise. */
const char *skv__cgroup_mode_name(skv_cgroup_mode mode);

/* Detect the host's mode from <sysroot>/proc/self/mountinfo.
 * skv__cgroup_create/open read the layout once per sysroot and cache it
 * (mounts do not change under a running agent); this call always re-reads
 * mountinfo and refreshes that cache.
 * SKV_ENOTSUP (message says why) when no cgroup filesystem is mounted at
 * /sys/fs/cgroup; SKV_ENOENT/SKV_ESYS when mountinfo cannot be read. */
int skv__cgroup_detect(skv_cgroup_mode *out, skv_error *err);

/* Where and how to make container cgroups. Zero-initialise, then set. */
typedef struct skv_cgroup_config {
    skv_cgroup_mode mode;  /* SKV_CGROUP_MODE_AUTO: skv__cgroup_detect() */
    const char *parent;    /* relative path, default "sokovan"; components
                              [A-Za-z0-9._-], no "..", no leading '/' */
    bool nest_in_self;     /* parent below the caller's own cgroup */
} skv_cgroup_config;

/* Limits to apply. Zero / NULL fields mean "no limit / inherit". */
typedef struct skv_cgroup_limits {
    const char *cpus;      /* cpuset.cpus list ("0-3,8"); NULL or "" inherits
                              the parent's cpus */
    const char *mems;      /* cpuset.mems list ("0"); NULL or "" inherits */
    skv_qty cpu;           /* CPU quota in milli-CPUs (1000 = one CPU, as the
                              "cpu" slot); 0 or SKV_QTY_UNLIMITED: no quota */
    uint64_t cpu_period_us; /* CFS period; 0 means 100000 (100 ms);
                              valid 1000..1000000 */
    int64_t memory_bytes;  /* hard memory limit; 0: none; >= 1 MiB */
    bool allow_swap;       /* false (default): swap is off when memory_bytes
                              is set (memory.swap.max=0 / memsw = limit) */
    int64_t pids_max;      /* max tasks; 0: none */
} skv_cgroup_limits;

/* Statistics. Fields whose has_* flag is false could not be read on this
 * host (e.g. memory peak before Linux 5.19 on v2). */
typedef struct skv_cgroup_stats {
    uint64_t cpu_usage_ns;    /* total CPU time of the cgroup's tasks */
    uint64_t memory_current;  /* bytes charged now */
    uint64_t memory_peak;     /* highest charge seen */
    uint64_t pids_current;    /* tasks now */
    uint64_t oom_kills;       /* OOM kills inside the cgroup */
    bool has_cpu, has_memory, has_memory_peak, has_pids, has_oom_kills;
} skv_cgroup_stats;

typedef struct skv_cgroup skv_cgroup;

/* Create the cgroup "<parent>/<name>" in every hierarchy the mode uses
 * (parents made as needed; v1 cpuset parents get cpuset.cpus/mems copied
 * from their own parent, v2 parents get the needed controllers enabled in
 * cgroup.subtree_control). name: [A-Za-z0-9._-], 1..128 chars.
 * SKV_EEXIST if the cgroup already exists in any hierarchy. On failure
 * every directory this call made is removed again. */
int skv__cgroup_create(skv_cgroup **out, const skv_cgroup_config *cfg,
                       const char *name, skv_error *err);

/* Attach to an existing container cgroup (agent restart). Nothing is
 * created; SKV_ENOENT if it is missing in the primary hierarchy (v2: the
 * cgroup itself; v1/hybrid: the memory, else pids hierarchy). */
int skv__cgroup_open(skv_cgroup **out, const skv_cgroup_config *cfg,
                     const char *name, skv_error *err);

/* Write the limits. Validated first (bad values: SKV_EINVAL/SKV_ERANGE naming
 * the field, nothing written); a limit whose controller is missing gives
 * SKV_ENOTSUP. A failure part-way leaves earlier limits written: the caller
 * destroys the cgroup (it is new and empty at this point). */
int skv__cgroup_apply(skv_cgroup *cg, const skv_cgroup_limits *limits,
                      skv_error *err);

/* Limits on the total of all container cgroups: write lim (cpus and mems
 * must be NULL: they are per container) to their common parent
 * (cfg->parent, default "sokovan"; its last component is the cgroup
 * limited), made in every hierarchy when missing and kept afterwards.
 * Validation as skv__cgroup_apply; a limit a running total already
 * exceeds is refused by the kernel (SKV_ESYS). */
int skv__cgroup_parent_limit(const skv_cgroup_config *cfg,
                             const skv_cgroup_limits *lim, skv_error *err);

/* Move a process (all its threads) into the cgroup, in every hierarchy. */
int skv__cgroup_add_pid(skv_cgroup *cg, pid_t pid, skv_error *err);

/* Read the statistics; fields that cannot be read are flagged, not errors.
 * Fails only on malformed control files (SKV_EPROTO) or a vanished cgroup. */
int skv__cgroup_stats(const skv_cgroup *cg, skv_cgroup_stats *out,
                      skv_error *err);

/* The process ids now in the cgroup (v2/hybrid: unified cgroup.procs; v1:
 * the pids, memory or freezer hierarchy). *out freed with skv__free; *out
 * is NULL when *count is 0. */
int skv__cgroup_pids(const skv_cgroup *cg, pid_t **out, size_t *count,
                     skv_error *err);

/* true when no process is left (a vanished cgroup counts as empty). */
bool skv__cgroup_is_empty(const skv_cgroup *cg);

/* Send sig once to every process in the cgroup (e.g. SIGTERM for a graceful
 * stop). Processes that exit meanwhile are ignored. */
int skv__cgroup_signal(skv_cgroup *cg, int sig, skv_error *err);

/* SIGKILL everything and wait until the cgroup is empty (every hierarchy's
 * cgroup.procs): cgroup.kill first where present (v2, or the unified dir in
 * hybrid), then rounds of "list, SIGKILL, short nap"; once a round sees new
 * pids (something forks) or after three rounds, each round runs frozen
 * (freeze, list, SIGKILL, thaw). Zombies are not listed, so the caller may
 * reap after this returns. SKV_ETIMEDOUT after timeout_ms (0 means 5000).
 * Processes exiting meanwhile (ESRCH) are normal. */
int skv__cgroup_kill(skv_cgroup *cg, unsigned timeout_ms, skv_error *err);

/* Kill everything (as skv__cgroup_kill), then rmdir the cgroup in every
 * hierarchy, retrying while it drains (EBUSY). Parents are left in place.
 * Idempotent: already-removed directories are fine. The handle stays valid
 * (free it with skv__cgroup_free); on failure the call can be repeated. */
int skv__cgroup_destroy(skv_cgroup *cg, skv_error *err);

/* One device rule of an allow-list: which device nodes (type, major,
 * minor; -1 for major or minor means any) may be used how (access: a
 * non-empty subset of "rwm": read, write, mknod). */
typedef struct skv_cgroup_device {
    char type;             /* 'c' (character) or 'b' (block) */
    int64_t major, minor;  /* 0..4095 / 0..1048575, or -1 for any */
    const char *access;    /* "r", "rw", "rwm", ... */
} skv_cgroup_device;

/* Device allow-list through an eBPF device program (cgroup v2 has no
 * devices controller): every device access in the cgroup is denied except
 * the standard container set (null, zero, full, random, urandom, tty,
 * ptmx 5:2 and pts 136:*, all "rwm") and the n rules of allow. The program
 * is attached to the cgroup's unified directory (v2, or the unified
 * directory of a hybrid host) with BPF_F_ALLOW_MULTI: programs of parent
 * cgroups still apply, and every one of them must allow an access. Calling
 * it again on the same handle attaches the new list, then detaches the
 * old one. The kernel drops the program when the cgroup is removed.
 * Validated first (bad type, access letters or numbers: SKV_EINVAL /
 * SKV_ERANGE naming the rule; nothing attached). SKV_ENOTSUP when the
 * cgroup has no unified directory, or when the kernel refuses eBPF here
 * (no CAP_BPF / CAP_SYS_ADMIN, no CONFIG_CGROUP_BPF); the message says
 * which. Call before processes join the cgroup. */
int skv__cgroup_devices_set(skv_cgroup *cg, const skv_cgroup_device *allow,
                            size_t n, skv_error *err);

/* true once skv__cgroup_devices_set() succeeded on this handle. */
bool skv__cgroup_devices_filtered(const skv_cgroup *cg);

/* Free the handle only (the cgroup itself stays). Accepts NULL. */
void skv__cgroup_free(skv_cgroup *cg);

skv_cgroup_mode skv__cgroup_mode(const skv_cgroup *cg);
/* "/<parent>/<name>" relative to the first hierarchy's root (the same in
 * all of them unless nest_in_self puts them below different own paths),
 * e.g. for an OCI cgroupsPath. Borrowed; valid until free. */
const char *skv__cgroup_rel_path(const skv_cgroup *cg);
/* Absolute directory (without sysroot) of the cgroup in one hierarchy:
 * controller "memory", "cpuset", ... (v1/hybrid), or "unified" (v2, hybrid).
 * NULL if the cgroup has no directory there. Borrowed. */
const char *skv__cgroup_dir(const skv_cgroup *cg, const char *controller);

/* ---- test seam: play the kernel on a fake cgroupfs -------------------- */
typedef struct skv__cgroup_fs_hooks {
    /* After a successful mkdir of real_path (sysroot-prefixed): create the
     * control files the kernel would show. controller: the hierarchy's
     * controllers ("memory", "cpu,cpuacct", ...) or "unified" for cgroup2. */
    void (*after_mkdir)(const char *real_path, const char *controller,
                        void *payload);
    /* Before rmdir of real_path: remove those files again. */
    void (*before_rmdir)(const char *real_path, const char *controller,
                         void *payload);
    void *payload;
} skv__cgroup_fs_hooks;
/* NULL removes the hooks. Process-wide; tests only. */
void skv__cgroup_set_fs_hooks(const skv__cgroup_fs_hooks *hooks);

#endif /* SKV_CGROUP_H */
