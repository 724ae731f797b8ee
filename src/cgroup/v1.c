/* cgroup v1: one directory per mounted hierarchy. Also the controller half
 * of hybrid mode (hybrid.c adds the unified directory).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

static bool blank(const char *s)
{
    return s[strspn(s, " \t\n")] == '\0';
}

/* A new cpuset cgroup starts with empty cpus and mems, and tasks cannot join
 * it until both are set: copy them down from the parent at every level. */
static int cpuset_init(skv_cgroup *cg, const char *dir, const char *parent,
                       bool made, bool leaf, skv_error *err)
{
    SKV__UNUSED(cg);
    SKV__UNUSED(made);
    SKV__UNUSED(leaf);
    if (!parent)
        return 0;
    static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
    for (size_t i = 0; i < 2; i++) {
        char cur[4096], up[4096];
        int rc = skv__cg_read(dir, files[i], cur, sizeof(cur), err);
        if (rc == 0 && !blank(cur))
            continue;
        if (rc == 0)
            rc = skv__cg_read(parent, files[i], up, sizeof(up), err);
        if (rc == 0 && blank(up))
            rc = skv__err(err, SKV_ESTATE, "%s/%s is empty", parent, files[i]);
        if (rc == 0)
            rc = skv__cg_write(dir, files[i], up, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int skv__cg_v1_create(skv_cgroup *cg, const char *const *parts, size_t nparts,
                      skv_error *err)
{
    for (size_t i = 0; i < cg->n; i++) {
        skv__cg_dir *d = &cg->d[i];
        if (d->mount.v2)
            continue;
        bool cpuset = skv__cg_list_has(d->mount.ctrls, "cpuset");
        int rc = skv__cg_mkdirs_for(cg, d, nparts, parts,
                                    cpuset ? cpuset_init : NULL, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int need(const skv__cg_dir **out, const skv_cgroup *cg,
                const char *ctrl, const char *what, skv_error *err)
{
    *out = skv__cg_find(cg, ctrl);
    if (!*out)
        return skv__err(err, SKV_ENOTSUP,
                        "%s needs the %s controller, which is not mounted",
                        what, ctrl);
    return 0;
}

/* The memsw limit must stay >= the memory limit: when raising, the first
 * write fails with EINVAL and memsw goes first. */
static int v1_memory(const skv__cg_dir *d, const skv__cg_values *v,
                     skv_error *err)
{
    bool memsw = v->swap_off && skv__cg_has(d->dir, "memory.memsw.limit_in_bytes");
    if (v->swap_off && !memsw)
        skv__log(SKV_LOG_INFO, "cgroup",
                 "%s: no swap accounting (memsw); swap cannot be limited",
                 d->dir);
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__cg_write_u64(d->dir, "memory.limit_in_bytes", v->memory, &e);
    if (rc < 0 && memsw && e.sys_errno == EINVAL) {
        rc = skv__cg_write_u64(d->dir, "memory.memsw.limit_in_bytes",
                               v->memory, err);
        if (rc == 0)
            rc = skv__cg_write_u64(d->dir, "memory.limit_in_bytes", v->memory,
                                   err);
        return rc;
    }
    if (rc < 0) {
        if (err)
            *err = e;
        return rc;
    }
    return memsw ? skv__cg_write_u64(d->dir, "memory.memsw.limit_in_bytes",
                                     v->memory, err)
                 : 0;
}

int skv__cg_v1_apply(skv_cgroup *cg, const skv__cg_values *v, skv_error *err)
{
    const skv__cg_dir *d;
    int rc = 0;
    if ((v->cpus || v->mems) && (rc = need(&d, cg, "cpuset", "cpus/mems", err)) == 0) {
        if (v->cpus)
            rc = skv__cg_write(d->dir, "cpuset.cpus", v->cpus, err);
        if (rc == 0 && v->mems)
            rc = skv__cg_write(d->dir, "cpuset.mems", v->mems, err);
    }
    if (rc == 0 && v->quota_us && (rc = need(&d, cg, "cpu", "cpu quota", err)) == 0) {
        rc = skv__cg_write_u64(d->dir, "cpu.cfs_period_us", v->period_us, err);
        if (rc == 0)
            rc = skv__cg_write_u64(d->dir, "cpu.cfs_quota_us", v->quota_us, err);
    }
    if (rc == 0 && v->memory && (rc = need(&d, cg, "memory", "memory limit", err)) == 0)
        rc = v1_memory(d, v, err);
    if (rc == 0 && v->pids && (rc = need(&d, cg, "pids", "pids limit", err)) == 0)
        rc = skv__cg_write_u64(d->dir, "pids.max", v->pids, err);
    return rc;
}

/* ENOENT (file or key missing) means "not available here". */
static int soft(int rc, bool *has)
{
    *has = rc == 0;
    return rc == SKV_ENOENT ? 0 : rc;
}

int skv__cg_v1_stats(const skv_cgroup *cg, skv_cgroup_stats *out,
                     skv_error *err)
{
    memset(out, 0, sizeof(*out));
    const skv__cg_dir *d;
    int rc = 0;
    if ((d = skv__cg_find(cg, "cpuacct")))
        rc = soft(skv__cg_read_u64(&out->cpu_usage_ns, d->dir, "cpuacct.usage",
                                   err), &out->has_cpu);
    if (rc == 0 && (d = skv__cg_find(cg, "memory"))) {
        rc = soft(skv__cg_read_u64(&out->memory_current, d->dir,
                                   "memory.usage_in_bytes", err),
                  &out->has_memory);
        if (rc == 0)
            rc = soft(skv__cg_read_u64(&out->memory_peak, d->dir,
                                       "memory.max_usage_in_bytes", err),
                      &out->has_memory_peak);
        if (rc == 0)
            rc = soft(skv__cg_read_key(&out->oom_kills, d->dir,
                                       "memory.oom_control", "oom_kill", err),
                      &out->has_oom_kills);
    }
    if (rc == 0 && (d = skv__cg_find(cg, "pids")))
        rc = soft(skv__cg_read_u64(&out->pids_current, d->dir, "pids.current",
                                   err), &out->has_pids);
    return rc;
}

int skv__cg_v1_freeze(skv_cgroup *cg, bool frozen, skv_error *err)
{
    const skv__cg_dir *d = skv__cg_find(cg, "freezer");
    if (!d)
        return skv__err(err, SKV_ENOTSUP, "no freezer hierarchy");
    int rc = skv__cg_write(d->dir, "freezer.state", frozen ? "FROZEN" : "THAWED",
                           err);
    /* FREEZING may last a moment; the kill loop copes either way, so wait
     * only briefly for FROZEN. */
    for (int i = 0; rc == 0 && frozen && i < 50; i++) {
        char st[32];
        if (skv__cg_read(d->dir, "freezer.state", st, sizeof(st), NULL) < 0 ||
            strncmp(st, "FROZEN", 6) == 0)
            break;
        skv__cg_sleep_ms(1);
    }
    return rc;
}

const skv__cg_ops skv__cg_ops_v1 = {
    SKV_CGROUP_MODE_V1, skv__cg_v1_create, skv__cg_v1_apply, skv__cg_v1_stats,
    skv__cg_v1_freeze,
};
