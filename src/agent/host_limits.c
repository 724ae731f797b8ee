/* Host protection, part 1: the budget of all session containers of the
 * host together. Every container has its own limits (tasks, memory, CPU),
 * but many containers each within its own share still add up to the whole
 * host: a few fork bombs below a limit of 4096 tasks each exhaust a host
 * pid_max of 32768, and then nothing else can fork (no shell, no
 * daemon). The containers' common parent cgroup gets a total instead,
 * with room left for the host and the daemons. Written at every agent
 * start (the configuration may have changed); the runtime makes the
 * containers below that parent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_internal.h"

#define MiB (1024ull * 1024)

static int read_u64(const char *path, const char *field, uint64_t *out,
                    skv_error *err)
{
    char text[8192];
    int rc = skv__sys_read(path, text, sizeof(text), NULL, err);
    if (rc < 0)
        return rc;
    const char *p = field ? strstr(text, field) : text;
    char *end = NULL;
    unsigned long long v = p ? strtoull(p + (field ? strlen(field) : 0),
                                        &end, 10) : 0;
    if (!p || end == p + (field ? strlen(field) : 0) || v == 0)
        return skv__err(err, SKV_EPROTO, "%s: no number%s%s", path,
                        field ? " after " : "", field ? field : "");
    *out = (uint64_t)v;
    return 0;
}

/* Tasks: the configured total, or pid_max less a reserve of an eighth
 * (at least 1024): room for the host's shells, daemons and their
 * threads however busy the sessions are. */
static int pids_total(int64_t want, int64_t *out, skv_error *err)
{
    uint64_t pid_max = 0;
    int rc = read_u64("/proc/sys/kernel/pid_max", NULL, &pid_max, err);
    if (rc < 0)
        return rc;
    uint64_t reserve = pid_max / 8 > 1024 ? pid_max / 8 : 1024;
    if (want == 0 && pid_max <= 2 * reserve)
        return skv__err(err, SKV_ERANGE, "pid_max %llu leaves no room for "
                        "sessions after a reserve of %llu tasks; set "
                        "sessions_pids_max", (unsigned long long)pid_max,
                        (unsigned long long)reserve);
    if (want > 0 && (uint64_t)want >= pid_max)
        return skv__err(err, SKV_ERANGE, "sessions_pids_max %lld is not "
                        "below the host's pid_max %llu", (long long)want,
                        (unsigned long long)pid_max);
    *out = want > 0 ? want : (int64_t)(pid_max - reserve);
    return 0;
}

/* Memory: the host's less the configured reserve, or less max(512 MiB,
 * a sixteenth), at most half of it. */
static int memory_total(uint64_t reserve, int64_t *out, skv_error *err)
{
    uint64_t kib = 0;
    int rc = read_u64("/proc/meminfo", "MemTotal:", &kib, err);
    if (rc < 0)
        return rc;
    uint64_t total = kib * 1024;
    if (reserve == 0) {
        reserve = total / 16 > 512 * MiB ? total / 16 : 512 * MiB;
        if (reserve > total / 2)
            reserve = total / 2;
    }
    if (reserve + 16 * MiB > total)
        return skv__err(err, SKV_ERANGE, "sessions_memory_reserve %llu "
                        "leaves less than 16 MiB of the host's %llu bytes",
                        (unsigned long long)reserve,
                        (unsigned long long)total);
    *out = (int64_t)(total - reserve);
    return 0;
}

static int cpu_total(uint32_t reserve, skv_qty *out, skv_error *err)
{
    *out = 0;
    if (reserve == 0)
        return 0;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t online = (n > 0 ? n : 1) * 1000;
    if ((int64_t)reserve + 10 > online)
        return skv__err(err, SKV_ERANGE, "sessions_cpu_reserve %u "
                        "milli-CPUs leaves less than 0.01 of %lld "
                        "milli-CPUs", reserve, (long long)online);
    *out = online - (int64_t)reserve;
    return 0;
}

int skv__agent_host_budget(const skv_agent_options *o,
                           skv_cgroup_limits *lim, bool *apply,
                           skv_error *err)
{
    memset(lim, 0, sizeof(*lim));
    *apply = !(o->version < 5 || o->sessions_pids_max < 0 ||
               (o->backend && strcmp(o->backend, "process") == 0));
    if (!*apply)
        return 0;  /* older callers, left alone, or no cgroups at all */
    lim->allow_swap = true;  /* swap stays the containers' own business */
    int rc = pids_total(o->sessions_pids_max, &lim->pids_max, err);
    if (rc == 0)
        rc = memory_total(o->sessions_memory_reserve, &lim->memory_bytes,
                          err);
    if (rc == 0)
        rc = cpu_total(o->sessions_cpu_reserve, &lim->cpu, err);
    return rc;
}

int skv__agent_host_limits(const skv_agent *a, const skv_cgroup_limits *lim,
                           skv_error *err)
{
    skv_cgroup_config cfg = {0};
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__cgroup_parent_limit(&cfg, lim, &e);
    if (rc < 0) {
        if (rc != SKV_ENOTSUP || skv__cgroup_detect(&cfg.mode, NULL) == 0)
            return skv__err(err, rc, "agent %s: %s", a->agent_id, e.message);
        /* No cgroup filesystem: containers cannot be made either. */
        skv__log(SKV_LOG_WARN, "agent", "no session limits: %s", e.message);
        return 0;
    }
    skv__log(SKV_LOG_INFO, "agent", "all sessions together: %lld tasks, "
             "%lld bytes, %lld milli-CPUs (0: no quota)",
             (long long)lim->pids_max, (long long)lim->memory_bytes,
             (long long)lim->cpu);
    return 0;
}
