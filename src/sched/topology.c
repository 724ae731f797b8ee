/* An agent's layout (skv_sched_agent_topology) and the whole-device choice
 * it drives: the node mapper's affinity algorithm (skv_affinity.h) run over
 * the manager's view of the agent, so a multi-GPU kernel gets the closest
 * free GPUs on the fewest NUMA nodes, exactly as the node mapper on that
 * machine would choose them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"
#include "skv_affinity.h"
#include "sokovan/topo.h"

static int check_links(const skv__agent *a, const uint8_t *links, size_t n,
                       skv_error *err)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (i != j && (links[i * n + j] < SKV_TOPO_LINK_PIX ||
                           links[i * n + j] > SKV_TOPO_LINK_SYS))
                return skv__err(err, SKV_EINVAL, "agent '%s' topology: link "
                                "of devices %zu and %zu is %u (1..5 allowed)",
                                a->id, i, j, links[i * n + j]);
    return 0;
}

int skv__sched_agent_topology(skv__agent *a, const skv_sched_agent_spec *sp,
                              skv_error *err)
{
    const skv_sched_agent_topology *t = sp->version >= 2 ? sp->topology
                                                         : NULL;
    size_t n = a->d.ndev;
    if (!t || n == 0)
        return 0;
    if (!t->device_numa)
        return skv__err(err, SKV_EINVAL, "agent '%s' topology: device_numa "
                        "is NULL", a->id);
    for (size_t i = 0; i < n; i++)
        if (t->device_numa[i] < -1 || t->device_numa[i] > SKV_ALLOC_NUMA_MAX)
            return skv__err(err, SKV_EINVAL, "agent '%s' topology: device %zu "
                            "NUMA node %d out of range", a->id, i,
                            (int)t->device_numa[i]);
    if (t->links && check_links(a, t->links, n, err))
        return SKV_EINVAL;
    a->dnuma = skv__calloc(n, sizeof(*a->dnuma));
    a->links = t->links ? skv__calloc(n * n, 1) : NULL;
    a->nvbw = t->nvlink_mbps ? skv__calloc(n * n, sizeof(*a->nvbw)) : NULL;
    if (!a->dnuma || (t->links && !a->links) || (t->nvlink_mbps && !a->nvbw))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        a->dnuma[i] = t->device_numa[i];
    if (a->links)
        memcpy(a->links, t->links, n * n);
    if (a->nvbw)
        memcpy(a->nvbw, t->nvlink_mbps, n * n * sizeof(*a->nvbw));
    return 0;
}

void skv__sched_agent_topology_free(skv__agent *a)
{
    skv__free(a->dnuma);
    skv__free(a->links);
    skv__free(a->nvbw);
    a->dnuma = NULL;
    a->links = NULL;
    a->nvbw = NULL;
}

/* Without a link matrix the node mapper judges by NUMA node too. */
static int link_cb(const void *ctx, size_t x, size_t y)
{
    const skv__agent *a = ctx;
    if (a->links)
        return a->links[x * a->d.ndev + y];
    return a->dnuma[x] >= 0 && a->dnuma[x] == a->dnuma[y]
               ? SKV_TOPO_LINK_NODE
               : SKV_TOPO_LINK_SYS;
}

static int64_t bw_cb(const void *ctx, size_t x, size_t y)
{
    const skv__agent *a = ctx;
    return a->nvbw[x * a->d.ndev + y];
}

bool skv__sched_topo_pick(const skv__agent *a, uint8_t mslot, size_t k,
                          size_t *pick)
{
    size_t devs[SKV_SCHED_DEVICES_MAX], pool[SKV_SCHED_DEVICES_MAX],
        trial[SKV_SCHED_DEVICES_MAX];
    int64_t acc[SKV_SCHED_DEVICES_MAX], accbw[SKV_SCHED_DEVICES_MAX];
    if (!a->dnuma || !a->map)
        return false;
    size_t nfree = 0;
    for (size_t d = 0; d < a->d.ndev; d++)
        if (skv_alloc_map_available(a->map, mslot, d) >= SKV_QTY_SCALE)
            devs[nfree++] = d;
    /* The manager does not track cores per NUMA node (the agent places
     * them after the devices, near them): no rest_fits. */
    skv__aff f = {a->dnuma, link_cb, a->nvbw ? bw_cb : NULL, NULL, a,
                  devs, pool, trial, pick, acc, accbw};
    return skv__aff_pick(&f, nfree, k);
}
