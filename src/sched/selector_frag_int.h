/* Private to the fragmentation selectors: configuration and state.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SELECTOR_FRAG_INT_H
#define SKV_SELECTOR_FRAG_INT_H

#include "selector_frag.h"

typedef struct skv__frag_cfg {
    skv__frag_params params;
    char *models[64];          /* model name of each bit */
    int nmodels;
    skv_qty supply[64];        /* GPU capacity of each model (milli) */
    skv__frag_shape *shapes;   /* workload types as given */
    double *weights;           /* their task counts */
    size_t ntypes, cap;
    skv__frag_shape *hosts;    /* node shapes of the cluster (host=): cpu,
                                  mem, ngpu = GPUs, models = its model bit */
    double *host_count;
    size_t nhosts, host_cap;
} skv__frag_cfg;

int skv__frag_cfg_parse(skv__frag_cfg *c, const char *config, skv_error *err);
void skv__frag_cfg_fini(skv__frag_cfg *c);

/* Per-agent cache: the measure before placing, valid while the agent's
 * fingerprint is unchanged. */
typedef struct skv__frag_agent {
    uint64_t fp;
    const char *model_ptr;     /* gpu_model string the bit was found for */
    int model;
    bool valid;
    double before;
} skv__frag_agent;

typedef struct skv__frag_state {
    skv__frag_cfg cfg;
    skv__frag_workload *w;
    skv__frag_slots slots;
    skv__frag_agent *agents;
    size_t nagents;
    uint64_t rng;
    /* per model: popularity of the constrained types that accept it over
     * their GPU supply, times the total supply (1 = average pressure) */
    double pressure[64];
} skv__frag_state;

#endif
