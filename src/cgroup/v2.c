/* cgroup v2: one directory in the unified hierarchy; controllers must be
 * enabled in every ancestor's cgroup.subtree_control.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

static const char *const v2_ctrls[] = {"cpuset", "cpu", "memory", "pids"};

/* Space-separated word lists (cgroup.controllers, subtree_control). */
static bool words_have(const char *list, const char *w)
{
    size_t wl = strlen(w);
    for (const char *p = list; *p;) {
        p += strspn(p, " \n");
        size_t len = strcspn(p, " \n");
        if (len == wl && strncmp(p, w, wl) == 0)
            return true;
        p += len;
    }
    return false;
}

/* Enable our controllers for the children of every non-leaf level. A level
 * that holds processes refuses (EBUSY, "no internal processes"); then the
 * limits that need that controller fail later with SKV_ENOTSUP. */
static int enable_ctrls(skv_cgroup *cg, const char *dir, const char *parent,
                        bool made, bool leaf, skv_error *err)
{
    SKV__UNUSED(cg);
    SKV__UNUSED(parent);
    SKV__UNUSED(made);
    SKV__UNUSED(err);
    if (leaf)
        return 0;
    char avail[512], on[512];
    if (skv__cg_read(dir, "cgroup.controllers", avail, sizeof(avail), NULL) < 0 ||
        skv__cg_read(dir, "cgroup.subtree_control", on, sizeof(on), NULL) < 0)
        return 0;
    for (size_t i = 0; i < SKV__ARRAY_LEN(v2_ctrls); i++) {
        if (!words_have(avail, v2_ctrls[i]) || words_have(on, v2_ctrls[i]))
            continue;
        char add[32];
        skv_error e = SKV_ERROR_INIT;
        snprintf(add, sizeof(add), "+%s", v2_ctrls[i]);
        if (skv__cg_write(dir, "cgroup.subtree_control", add, &e) < 0)
            skv__log(SKV_LOG_WARN, "cgroup", "enabling %s: %s", add, e.message);
    }
    return 0;
}

static int v2_create(skv_cgroup *cg, const char *const *parts, size_t nparts,
                     skv_error *err)
{
    return skv__cg_mkdirs_for(cg, &cg->d[0], nparts, parts, enable_ctrls, err);
}

static int put(const char *dir, const char *file, const char *value,
               skv_error *err)
{
    if (!skv__cg_has(dir, file))
        return skv__err(err, SKV_ENOTSUP,
                        "%s/%s is missing (controller not enabled)", dir, file);
    return skv__cg_write(dir, file, value, err);
}

static int v2_apply(skv_cgroup *cg, const skv__cg_values *v, skv_error *err)
{
    const char *dir = cg->d[0].dir;
    char buf[64];
    int rc = 0;
    if (v->cpus)
        rc = put(dir, "cpuset.cpus", v->cpus, err);
    if (rc == 0 && v->mems)
        rc = put(dir, "cpuset.mems", v->mems, err);
    if (rc == 0 && v->quota_us) {
        snprintf(buf, sizeof(buf), "%llu %llu", (unsigned long long)v->quota_us,
                 (unsigned long long)v->period_us);
        rc = put(dir, "cpu.max", buf, err);
    }
    if (rc == 0 && v->memory) {
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->memory);
        rc = put(dir, "memory.max", buf, err);
        if (rc == 0 && v->swap_off) {
            if (skv__cg_has(dir, "memory.swap.max"))
                rc = skv__cg_write(dir, "memory.swap.max", "0", err);
            else
                skv__log(SKV_LOG_INFO, "cgroup",
                         "%s: no memory.swap.max (swap accounting off)", dir);
        }
    }
    if (rc == 0 && v->pids) {
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->pids);
        rc = put(dir, "pids.max", buf, err);
    }
    return rc;
}

static int soft(int rc, bool *has)
{
    *has = rc == 0;
    return rc == SKV_ENOENT ? 0 : rc;
}

static int v2_stats(const skv_cgroup *cg, skv_cgroup_stats *out, skv_error *err)
{
    memset(out, 0, sizeof(*out));
    const char *dir = cg->d[0].dir;
    uint64_t usec = 0;
    int rc = soft(skv__cg_read_key(&usec, dir, "cpu.stat", "usage_usec", err),
                  &out->has_cpu);
    out->cpu_usage_ns = usec * 1000u;
    if (rc == 0)
        rc = soft(skv__cg_read_u64(&out->memory_current, dir, "memory.current",
                                   err), &out->has_memory);
    if (rc == 0)
        rc = soft(skv__cg_read_u64(&out->memory_peak, dir, "memory.peak", err),
                  &out->has_memory_peak);
    if (rc == 0)
        rc = soft(skv__cg_read_key(&out->oom_kills, dir, "memory.events",
                                   "oom_kill", err), &out->has_oom_kills);
    if (rc == 0)
        rc = soft(skv__cg_read_u64(&out->pids_current, dir, "pids.current", err),
                  &out->has_pids);
    return rc;
}

static int v2_freeze(skv_cgroup *cg, bool frozen, skv_error *err)
{
    const char *dir = cg->d[0].dir;
    if (!skv__cg_has(dir, "cgroup.freeze"))
        return skv__err(err, SKV_ENOTSUP, "%s has no cgroup.freeze", dir);
    int rc = skv__cg_write(dir, "cgroup.freeze", frozen ? "1" : "0", err);
    for (int i = 0; rc == 0 && frozen && i < 50; i++) {
        uint64_t f = 0;
        if (skv__cg_read_key(&f, dir, "cgroup.events", "frozen", NULL) < 0 ||
            f == 1)
            break;
        skv__cg_sleep_ms(1);
    }
    return rc;
}

const skv__cg_ops skv__cg_ops_v2 = {
    SKV_CGROUP_MODE_V2, v2_create, v2_apply, v2_stats, v2_freeze,
};
