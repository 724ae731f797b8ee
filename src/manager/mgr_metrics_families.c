/* The manager's metric families: one table gives each family's name, type,
 * labels, buckets and HELP, so registration, docs/api/manager.md and the
 * tests name the same things.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>

#include "mgr_metrics.h"
#include "skv_internal.h"

/* A pass over a few thousand sessions takes milliseconds; the upper
 * buckets catch the pathological ones. */
static const double pass_buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                      0.005,  0.01,    0.025,  0.05,  0.1,
                                      0.25,   0.5,     1,      2.5};
/* Container starts: image setup and cgroups take 10s of ms to minutes. */
static const double start_buckets[] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                       2.5,  5,     10,   30,  60,  120, 300};

static const char *const l_state[] = {"state"};
static const char *const l_pending[] = {"resource_group", "reason"};
static const char *const l_slot[] = {"resource_group", "slot"};
static const char *const l_reason[] = {"reason"};

typedef struct fam_def {
    size_t off;               /* field of skv__mgr_families */
    skv_metric_type type;
    const char *name, *help;
    const char *const *labels;
    size_t n_labels;
    const double *buckets;
    size_t n_buckets;
} fam_def;

#define OFF(f) offsetof(skv__mgr_families, f)
#define LBL(a) a, SKV__ARRAY_LEN(a)
#define NOLBL NULL, 0
#define BKT(a) a, SKV__ARRAY_LEN(a)
#define NOBKT NULL, 0

static const fam_def defs[] = {
    {OFF(sessions), SKV_METRIC_GAUGE, "sokovan_sessions",
     "Sessions by state (every session the database holds).", LBL(l_state),
     NOBKT},
    {OFF(placements), SKV_METRIC_COUNTER, "sokovan_placements_total",
     "Sessions placed by the scheduler since the manager started.", NOLBL,
     NOBKT},
    {OFF(pps), SKV_METRIC_GAUGE, "sokovan_placements_per_second",
     "Placements per second between the last two collections.", NOLBL,
     NOBKT},
    {OFF(passes), SKV_METRIC_COUNTER, "sokovan_sched_passes_total",
     "Scheduling passes run since the manager started.", NOLBL, NOBKT},
    {OFF(pass_hist), SKV_METRIC_HISTOGRAM,
     "sokovan_sched_pass_duration_seconds",
     "Duration of one scheduling pass (the scheduler's decision).", NOLBL,
     BKT(pass_buckets)},
    {OFF(pending), SKV_METRIC_GAUGE, "sokovan_pending_sessions",
     "Pending sessions by resource group and the scheduler's reason.",
     LBL(l_pending), NOBKT},
    {OFF(agents), SKV_METRIC_GAUGE, "sokovan_agents",
     "Agents by state (alive, disconnected, lost).", LBL(l_state), NOBKT},
    {OFF(capacity), SKV_METRIC_GAUGE, "sokovan_capacity",
     "Schedulable capacity per resource group and slot (count slots in "
     "units, byte slots in bytes).", LBL(l_slot), NOBKT},
    {OFF(used), SKV_METRIC_GAUGE, "sokovan_used",
     "Allocated amount per resource group and slot (units as "
     "sokovan_capacity).", LBL(l_slot), NOBKT},
    {OFF(start_hist), SKV_METRIC_HISTOGRAM, "sokovan_container_start_seconds",
     "Time from kernel.create sent to the kernel running, per kernel.",
     NOLBL, BKT(start_buckets)},
    {OFF(requests), SKV_METRIC_COUNTER, "sokovan_requests_total",
     "Frames handled from users and agents.", NOLBL, NOBKT},
    {OFF(refused), SKV_METRIC_COUNTER, "sokovan_requests_refused_total",
     "Error replies sent.", NOLBL, NOBKT},
    {OFF(preemptions), SKV_METRIC_COUNTER, "sokovan_preemptions_total",
     "Sessions evicted for a higher-priority session or to reclaim "
     "borrowed capacity since the manager started.", NOLBL, NOBKT},
    {OFF(unhealthy), SKV_METRIC_GAUGE, "sokovan_unhealthy_devices",
     "Accelerators their agents report unhealthy (out of the schedulable "
     "capacity).", NOLBL, NOBKT},
    {OFF(reclaimed), SKV_METRIC_COUNTER, "sokovan_sessions_reclaimed_total",
     "Running sessions the manager terminated for a limit since it started: "
     "reason idle (idle_timeout) or lifetime (a maximum lifetime).",
     LBL(l_reason), NOBKT},
};

int skv__mgr_metrics_families(skv__mgr_families *f, skv_metrics *reg,
                              skv_error *err)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(defs); i++) {
        const fam_def *d = &defs[i];
        skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
        o.type = d->type;
        o.name = d->name;
        o.help = d->help;
        o.labels = d->labels;
        o.n_labels = d->n_labels;
        o.buckets = d->buckets;
        o.n_buckets = d->n_buckets;
        skv_metric **slot = (skv_metric **)((char *)f + d->off);
        int rc = skv_metrics_register(slot, reg, &o, err);
        if (rc)
            return rc;
    }
    return 0;
}
