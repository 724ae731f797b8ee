/* Private to src/sim: what the job replay hands to its statistics.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SIM_JOBS_INT_H
#define SKV_SIM_JOBS_INT_H

#include "sim_int.h"

typedef struct skv__jstat {
    const skv_sim_jobs *j;
    const uint32_t *order;     /* replayed jobs */
    size_t n;
    const int64_t *start, *end;/* per job index; end -1 = never ran */
    uint64_t total_gpus;
    size_t passes, decisions, rejected;
    double pass_s;
    uint64_t digest;
    double pass_cpu_s;
} skv__jstat;

int skv__jobs_stats(skv_sim_jobs_result **out, const skv__jstat *st,
                    skv_error *err);

#endif
