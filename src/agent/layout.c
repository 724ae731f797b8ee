/* The machine's layout sent with agent.register: NUMA nodes (PUs, cores,
 * memory) and how close each pair of registered accelerators is (PCIe link
 * class and NVLink bandwidth, from the topology the node mapper uses), so
 * the manager's per-agent map chooses devices as the node mapper would.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

static size_t cores_on(const skv_topo *t, int node)
{
    size_t n = 0;
    for (size_t i = 0; i < skv_topo_core_count(t); i++)
        n += skv_topo_core_at(t, i)->numa_node == node;
    return n;
}

static int numa_nodes(skv_proto_agent_register *m, const skv_topo *t,
                      skv_error *err)
{
    size_t n = skv_topo_numa_count(t);
    m->numa_nodes = skv__calloc(n + 1, sizeof(*m->numa_nodes));
    if (!m->numa_nodes)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; i < n; i++) {
        const skv_topo_numa *x = skv_topo_numa_at(t, i);
        m->numa_nodes[i] = (skv_proto_numa_node){
            x->id, (char *)x->cpuset, (uint32_t)cores_on(t, x->id),
            x->memory_bytes};
    }
    m->n_numa_nodes = n;
    return 0;
}

/* The topology accelerator behind a registered device (by PCI bus id, as
 * the plugins report it); NULL when the plugin gives none. */
static const skv_topo_accel *accel_of(const skv_agent *a,
                                      const skv_proto_device *d)
{
    return d->bus_id && *d->bus_id ? skv_topo_accel_find(a->topo, d->bus_id)
                                   : NULL;
}

static int links(skv_proto_agent_register *m, const skv_agent *a,
                 skv_error *err)
{
    const skv_proto_device *d = m->devices;
    size_t n = m->n_devices;
    m->links = skv__calloc(n * n / 2 + 1, sizeof(*m->links));
    if (!m->links)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; i < n; i++) {
        const skv_topo_accel *x = accel_of(a, &d[i]);
        for (size_t j = i + 1; x && j < n; j++) {
            const skv_topo_accel *y = accel_of(a, &d[j]);
            if (!y || x == y)
                continue;
            skv_topo_link l = skv_topo_accel_link(a->topo, x->index,
                                                  y->index);
            m->links[m->n_links++] = (skv_proto_device_link){
                d[i].id, d[j].id, (char *)skv_topo_link_name(l),
                skv_topo_accel_nvlink_bw(a->topo, x->index, y->index)};
        }
    }
    return 0;
}

int skv__agent_layout(skv_proto_agent_register *m, const skv_agent *a,
                      skv_error *err)
{
    int rc = numa_nodes(m, a->topo, err);
    return rc ? rc : links(m, a, err);
}

void skv__agent_layout_free(skv_proto_agent_register *m)
{
    skv__free(m->numa_nodes);
    skv__free(m->links);
    m->numa_nodes = NULL;
    m->links = NULL;
}
