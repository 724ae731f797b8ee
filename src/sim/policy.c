/* The placement policies the simulator offers (selector plugins).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sim_int.h"
#include "../simpolicy/simpolicy.h"

typedef const skv_sched_selector *(*table_fn)(void);

static const table_fn tables[] = {
    skv__simpol_random, skv__simpol_dotprod, skv__simpol_gpuclustering,
    skv__simpol_gpupacking, skv__simpol_bestfit, skv__simpol_fgd,
    skv__sched_selector_frag};

size_t skv_sim_policy_count(void)
{
    return SKV__ARRAY_LEN(tables);
}

const char *skv_sim_policy_name(size_t i)
{
    return i < SKV__ARRAY_LEN(tables) ? tables[i]()->name : NULL;
}

const skv_sched_selector *skv_sim_policy(const char *name)
{
    for (size_t i = 0; name && i < SKV__ARRAY_LEN(tables); i++)
        if (strcmp(tables[i]()->name, name) == 0)
            return tables[i]();
    return NULL;
}
