/* An agent on an hwloc XML (--topology-xml) places kernels on the XML's
 * machine: the node mapper hands out the XML's cores and NUMA nodes, which
 * this host may not have. The cgroup must name CPUs and memory nodes that
 * exist, so each XML PU maps to the host PU of the same rank (modulo the
 * host's count) and each XML node to the host node of the same rank; the
 * placement as made (the XML's lists) is kept in the container's
 * environment (SOKOVAN_TOPOLOGY_CPUSET / _MEMS) so it can be checked.
 * On the live topology nothing is mapped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

bool skv__agent_topo_is_xml(const skv_agent *a)
{
    return strncmp(skv_topo_source(a->topo), "live", 4) != 0;
}

/* The CPUs this process may use, ascending. */
static size_t host_cpus(int *out, size_t cap)
{
    cpu_set_t set;
    size_t n = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set))
            out[n++] = c;
    return n;
}

/* The host's memory nodes (node 0 alone when the kernel lists none). */
static int host_nodes(int **out, size_t *n, skv_error *err)
{
    char buf[256];
    size_t len;
    if (skv__sys_read("/sys/devices/system/node/online", buf, sizeof(buf),
                      &len, NULL) != 0)
        snprintf(buf, sizeof(buf), "0");
    buf[strcspn(buf, "\n")] = '\0';
    return skv_topo_cpulist_parse(out, n, buf, err);
}

typedef struct rank_map {
    const int *to;          /* host ids */
    size_t nto;
} rank_map;

static size_t pu_rank(const skv_topo *t, int pu)
{
    for (size_t i = 0; i < skv_topo_pu_count(t); i++)
        if (skv_topo_pu_at(t, i)->os_index == pu)
            return i;
    return (size_t)pu;
}

static size_t node_rank(const skv_topo *t, int node)
{
    for (size_t i = 0; i < skv_topo_numa_count(t); i++)
        if (skv_topo_numa_at(t, i)->id == node)
            return i;
    return (size_t)node;
}

/* list (the XML's ids) -> the host's ids of the same ranks, as a list. */
static int map_list(char **out, const skv_agent *a, const char *list,
                    bool nodes, const rank_map *m, skv_error *err)
{
    int *ids = NULL;
    size_t n = 0;
    int rc = skv_topo_cpulist_parse(&ids, &n, list, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t r = nodes ? node_rank(a->topo, ids[i])
                         : pu_rank(a->topo, ids[i]);
        ids[i] = m->to[r % m->nto];
    }
    if (rc == 0)
        rc = skv_topo_cpulist_format(out, ids, n, err);
    skv_free(ids);
    return rc;
}

int skv__agent_host_cpuset(const skv_agent *a, const char *cpus,
                           const char *mems, char **cpus_out, char **mems_out,
                           skv_error *err)
{
    int pus[CPU_SETSIZE];
    int *nodes = NULL;
    size_t nn = 0;
    rank_map cm = {pus, host_cpus(pus, CPU_SETSIZE)};
    *cpus_out = *mems_out = NULL;
    if (cm.nto == 0)
        return skv__err(err, SKV_ESTATE, "agent: no CPU to map the "
                        "topology's cores to");
    int rc = host_nodes(&nodes, &nn, err);
    rank_map mm = {nodes, nn};
    if (rc == 0 && nn == 0)
        rc = skv__err(err, SKV_ESTATE, "agent: no memory node on this host");
    if (rc == 0 && cpus)
        rc = map_list(cpus_out, a, cpus, false, &cm, err);
    if (rc == 0 && mems)
        rc = map_list(mems_out, a, mems, true, &mm, err);
    skv_free(nodes);
    if (rc) {
        skv_free(*cpus_out);
        skv_free(*mems_out);
        *cpus_out = *mems_out = NULL;
    }
    return rc;
}
