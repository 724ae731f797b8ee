/* Internal: GPU fragmentation measure (FGD, Weng et al., ATC'23) and the
 * fragmentation-aware selector built on it. Shared by src/sched (the
 * built-in "frag" selector) and src/simpolicy (the paper's FGD baseline).
 *
 * A "workload" is the expected mix of task types (resource shape and
 * popularity). The fragmentation of a node with respect to one task type
 * is the free GPU capacity that type cannot use there: all of it when the
 * type does not fit the node at all (CPU, memory, GPU model or GPUs short),
 * otherwise the free capacity of GPUs holding less than the type's per-GPU
 * demand. The node's expected fragmentation weights that by popularity.
 * Weights are doubles: they are statistics, never resource quantities.
 *
 * Thread-safety: a workload is immutable after skv__frag_workload_new();
 * concurrent readers are fine.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SELECTOR_FRAG_H
#define SKV_SELECTOR_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/sched.h"
#include "sokovan/slots.h"

#define SKV__FRAG_MAX_GPU 64    /* GPUs per node the measure handles */
#define SKV__FRAG_GPU_UNIT 1000 /* milli-GPU in one whole GPU */

/* One task shape. gpu is the per-GPU demand in milli-GPU (<= 1000);
 * ngpu 0 is a CPU-only task, ngpu 1 with gpu < 1000 a sharing task. */
typedef struct skv__frag_shape {
    skv_qty cpu;       /* milli-cores */
    skv_qty mem;       /* bytes */
    skv_qty gpu;       /* milli-GPU per GPU */
    int ngpu;
    bool any_model;    /* no model constraint */
    uint64_t models;   /* accepted model bits when !any_model */
} skv__frag_shape;

/* A node as the measure sees it. */
typedef struct skv__frag_node {
    skv_qty cpu_free;
    skv_qty mem_free;
    int model;         /* bit index 0..63, or -1 for none/unknown */
    int ngpu;
    const skv_qty *gpu_free; /* ngpu entries, milli-GPU */
} skv__frag_node;

typedef struct skv__frag_workload skv__frag_workload;

/* Build a workload from shapes with non-negative weights (normalised
 * internally; identical shapes are merged). */
int skv__frag_workload_new(skv__frag_workload **out,
                           const skv__frag_shape *shapes,
                           const double *weights, size_t n, skv_error *err);
void skv__frag_workload_free(skv__frag_workload *w);
size_t skv__frag_workload_size(const skv__frag_workload *w);
/* Index of the merged type equal to shape, or -1. */
long skv__frag_workload_find(const skv__frag_workload *w,
                             const skv__frag_shape *shape);

/* Whether shape fits node (CPU, memory, model and GPUs). */
bool skv__frag_fits(const skv__frag_node *node, const skv__frag_shape *shape);

/* Expected fragmentation of node (milli-GPU, weighted by popularity). */
double skv__frag_measure(const skv__frag_workload *w,
                         const skv__frag_node *node);

/* Candidate placement of shape on node: for a sharing task, which GPU
 * (index into gpu_free); for whole-GPU tasks the GPUs taken are fully free
 * ones, which are interchangeable, so gpu is -1. */
typedef struct skv__frag_choice {
    int gpu;
    double delta;      /* fragmentation after - before */
    skv_qty gpu_left;  /* free milli-GPU on the node after placing */
} skv__frag_choice;

/* Best (lowest-delta) placement of shape on node given its current
 * measure `before`. Returns false when shape does not fit. Ties between
 * GPUs go to the GPU with the least free capacity (then lowest index). */
bool skv__frag_best(skv__frag_choice *out, const skv__frag_workload *w,
                    const skv__frag_node *node, const skv__frag_shape *shape,
                    double before);

/* ---- seeded PRNG (splitmix64): tiny, fast, reproducible everywhere ---- */

static inline uint64_t skv__rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias (n > 0). */
static inline uint64_t skv__rng_below(uint64_t *state, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = skv__rng_next(state);
    while (x >= limit);
    return x % n;
}

/* ---- views (selector_frag_view.c) ---- */

/* Slot indexes in the scheduler's slot table, resolved once per table. */
typedef struct skv__frag_slots {
    const char *const *names;   /* the table they were resolved for */
    size_t n;
    int cpu, mem, whole, share; /* -1 when absent */
} skv__frag_slots;

void skv__frag_slots_resolve(skv__frag_slots *sl, const skv_sched_agent_view *a);
/* gpu_buf: SKV__FRAG_MAX_GPU entries. SKV_ERANGE with too many devices. */
int skv__frag_view_node(skv__frag_node *out, skv_qty *gpu_buf,
                        const skv__frag_slots *sl, int model,
                        const skv_sched_agent_view *a);
/* The kernel as a shape (no model constraint: the scheduler checked it). */
void skv__frag_view_shape(skv__frag_shape *out, const skv__frag_slots *sl,
                          const skv_sched_kernel_view *k);
/* Device the map gives a sharing kernel; -1 when it takes no share, -2
 * when it does not fit or the map would split the share over devices. */
int skv__frag_view_trial_gpu(const skv_sched_agent_view *a,
                             const skv_sched_kernel_view *k);
/* Changes whenever the agent's use changes (cache validation: frees are
 * not reported to selectors). */
uint64_t skv__frag_view_fingerprint(const skv_sched_agent_view *a);

/* ---- the selector (selector_frag.c) ---- */

typedef enum skv__frag_ties {
    SKV__FRAG_TIES_PACK = 0,    /* least free GPU after placing, then index */
    SKV__FRAG_TIES_RANDOM = 1,  /* seeded random (Kubernetes-like) */
    SKV__FRAG_TIES_INDEX = 2    /* lowest agent index */
} skv__frag_ties;

typedef struct skv__frag_params {
    bool weight_by_demand; /* type weight = count x (GPU demand)^exp */
    double exp;
    double mu;             /* penalty on GPU left without CPU/memory */
    skv__frag_ties ties;
    uint64_t seed;
    double pack;           /* bonus (milli-GPU) per packing tier: onto a
                              partly used GPU 2, an active agent 1 */
    double scarcity;       /* weight of the model-scarcity cost (needs
                              supply=MODEL:MILLI_GPU in the config) */
    bool scan_nodes;       /* score every node (the reference scan) instead
                              of the class index (selector_frag_index.c) */
    int levels;            /* > 0: the score is FGD's published integer
                              floor(levels * sigmoid(-delta / 1000)), so
                              nearby deltas tie (0: the exact delta) */
    double typical;        /* > 0: only the most popular types covering
                              this % of the tasks form the workload (the
                              published simulator's "typical pods") */
    double rarity;         /* > 0: a type's weight is multiplied by
                              (all GPUs / GPUs of the nodes that can hold
                              it)^rarity (needs host= entries) */
} skv__frag_params;

/* The "frag" defaults and the paper's FGD settings. */
extern const skv__frag_params skv__frag_params_frag;
extern const skv__frag_params skv__frag_params_fgd;

/* create() for a selector with the given defaults; config (may be NULL)
 * overrides them and supplies the workload (see docs/simulator.md). */
int skv__frag_selector_create(void **state, const char *config,
                              const skv__frag_params *defaults, skv_error *err);
void skv__frag_selector_destroy(void *state);
int64_t skv__frag_selector_score(void *state, const skv_sched_agent_view *agent,
                                 const skv_sched_kernel_view *kernel);

/* The score without its random tie-break part: for ties=random the
 * score is this plus (draw & 0xFFFFF), one draw of the selector's generator
 * per scored candidate in the order the pass scores them; otherwise it is
 * the score. Same REJECTs as the score; draws nothing. */
int64_t skv__frag_selector_base(void *state, const skv_sched_agent_view *agent,
                                const skv_sched_kernel_view *kernel);
/* Whether sel is a fragmentation selector (frag, fgd) whose state asks for
 * the class index, and that state's tie mode and generator. */
bool skv__frag_selector_indexed(const skv_sched_selector *sel, void *state);
skv__frag_ties skv__frag_selector_ties(void *state);
uint64_t *skv__frag_selector_rng(void *state);
/* The n-th draw (0-based) after the generator state: splitmix64 adds a
 * constant per draw, so a draw's value depends only on its position. */
static inline uint64_t skv__rng_at(uint64_t state, uint64_t n)
{
    uint64_t st = state + n * 0x9e3779b97f4a7c15ull;
    return skv__rng_next(&st);
}

/* The built-in "frag" selector table (to be registered by sched.c with the
 * other built-ins). */
const skv_sched_selector *skv__sched_selector_frag(void);

/* Like skv__frag_best for a given GPU (the one the allocation map would
 * give a sharing task; ignored for other tasks). False when it does not fit. */
bool skv__frag_delta(skv__frag_choice *out, const skv__frag_workload *w,
                     const skv__frag_node *node, const skv__frag_shape *shape,
                     int gpu, double before);

#endif
