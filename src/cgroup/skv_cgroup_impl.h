/* Private to src/cgroup/: the handle, the detected layout, the per-mode
 * function tables and the file helpers they share.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_CGROUP_IMPL_H
#define SKV_CGROUP_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "skv_cgroup.h"

#define SKV__CG_MAX_HIER 12      /* hierarchies one container uses */
#define SKV__CG_CTRL_MAX 64      /* "cpu,cpuacct" and the like */
#define SKV__CG_ROOT "/sys/fs/cgroup"
#define SKV__CG_UNIFIED "/sys/fs/cgroup/unified"

/* One mounted hierarchy. ctrls: the v1 controllers we use that it carries
 * (comma separated), or "unified" for cgroup2. */
typedef struct skv__cg_mount {
    char ctrls[SKV__CG_CTRL_MAX];
    char path[256];             /* mount point, absolute, without sysroot */
    bool v2;
} skv__cg_mount;

typedef struct skv__cg_layout {
    skv_cgroup_mode mode;       /* detected (or forced) */
    size_t n;
    skv__cg_mount m[SKV__CG_MAX_HIER];
} skv__cg_layout;

/* The container's directory in one hierarchy. */
typedef struct skv__cg_dir {
    skv__cg_mount mount;
    char *dir;                  /* absolute, without sysroot */
} skv__cg_dir;

typedef struct skv__cg_values skv__cg_values;
typedef struct skv__cg_ops skv__cg_ops;

struct skv_cgroup {
    skv_cgroup_mode mode;
    const skv__cg_ops *ops;
    char *rel;                  /* of the primary hierarchy */
    size_t n;
    skv__cg_dir d[SKV__CG_MAX_HIER];
    /* directories made by skv__cgroup_create, for rollback (deepest last) */
    char **made;
    char **made_ctrl;
    size_t nmade;
    /* the device program attached by skv__cgroup_devices_set (v2_devices.c);
     * dev_prog_fd is valid only while dev_filtered */
    bool dev_filtered;
    int dev_prog_fd;
};

/* Validated limits in kernel units. */
struct skv__cg_values {
    const char *cpus, *mems;    /* NULL: leave alone */
    uint64_t quota_us, period_us; /* quota 0: no quota */
    uint64_t memory;            /* 0: no limit */
    bool swap_off;
    uint64_t pids;              /* 0: no limit */
};

struct skv__cg_ops {
    skv_cgroup_mode mode;
    /* make the directories (and parents) for every hierarchy */
    int (*create)(skv_cgroup *cg, const char *const *parts, size_t nparts,
                  skv_error *err);
    int (*apply)(skv_cgroup *cg, const skv__cg_values *v, skv_error *err);
    int (*stats)(const skv_cgroup *cg, skv_cgroup_stats *out, skv_error *err);
    /* freeze (true) or thaw; SKV_ENOTSUP without a freezer */
    int (*freeze)(skv_cgroup *cg, bool frozen, skv_error *err);
};

extern const skv__cg_ops skv__cg_ops_v1;
extern const skv__cg_ops skv__cg_ops_v2;
extern const skv__cg_ops skv__cg_ops_hybrid;

/* ---- detect.c ---------------------------------------------------------- */
int skv__cg_layout_load(skv__cg_layout *out, skv_cgroup_mode force,
                        skv_error *err);
/* The same through a per-sysroot cache (skv__cgroup_detect refreshes it). */
int skv__cg_layout_get(skv__cg_layout *out, skv_cgroup_mode force,
                       skv_error *err);
/* The caller's own cgroup path in a hierarchy (from /proc/self/cgroup). */
int skv__cg_self_path(char *buf, size_t bufsz, const skv__cg_mount *m,
                      skv_error *err);
/* Whether comma list `list` contains `word`. */
bool skv__cg_list_has(const char *list, const char *word);

/* ---- fs.c ---------------------------------------------------------------- */
int skv__cg_join(char *buf, size_t bufsz, const char *dir, const char *file,
                 skv_error *err);
bool skv__cg_has(const char *dir, const char *file);
int skv__cg_write(const char *dir, const char *file, const char *value,
                  skv_error *err);
int skv__cg_write_u64(const char *dir, const char *file, uint64_t v,
                      skv_error *err);
int skv__cg_read(const char *dir, const char *file, char *buf, size_t bufsz,
                 skv_error *err);
/* One integer ("max" reads as UINT64_MAX). SKV_EPROTO if malformed. */
int skv__cg_read_u64(uint64_t *out, const char *dir, const char *file,
                     skv_error *err);
/* "key value" lines (cpu.stat, memory.events, memory.oom_control).
 * SKV_ENOENT if the file or the key is missing, SKV_EPROTO if malformed. */
int skv__cg_read_key(uint64_t *out, const char *dir, const char *file,
                     const char *key, skv_error *err);
/* mkdir under the sysroot: 1 made, 0 existed, <0 error. likely_exists:
 * stat first (lock-free) instead of letting mkdir fail with EEXIST, which
 * waits for the hierarchy's mutex. */
int skv__cg_mkdir(const char *dir, const char *ctrl, bool likely_exists,
                  skv_error *err);
/* rmdir, retrying EBUSY until timeout_ms; a missing directory is fine. */
int skv__cg_rmdir(const char *dir, const char *ctrl, unsigned timeout_ms,
                  skv_error *err);
void skv__cg_sleep_ms(unsigned ms);
void skv__cg_sleep_us(unsigned us);
uint64_t skv__cg_now_ms(void);

/* ---- cgroup.c ----------------------------------------------------------- */
/* Make dir (recording it for rollback when new). 1 made, 0 existed. */
int skv__cg_make(skv_cgroup *cg, const char *dir, const char *ctrl,
                 bool likely_exists, skv_error *err);
/* The directory for a controller ("memory", "unified"), or NULL. */
const skv__cg_dir *skv__cg_find(const skv_cgroup *cg, const char *ctrl);
/* Every prefix directory of d's path from the mount point to the leaf is
 * visited by the create helpers; this builds "<mount><base>/<parts...>". */
int skv__cg_mkdirs_for(skv_cgroup *cg, skv__cg_dir *d, size_t nparts,
                       const char *const *parts,
                       int (*each)(skv_cgroup *cg, const char *dir,
                                   const char *parent, bool made,
                                   bool leaf, skv_error *err),
                       skv_error *err);

/* ---- limits.c ------------------------------------------------------------ */
/* The validation of skv__cgroup_apply, nothing written. */
int skv__cg_limits_check(const skv_cgroup_limits *limits, skv_error *err);

/* ---- v2_devices.c --------------------------------------------------------- */
/* Assemble the allow-list program for rules[0..n) (validated), load it,
 * attach it to the cgroup directory dir (absolute, without sysroot) and
 * return its fd in *prog_fd. Nothing stays attached or open on failure. */
int skv__cg_bpf_devices_attach(int *prog_fd, const char *dir,
                               const skv_cgroup_device *rules, size_t n,
                               skv_error *err);
/* Detach prog_fd from dir (best effort: a removed cgroup took it along)
 * and close it. */
void skv__cg_bpf_devices_detach(int prog_fd, const char *dir);

/* ---- v1.c (shared with hybrid.c) ------------------------------------------ */
int skv__cg_v1_create(skv_cgroup *cg, const char *const *parts, size_t nparts,
                      skv_error *err);
int skv__cg_v1_apply(skv_cgroup *cg, const skv__cg_values *v, skv_error *err);
int skv__cg_v1_stats(const skv_cgroup *cg, skv_cgroup_stats *out,
                     skv_error *err);
int skv__cg_v1_freeze(skv_cgroup *cg, bool frozen, skv_error *err);

#endif
