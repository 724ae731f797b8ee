/* skv_agent_metrics_collect: the agent's Prometheus families. Per-kernel
 * series come from the runtime's cgroup statistics (skv_runtime_stats);
 * each collect resets the per-kernel families and sets the kernels running
 * now, so a kernel that went away takes its series with it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"
#include "sokovan/metrics.h"

typedef struct agent_families {
    skv_metric *kernels, *capacity, *used;
    skv_metric *cpu, *mem, *mem_peak, *pids;
} agent_families;

static const char *const l_state[] = {"state"};
static const char *const l_slot[] = {"slot"};
static const char *const l_kernel[] = {"session", "kernel"};

typedef struct fam_def {
    size_t off;
    skv_metric_type type;
    const char *name, *help;
    const char *const *labels;
    size_t n_labels;
} fam_def;

#define OFF(f) offsetof(agent_families, f)
#define LBL(a) a, SKV__ARRAY_LEN(a)

static const fam_def defs[] = {
    {OFF(kernels), SKV_METRIC_GAUGE, "sokovan_agent_kernels",
     "Kernels this agent holds: being created, running, or exited and "
     "awaiting the manager's destroy.", LBL(l_state)},
    {OFF(capacity), SKV_METRIC_GAUGE, "sokovan_agent_capacity",
     "Pooled capacity of the agent's slice (cpu in cores, mem in bytes).",
     LBL(l_slot)},
    {OFF(used), SKV_METRIC_GAUGE, "sokovan_agent_used",
     "Pooled amount held by the agent's kernels (units as "
     "sokovan_agent_capacity).", LBL(l_slot)},
    {OFF(cpu), SKV_METRIC_COUNTER, "sokovan_kernel_cpu_seconds_total",
     "CPU time (user + system) of a kernel's cgroup.", LBL(l_kernel)},
    {OFF(mem), SKV_METRIC_GAUGE, "sokovan_kernel_memory_bytes",
     "Memory in use by a kernel's cgroup.", LBL(l_kernel)},
    {OFF(mem_peak), SKV_METRIC_GAUGE, "sokovan_kernel_memory_peak_bytes",
     "Highest memory use seen of a kernel's cgroup.", LBL(l_kernel)},
    {OFF(pids), SKV_METRIC_GAUGE, "sokovan_kernel_pids",
     "Tasks in a kernel's cgroup.", LBL(l_kernel)},
};

static int families(agent_families *f, skv_metrics *reg, skv_error *err)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(defs); i++) {
        skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
        o.type = defs[i].type;
        o.name = defs[i].name;
        o.help = defs[i].help;
        o.labels = defs[i].labels;
        o.n_labels = defs[i].n_labels;
        int rc = skv_metrics_register(
            (skv_metric **)((char *)f + defs[i].off), reg, &o, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int pool(const agent_families *f, const skv_agent *a, skv_error *err)
{
    static const char *const cpu[] = {"cpu"}, *const mem[] = {"mem"};
    int rc = skv_metrics_set(f->capacity, cpu, 1,
                             (double)a->cpu_cap / SKV_QTY_SCALE, err);
    if (!rc)
        rc = skv_metrics_set(f->used, cpu, 1,
                             (double)a->cpu_used / SKV_QTY_SCALE, err);
    if (!rc)
        rc = skv_metrics_set(f->capacity, mem, 1, (double)a->mem_cap, err);
    if (!rc)
        rc = skv_metrics_set(f->used, mem, 1, (double)a->mem_used, err);
    return rc;
}

/* One running kernel's series; a kernel whose statistics cannot be read
 * (its cgroup just went away) is left out until the next collect. */
static int kernel_series(const agent_families *f, skv_agent *a,
                         const skv__agent_kernel *k, skv_error *err)
{
    skv_container_stats st = SKV_CONTAINER_STATS_INIT;
    if (skv_runtime_stats(a->rt, k->req.kernel_id, &st, NULL))
        return 0;
    const char *lv[2] = {k->req.session_id ? k->req.session_id : "",
                         k->req.kernel_id};
    int rc = skv_metrics_set(f->cpu, lv, 2, (double)st.cpu_time_ns / 1e9,
                             err);
    if (!rc)
        rc = skv_metrics_set(f->mem, lv, 2, (double)st.memory_current, err);
    if (!rc)
        rc = skv_metrics_set(f->mem_peak, lv, 2, (double)st.memory_peak, err);
    if (!rc)
        rc = skv_metrics_set(f->pids, lv, 2, (double)st.pids_current, err);
    return rc;
}

static int kernels(const agent_families *f, skv_agent *a, skv_error *err)
{
    static const char *const running[] = {"running"},
                             *const exited[] = {"exited"},
                             *const creating[] = {"creating"};
    double n_run = 0, n_exit = 0;
    skv_metrics_reset(f->cpu);
    skv_metrics_reset(f->mem);
    skv_metrics_reset(f->mem_peak);
    skv_metrics_reset(f->pids);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < a->nk; i++) {
        const skv__agent_kernel *k = a->k[i];
        if (k->exited) {
            n_exit++;
            continue;
        }
        n_run++;
        rc = kernel_series(f, a, k, err);
    }
    if (!rc)
        rc = skv_metrics_set(f->kernels, running, 1, n_run, err);
    if (!rc)
        rc = skv_metrics_set(f->kernels, exited, 1, n_exit, err);
    if (!rc)
        rc = skv_metrics_set(f->kernels, creating, 1, (double)a->njobs, err);
    return rc;
}

SKV_EXTERN int skv_agent_metrics_collect(skv_agent *a, skv_metrics *reg,
                                         int64_t now_ms, skv_error *err)
{
    (void)now_ms; /* the values are the cgroups' own, read now */
    if (!a || !reg)
        return skv__err(err, SKV_EINVAL,
                        "agent_metrics_collect: NULL agent or registry");
    agent_families f;
    int rc = families(&f, reg, err);
    if (!rc)
        rc = pool(&f, a, err);
    if (!rc)
        rc = kernels(&f, a, err);
    return rc;
}
