/* bench/manager: one cluster's run and its figures.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_BENCH_MANAGER_RUN_H
#define SKV_BENCH_MANAGER_RUN_H

#include "bench_manager.h"

typedef struct bm_pct {
    double p50, p99;        /* ms; -1: no sample */
} bm_pct;

typedef struct bm_result {
    bool ok;
    int agents;
    double register_s;      /* all agents connected and answered */
    double settle_s;        /* then until route events stopped for 2 s */
    long register_routes;   /* agent.routes and agent.routes.delta events
                             * received by then */
    long long register_bytes;  /* bytes the agents received meanwhile */
    double wall_s;          /* first submit -> last session ended */
    double submit_s;        /* first submit -> last submit answered */
    double sessions_per_s, submits_per_s;
    bm_pct ack_ms, dispatch_ms, end_ms;   /* from the submit */
    double mgr_cpu_s;       /* during the measured span */
    double mgr_hwm_mb;      /* VmHWM at the end (includes start-up) */
    double mgr_runq_wait_s; /* runnable but waiting for a CPU meanwhile */
    double peak_rss_seen_mb;
    double bench_cpu_s;     /* this process: agents + clients */
    double load1_start, load1_end;
    uint64_t terminated;
    int agents_used;        /* agents the manager gave a kernel */
    long max_per_agent;     /* the most kernels one agent got */
    long creates, destroys, dup_creates, untagged, mgr_errors, heartbeats;
} bm_result;

int bm_run(bm_result *r, const char *bin, const bm_opts *o, int n_agents,
           char *why, size_t wl);

#endif
