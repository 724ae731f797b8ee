/* The manager's Prometheus metrics (skv_manager_metrics_collect): the
 * families it exposes, the state kept between two collects, and the hooks
 * the core calls for what only the moment can tell (how long a pass took,
 * how long a kernel took from kernel.create to running).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_METRICS_H
#define SKV_MGR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/manager.h"
#include "sokovan/metrics.h"

/* The families, registered (idempotently) in the bound registry. */
typedef struct skv__mgr_families {
    skv_metric *sessions, *placements, *pps, *passes, *pass_hist, *pending;
    skv_metric *agents, *capacity, *used, *start_hist, *requests, *refused;
    skv_metric *preemptions, *reclaimed;
    skv_metric *unhealthy;      /* devices agents report unhealthy */
} skv__mgr_families;

/* One kernel.create sent and not yet answered (start latency). */
typedef struct skv__mgr_start {
    char *kernel_id;
    int64_t sent_ms;
} skv__mgr_start;

typedef struct skv__mgr_metrics {
    skv_metrics *reg;          /* borrowed: the caller's registry */
    skv__mgr_families f;
    uint64_t last_placements;  /* at the previous collect */
    int64_t last_ms;           /* now_ms of the previous collect */
    bool have_last;
    skv__mgr_start *starts;
    size_t n_starts, cap_starts;
} skv__mgr_metrics;

/* Register every family in reg (existing ones are reused). */
int skv__mgr_metrics_families(skv__mgr_families *f, skv_metrics *reg,
                              skv_error *err);

/* Gauges computed from the manager's state (each family reset first). */
int skv__mgr_metrics_agents(skv_manager *m, const skv__mgr_families *f,
                            skv_error *err);
int skv__mgr_metrics_pool(skv_manager *m, const skv__mgr_families *f,
                          skv_error *err);
int skv__mgr_metrics_pending(skv_manager *m, const skv__mgr_families *f,
                             skv_error *err);

/* ---- hooks (no-ops until a registry is bound) ------------------------- */
/* A scheduling pass took ns nanoseconds. */
void skv__mgr_metrics_pass(skv_manager *m, uint64_t ns);
/* kernel.create for kid was sent at now_ms (the first one counts). */
void skv__mgr_metrics_create_sent(skv_manager *m, const char *kid,
                                  int64_t now_ms);
/* kid runs (create reply or status "running"): observe the latency. */
void skv__mgr_metrics_kernel_running(skv_manager *m, const char *kid,
                                     int64_t now_ms);
/* kid ended or failed before running: forget its start. */
void skv__mgr_metrics_kernel_gone(skv_manager *m, const char *kid);
/* Drop every remembered start (registry rebound or detached). */
void skv__mgr_metrics_forget_starts(skv__mgr_metrics *x);
/* Free the state (skv_manager_free). Accepts NULL. */
void skv__mgr_metrics_free(skv__mgr_metrics *x);

#endif /* SKV_MGR_METRICS_H */
