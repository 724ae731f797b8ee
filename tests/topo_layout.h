/* An hwloc XML's NVIDIA GPUs as a scheduler layout (skv_sched_agent_topology)
 * for the scheduler suite and bench/topo: device i is the i-th compute
 * accelerator with the "cuda" prefix (the mock plugin's topology=1 order),
 * links and NVLink bandwidth from the topology. Header-only, plain C.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_TOPO_LAYOUT_H
#define SKV_TEST_TOPO_LAYOUT_H

#include <string.h>

#include "sokovan/sched.h"
#include "sokovan/topo.h"

#define TL_MAX 64

typedef struct topo_layout {
    size_t n;
    size_t accel[TL_MAX];           /* topology accelerator index */
    int32_t numa[TL_MAX];
    uint8_t links[TL_MAX * TL_MAX];
    uint32_t nvbw[TL_MAX * TL_MAX];
    skv_sched_agent_topology t;
} topo_layout;

static inline void topo_layout_fill(topo_layout *l, const skv_topo *topo)
{
    memset(l, 0, sizeof(*l));
    for (size_t i = 0; i < skv_topo_accel_count(topo) && l->n < TL_MAX; i++) {
        const skv_topo_accel *a = skv_topo_accel_at(topo, i);
        const char *p = skv_topo_accel_prefix(a);
        if (a->compute && p && strcmp(p, "cuda") == 0) {
            l->accel[l->n] = i;
            l->numa[l->n++] = a->numa_node;
        }
    }
    for (size_t i = 0; i < l->n; i++)
        for (size_t j = 0; j < l->n; j++) {
            uint64_t bw = skv_topo_accel_nvlink_bw(topo, l->accel[i],
                                                   l->accel[j]);
            l->links[i * l->n + j] = (uint8_t)skv_topo_accel_link(
                topo, l->accel[i], l->accel[j]);
            l->nvbw[i * l->n + j] = bw > UINT32_MAX ? UINT32_MAX
                                                    : (uint32_t)bw;
        }
    l->t.device_numa = l->numa;
    l->t.links = l->links;
    l->t.nvlink_mbps = l->nvbw;
}

/* The link class of devices a, b of the layout. */
static inline int topo_layout_link(const topo_layout *l, size_t a, size_t b)
{
    return l->links[a * l->n + b];
}

#endif
