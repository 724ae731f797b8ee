/* Private to src/sim: CSV reading and the loaded traces.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SIM_INT_H
#define SKV_SIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skv_internal.h"
#include "sokovan/sim.h"

#define SKV__CSV_MAX_FIELDS 64

/* A CSV text split in place, one row at a time. No quoting beyond
 * stripping a pair of double quotes around a field; no embedded commas. */
typedef struct skv__csv {
    char *buf;                 /* owned copy of the text */
    char *pos;
    const char *source;        /* file name for messages */
    size_t line;               /* 1-based number of the current row */
    size_t nf;
    char *f[SKV__CSV_MAX_FIELDS];
    size_t nheader;
    char *header[SKV__CSV_MAX_FIELDS];
} skv__csv;

int skv__csv_open(skv__csv *c, const char *text, const char *source,
                  skv_error *err);
/* Read the whole file (any path, not a /sys file) into a new buffer. */
int skv__csv_read_file(char **out, const char *path, skv_error *err);
void skv__csv_close(skv__csv *c);
/* Next non-empty row: 1, 0 at the end, < 0 on error (too many fields). */
int skv__csv_next(skv__csv *c, skv_error *err);
/* Column of the first header name in the NULL-terminated list, or -1. */
int skv__csv_col(const skv__csv *c, const char *const *names);
/* Typed fields; errors name source, line and column. */
int skv__csv_i64(int64_t *out, const skv__csv *c, int col, int64_t min,
                 int64_t max, skv_error *err);
int skv__csv_milli(int64_t *out, const skv__csv *c, int col, skv_error *err);
const char *skv__csv_str(const skv__csv *c, int col);

/* ---- openb ---- */
typedef struct skv__ob_node {
    char *name;
    skv_qty cpu, mem;          /* milli-cores, bytes */
    uint32_t gpus;
    int model;                 /* index into models */
} skv__ob_node;

typedef struct skv__ob_pod {
    skv_qty cpu, mem;
    uint32_t ngpu;
    skv_qty gpu;               /* per GPU, milli, clamped to 1000 */
    bool any_model;
    uint64_t models;           /* bits into models */
    bool unknown_model;        /* gpu_spec names no model of the cluster */
} skv__ob_pod;

struct skv_sim_openb {
    skv__ob_node *nodes;
    size_t nnodes;
    skv__ob_pod *pods;
    size_t npods;
    char *models[64];
    int nmodels;
    skv_qty capacity;          /* milli-GPU */
};

static inline skv_qty skv__ob_demand(const skv__ob_pod *p)
{
    return (skv_qty)p->ngpu * p->gpu;
}

/* The selector config for the FGD-style policies: the pod mix. Without
 * with_mem the types carry no memory demand (the published FGD's typical
 * pods are keyed by CPU and GPU only, and its measure ignores memory). */
int skv__ob_workload_config(char **out, const skv_sim_openb *w, uint64_t seed,
                            bool with_mem, const char *extra, skv_error *err);

/* ---- generic jobs ---- */
typedef struct skv__job {
    int64_t submit_ms;
    int64_t duration_ms;
    uint32_t gpus;
    skv_qty cpu;               /* milli-cores; -1 = not given */
    skv_qty mem;               /* bytes; -1 = not given */
    uint32_t owner;            /* index into owners */
} skv__job;

struct skv_sim_jobs {
    skv__job *jobs;
    size_t n;
    char **owners;
    size_t nowners;
};

/* ---- scheduler plumbing (sim_sched.c) ---- */
#define SKV__SIM_GROUP "sim"
/* A scheduler with the simulator's policies registered and one group
 * "sim" using policy (selector) with config, and sequencer. */
/* skv_sim_openb_run over at most the first ntrace events that records,
 * for each, skv__sim_placement_digest of its placement (0: dropped, or an
 * event that asks for nothing). For comparing two runs decision by
 * decision (tests/test_frag_equiv.c). */
int skv__sim_openb_trace(skv_sim_openb_result **out, uint64_t *trace,
                         size_t ntrace, const skv_sim_openb *w,
                         const skv_sim_openb_options *opts, skv_error *err);
uint64_t skv__sim_placement_digest(const skv_sched_placement *p);

int skv__sim_sched_new(skv_sched **out, const char *policy, const char *config,
                       const char *sequencer, uint32_t max_reservations,
                       skv_error *err);
/* One agent: cpu (milli) and mem (bytes) pooled, gpus shareable devices
 * (slots cuda.device / cuda.shares), GPU model (may be NULL). */
int skv__sim_add_node(skv_sched *s, const char *id, skv_qty cpu, skv_qty mem,
                      uint32_t gpus, const char *model, skv_error *err);
/* A kernel request: cpu, mem and either ngpu whole GPUs or a share of one
 * (gpu < 1000 with ngpu 1). Zero entries are left out. */
int skv__sim_request(skv_slots **out, skv_qty cpu, skv_qty mem, uint32_t ngpu,
                     skv_qty gpu, skv_error *err);

/* Monotonic wall clock in seconds (measurement only, never decisions). */
double skv__sim_now(void);
/* CPU time of the calling thread, seconds (not inflated by a busy host). */
double skv__sim_cpu_now(void);

#endif
