/*
 * sokovan/sim.h - trace-driven simulation of the cluster scheduler.
 *
 * Replays workloads against a simulated cluster through the real scheduler
 * (sokovan/sched.h: sessions are submitted and placed by skv_sched_pass with
 * a selector plugin); nothing here places work by itself.
 *  - openb: the Alibaba GPU-sharing trace experiment of the FGD paper
 *    (tasks arrive one by one, never leave, are dropped when they fit
 *    nowhere; the curve of allocated vs arrived GPU demand).
 *  - jobs: a generic job table (submit time, duration, GPUs, optional CPU,
 *    memory and user/VC) with arrivals and departures in simulated time.
 * Also the placement policies of the FGD paper as selector plugins.
 *
 * Percentages and statistics are doubles (they are results, not resource
 * quantities); quantities stay skv_qty (milli-GPU, milli-CPU, bytes).
 *
 * Thread-safety: loaded traces are immutable and may be shared by threads
 * running simulations concurrently; each run uses its own scheduler.
 * Results are plain caller-owned data.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_SIM_H
#define SOKOVAN_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/sched.h"
#include "sokovan/slots.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- placement policies --------------------------------------------------- */

/* Selector plugins by name: the FGD paper's baselines "random", "dotprod",
 * "gpuclustering", "gpupacking", "bestfit", "fgd", and libsokovan's
 * fragmentation-aware "frag". NULL for other names. The tables are static. */
SKV_EXTERN const skv_sched_selector *skv_sim_policy(const char *name);
SKV_EXTERN size_t skv_sim_policy_count(void);
/* Name of policy i (paper order, "frag" last); NULL past the end. */
SKV_EXTERN const char *skv_sim_policy_name(size_t i);

/* ---- openb (FGD experiment) ------------------------------------------------ */

typedef struct skv_sim_openb skv_sim_openb;

/* Load a node list (columns sn,cpu_milli,memory_mib,gpu,model) and a pod
 * list (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]); columns
 * are found by header name, extra ones ignored, gpu_spec optional. Any bad
 * row fails the load with SKV_EINVAL naming file, line and field.
 * pods_csv may be NULL: nodes only (a cluster for skv_sim_jobs_run). */
SKV_EXTERN int skv_sim_openb_load(skv_sim_openb **out, const char *nodes_csv,
                                  const char *pods_csv, skv_error *err);
/* The same from in-memory CSV text (pods_text may be NULL). */
SKV_EXTERN int skv_sim_openb_parse(skv_sim_openb **out, const char *nodes_text,
                                   const char *pods_text, skv_error *err);
SKV_EXTERN void skv_sim_openb_free(skv_sim_openb *w);
SKV_EXTERN size_t skv_sim_openb_node_count(const skv_sim_openb *w);
SKV_EXTERN size_t skv_sim_openb_pod_count(const skv_sim_openb *w);
/* Total GPU capacity in milli-GPU. */
SKV_EXTERN skv_qty skv_sim_openb_capacity(const skv_sim_openb *w);

#define SKV_SIM_OPENB_OPTIONS_VERSION 1
typedef struct skv_sim_openb_options {
    unsigned version;          /* SKV_SIM_OPENB_OPTIONS_VERSION */
    const char *policy;        /* a skv_sim_policy() name or a scheduler
                                  built-in selector; NULL = "frag" */
    const char *policy_config; /* appended to the generated selector config
                                  (e.g. "mu=1"); may be NULL */
    uint64_t seed;             /* shuffle, resampling and random ties */
    uint32_t demand_pct;       /* stop once arrived demand passes this % of
                                  capacity; 0 = 130 */
} skv_sim_openb_options;
#define SKV_SIM_OPENB_OPTIONS_INIT {SKV_SIM_OPENB_OPTIONS_VERSION, NULL, NULL, 0, 0}

typedef struct skv_sim_openb_result {
    uint64_t seed;
    skv_qty capacity;          /* milli-GPU */
    size_t n_events;           /* tasks replayed */
    size_t n_placed;
    size_t n_dropped;
    const skv_qty *arrived;    /* after event i: GPU demand arrived so far */
    const skv_qty *allocated;  /* after event i: GPU allocated */
} skv_sim_openb_result;

/* One replay: every pod in a seeded random order, then pods drawn
 * uniformly with replacement until the GPU demand passes demand_pct of
 * capacity; each is submitted and a pass runs; a pod the pass cannot place
 * is cancelled (dropped for good). Unknown policy: SKV_ENOENT. */
SKV_EXTERN int skv_sim_openb_run(skv_sim_openb_result **out,
                                 const skv_sim_openb *w,
                                 const skv_sim_openb_options *opts,
                                 skv_error *err);
SKV_EXTERN void skv_sim_openb_result_free(skv_sim_openb_result *r);
/* Column k of the published table: the mean allocated % over the events
 * whose arrived % rounds (half up) to k. SKV_ENOENT when no event does. */
SKV_EXTERN int skv_sim_openb_column(double *out, const skv_sim_openb_result *r,
                                    int k);

/* ---- openb workload variants (the FGD paper's recipe) ---------------------- */

#define SKV_SIM_OPENB_VARY_VERSION 1
/* Each share is a fraction in [0, 1]; a negative value keeps the list's
 * own. Applied in the order share, multi, spec, cpu (docs/simulator.md). */
typedef struct skv_sim_openb_vary_options {
    unsigned version;          /* SKV_SIM_OPENB_VARY_VERSION */
    double cpu_share;          /* CPU-only pods / all pods (< 1) */
    double share_demand;       /* GPU-sharing pods' share of GPU demand */
    double multi_demand;       /* multi-GPU pods' share of GPU demand (< 1) */
    double spec_share;         /* GPU pods constrained to GPU models */
    uint64_t seed;             /* every draw of the resampling */
} skv_sim_openb_vary_options;
#define SKV_SIM_OPENB_VARY_OPTIONS_INIT {SKV_SIM_OPENB_VARY_VERSION, -1, -1, -1, -1, 0}

/* A new workload: w's nodes and a pod list resampled from w's by the
 * options. SKV_EINVAL for a share out of range or one the list cannot
 * supply (e.g. share > 0 without sharing pods); SKV_EVERSION. */
SKV_EXTERN int skv_sim_openb_vary(skv_sim_openb **out, const skv_sim_openb *w,
                                  const skv_sim_openb_vary_options *opts,
                                  skv_error *err);
/* Write w's pods as an openb pod list (name,cpu_milli,memory_mib,num_gpu,
 * gpu_milli,gpu_spec) that skv_sim_openb_load reads back to the same pods.
 * SKV_EIO (the partial file is removed). */
SKV_EXTERN int skv_sim_openb_write_pods(const skv_sim_openb *w,
                                        const char *path, skv_error *err);

/* ---- generic job traces ----------------------------------------------------- */

typedef struct skv_sim_jobs skv_sim_jobs;

/* A job table with a header row. Columns by name: submit time
 * ("timestamp", "submit_time" or "submit": seconds, or
 * "YYYY-MM-DD HH:MM:SS" UTC), "duration" (seconds), GPUs ("num_gpus" or
 * "gpus"), optional "cpus" (cores, may be fractional), "memory_mib", and
 * the owner ("cluster", "vc" or "user"). Bad rows: SKV_EINVAL naming the
 * line and field. */
SKV_EXTERN int skv_sim_jobs_load(skv_sim_jobs **out, const char *path,
                                 skv_error *err);
SKV_EXTERN int skv_sim_jobs_parse(skv_sim_jobs **out, const char *text,
                                  skv_error *err);
SKV_EXTERN void skv_sim_jobs_free(skv_sim_jobs *j);
SKV_EXTERN size_t skv_sim_jobs_count(const skv_sim_jobs *j);

/* A homogeneous simulated cluster. */
typedef struct skv_sim_node_shape {
    skv_qty cpu;               /* milli-cores */
    skv_qty mem;               /* bytes */
    uint32_t gpus;
} skv_sim_node_shape;

/* "N nodes like FILE.xml": N copies of the machine in an hwloc XML
 * topology (cores, memory, GPU OS devices). */
SKV_EXTERN int skv_sim_node_shape_from_xml(skv_sim_node_shape *out,
                                           const char *xml_path,
                                           skv_error *err);

#define SKV_SIM_JOBS_OPTIONS_VERSION 2
typedef struct skv_sim_jobs_options {
    unsigned version;          /* SKV_SIM_JOBS_OPTIONS_VERSION */
    const char *policy;        /* selector; NULL = "concentrated" */
    const char *sequencer;     /* NULL = "fifo" */
    uint64_t seed;             /* for random selectors */
    uint32_t n_nodes;          /* homogeneous cluster of n_nodes x shape */
    skv_sim_node_shape shape;
    const skv_sim_openb *nodes;/* or: the nodes of an openb node list */
    uint32_t max_reservations; /* backfill reservations (default 1) */
    size_t max_jobs;           /* replay only the first jobs; 0 = all */
    /* CPU/memory for jobs without those columns, per GPU. */
    skv_qty cpu_per_gpu;       /* milli-cores; 0 = none */
    skv_qty mem_per_gpu;       /* bytes; 0 = none */
    /* v2: strict FIFO: jobs reach the scheduler one at a time in submit
     * order, so the oldest waiting job blocks every later one (no
     * backfill; sequencer and max_reservations do not matter). */
    bool strict_fifo;
    /* v2: passes with full_walk set (skv_sched_pass_options): the same
     * decisions, slower; for comparison. */
    bool full_walk;
} skv_sim_jobs_options;
#define SKV_SIM_JOBS_OPTIONS_INIT \
    {SKV_SIM_JOBS_OPTIONS_VERSION, NULL, NULL, 0, 0, {0, 0, 0}, NULL, 1, 0, 0, 0, \
     false, false}

typedef struct skv_sim_owner_stats {
    const char *name;
    size_t n_jobs;
    double gpu_seconds;        /* service received */
    double mean_slowdown;      /* mean of JCT / duration */
} skv_sim_owner_stats;

typedef struct skv_sim_jobs_result {
    size_t n_jobs;             /* replayed */
    size_t n_completed;
    size_t n_rejected;         /* can never fit the cluster */
    double makespan_s;         /* first submit to last completion */
    double utilization;        /* GPU-seconds used / (GPUs x makespan) */
    double queue_mean_s, queue_p50_s, queue_p99_s;
    double jct_mean_s, jct_p50_s, jct_p99_s;
    double jain_fairness;      /* Jain's index over owners' 1/mean slowdown */
    size_t n_passes;
    size_t n_decisions;        /* placements made */
    double pass_seconds;       /* wall time spent inside skv_sched_pass */
    size_t n_owners;
    const skv_sim_owner_stats *owners;
    /* FNV-1a over every placement in order (time, job, and each kernel's
     * agent and device shares): equal digests, equal decisions. */
    uint64_t decisions_digest;
    /* CPU time of the replaying thread inside skv_sched_pass: unlike
     * pass_seconds not inflated when the host is busy. */
    double pass_cpu_seconds;
} skv_sim_jobs_result;

SKV_EXTERN int skv_sim_jobs_run(skv_sim_jobs_result **out,
                                const skv_sim_jobs *j,
                                const skv_sim_jobs_options *opts,
                                skv_error *err);
SKV_EXTERN void skv_sim_jobs_result_free(skv_sim_jobs_result *r);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_SIM_H */
