/* Validating limits and converting them to kernel units before anything is
 * written, then handing them to the mode's apply; moving processes in.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

#define SKV__CG_MIN_MEMORY (1024 * 1024)
#define SKV__CG_MAX_ID 1048576L /* cpu / node numbers */

/* "0-3,8,10-11": ranges ascending within themselves. */
static int check_list(const char *list, const char *field, skv_error *err)
{
    const char *p = list;
    if (!*p)
        return 0;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            break;
        long a = strtol(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            if (p[1] < '0' || p[1] > '9')
                break;
            b = strtol(p + 1, &end, 10);
            p = end;
        }
        if (a > SKV__CG_MAX_ID || b > SKV__CG_MAX_ID || b < a)
            return skv__err(err, SKV_ERANGE, "%s '%s': bad range", field, list);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            break;
        p++;
    }
    return skv__err(err, SKV_EINVAL, "%s '%s' is not a list like '0-3,8'",
                    field, list);
}

static int cpu_values(skv__cg_values *v, const skv_cgroup_limits *l,
                      skv_error *err)
{
    v->period_us = l->cpu_period_us ? l->cpu_period_us : 100000;
    if (v->period_us < 1000 || v->period_us > 1000000)
        return skv__err(err, SKV_ERANGE,
                        "cpu_period_us %llu outside 1000..1000000",
                        (unsigned long long)v->period_us);
    if (l->cpu < 0)
        return skv__err(err, SKV_EINVAL, "cpu quota %lld is negative",
                        (long long)l->cpu);
    if (l->cpu == 0 || l->cpu == SKV_QTY_UNLIMITED)
        return 0;
    int64_t q;
    if (skv__mul_overflow_i64(l->cpu, (int64_t)v->period_us, &q))
        return skv__err(err, SKV_ERANGE, "cpu quota %lld too large",
                        (long long)l->cpu);
    v->quota_us = (uint64_t)(q / SKV_QTY_SCALE);
    if (v->quota_us < 1000)
        return skv__err(err, SKV_ERANGE,
                        "cpu quota of %lld milli-CPUs gives %llu us per "
                        "%llu us period; the kernel needs >= 1000 us",
                        (long long)l->cpu, (unsigned long long)v->quota_us,
                        (unsigned long long)v->period_us);
    return 0;
}

static int to_values(skv__cg_values *v, const skv_cgroup_limits *l,
                     skv_error *err)
{
    memset(v, 0, sizeof(*v));
    v->cpus = l->cpus && *l->cpus ? l->cpus : NULL;
    v->mems = l->mems && *l->mems ? l->mems : NULL;
    int rc = v->cpus ? check_list(v->cpus, "cpus", err) : 0;
    if (rc == 0 && v->mems)
        rc = check_list(v->mems, "mems", err);
    if (rc == 0)
        rc = cpu_values(v, l, err);
    if (rc < 0)
        return rc;
    if (l->memory_bytes < 0)
        return skv__err(err, SKV_EINVAL, "memory limit %lld is negative",
                        (long long)l->memory_bytes);
    if (l->memory_bytes > 0 && l->memory_bytes < SKV__CG_MIN_MEMORY)
        return skv__err(err, SKV_ERANGE,
                        "memory limit %lld bytes is below 1 MiB",
                        (long long)l->memory_bytes);
    if (l->pids_max < 0)
        return skv__err(err, SKV_EINVAL, "pids limit %lld is negative",
                        (long long)l->pids_max);
    v->memory = (uint64_t)l->memory_bytes;
    v->swap_off = !l->allow_swap;
    v->pids = (uint64_t)l->pids_max;
    return 0;
}

int skv__cg_limits_check(const skv_cgroup_limits *limits, skv_error *err)
{
    skv__cg_values v;
    return to_values(&v, limits, err);
}

int skv__cgroup_apply(skv_cgroup *cg, const skv_cgroup_limits *limits,
                      skv_error *err)
{
    if (!cg || !limits)
        return skv__err(err, SKV_EINVAL, "cgroup apply: NULL argument");
    skv__cg_values v;
    int rc = to_values(&v, limits, err);
    if (rc == 0)
        rc = cg->ops->apply(cg, &v, err);
    if (rc < 0)
        skv__err_prefix(err, "cgroup %s", cg->rel);
    return rc;
}

int skv__cgroup_add_pid(skv_cgroup *cg, pid_t pid, skv_error *err)
{
    if (!cg || pid <= 0)
        return skv__err(err, SKV_EINVAL, "cgroup add: bad pid %ld", (long)pid);
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", (long)pid);
    for (size_t i = 0; i < cg->n; i++) {
        int rc = skv__cg_write(cg->d[i].dir, "cgroup.procs", buf, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}
