/* The node mapper: building it over a topology and plugins, and queries.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "node_internal.h"

const char *skv_node_policy_name(skv_node_policy policy)
{
    switch (policy) {
    case SKV_NODE_PREFER_SINGLE: return "prefer-single-node";
    case SKV_NODE_INTERLEAVED: return "interleaved";
    case SKV_NODE_POLICY_DEFAULT: return "default";
    }
    return "?";
}

int skv_node_policy_parse(skv_node_policy *out, const char *text,
                          skv_error *err)
{
    if (!out || !text)
        return skv__err(err, SKV_EINVAL, "skv_node_policy_parse: %s is NULL",
                        out ? "text" : "out");
    if (strcmp(text, "prefer-single-node") == 0)
        *out = SKV_NODE_PREFER_SINGLE;
    else if (strcmp(text, "interleaved") == 0)
        *out = SKV_NODE_INTERLEAVED;
    else
        return skv__err(err, SKV_EINVAL, "unknown NUMA policy '%.64s' "
                        "(prefer-single-node, interleaved)", text);
    return 0;
}

void skv_node_free(skv_node *node)
{
    if (!node)
        return;
    for (size_t i = 0; i < node->np; i++) {
        skv_alloc_map_free(node->p[i].map);
        skv__free(node->p[i].accel);
        skv__free(node->p[i].numa);
        skv__free(node->p[i].pci);
    }
    skv__free(node->p);
    skv_slot_registry_free(node->reg);
    skv__free(node->want);
    skv__free(node->devs);
    skv__free(node->pick);
    skv__free(node->trial);
    skv__free(node->acc);
    skv__free(node->accbw);
    skv__free(node->pool);
    skv__free(node->ints);
    skv__free(node);
}

/* Which accelerator of the topology each device is (by PCI bus id). */
static int link_devices(skv_node *n, skv__node_plugin *p, skv_error *err)
{
    size_t nd = skv_alloc_map_device_count(p->map);
    p->accel = skv__calloc(nd + 1, sizeof(int));
    p->pci = skv__calloc(nd + 1, sizeof(char *));
    p->numa = skv__calloc(nd + 1, sizeof(int));
    if (!p->accel || !p->pci || !p->numa)
        return skv__err(err, SKV_ENOMEM, "node: out of memory");
    const skv_device_list *list = skv_plugin_devices(p->plugin);
    for (size_t d = 0; d < nd; d++) {
        const skv_device *dev =
            skv_device_list_find(list, skv_alloc_map_device_id(p->map, d));
        const char *pci = dev && dev->pci_bus_id ? dev->pci_bus_id : "";
        const skv_topo_accel *a = *pci ? skv_topo_accel_find(n->topo, pci)
                                       : NULL;
        p->pci[d] = pci;
        p->numa[d] = skv_alloc_map_device_numa(p->map, d);
        p->accel[d] = a ? (int)a->index : -1;
    }
    return 0;
}

/* The role of a plugin from the slots of its map. */
static int assign_role(skv_node *n, size_t i, skv_error *err)
{
    skv__node_plugin *p = &n->p[i];
    size_t s;
    p->role = SKV__NODE_ACCEL;
    if (skv_alloc_map_slot_index(p->map, "cpu", &s) == 0) {
        if (n->cpu >= 0)
            return skv__err(err, SKV_EINVAL, "node: plugins '%s' and '%s' "
                            "both offer 'cpu'",
                            skv_plugin_name(n->p[n->cpu].plugin),
                            skv_plugin_name(p->plugin));
        p->role = SKV__NODE_CPU;
        n->cpu = (long)i;
        n->cpu_slot = s;
    } else if (skv_alloc_map_slot_index(p->map, "mem", &s) == 0) {
        if (n->mem >= 0)
            return skv__err(err, SKV_EINVAL, "node: plugins '%s' and '%s' "
                            "both offer 'mem'",
                            skv_plugin_name(n->p[n->mem].plugin),
                            skv_plugin_name(p->plugin));
        p->role = SKV__NODE_MEM;
        n->mem = (long)i;
        n->mem_slot = s;
    }
    return link_devices(n, p, err);
}

/* The cpu map is the topology's cores when device i is core i. */
static bool cpu_matches_topo(const skv_node *n)
{
    if (n->cpu < 0)
        return false;
    const skv_alloc_map *m = n->p[n->cpu].map;
    size_t nd = skv_alloc_map_device_count(m);
    for (size_t d = 0; d < nd; d++) {
        char id[24];
        snprintf(id, sizeof(id), "%zu", d);
        const skv_topo_core *c = skv_topo_core_at(n->topo, d);
        if (!c || strcmp(id, skv_alloc_map_device_id(m, d)) != 0 ||
            c->numa_node != skv_alloc_map_device_numa(m, d))
            return false;
    }
    return true;
}

static int scratch_init(skv_node *n, skv_error *err)
{
    size_t maxd = 1;
    for (size_t i = 0; i < n->np; i++) {
        size_t nd = skv_alloc_map_device_count(n->p[i].map);
        maxd = nd > maxd ? nd : maxd;
    }
    size_t pus = skv_topo_pu_count(n->topo);
    size_t ints = (pus > maxd ? pus : maxd) + 1;
    n->max_devs = maxd;
    n->want = skv__calloc(n->np * SKV_ALLOC_MAP_SLOTS_MAX + 1, sizeof(skv_qty));
    n->devs = skv__calloc(maxd, sizeof(size_t));
    n->pick = skv__calloc(maxd, sizeof(size_t));
    n->trial = skv__calloc(maxd, sizeof(size_t));
    n->pool = skv__calloc(maxd, sizeof(size_t));
    n->acc = skv__calloc(maxd, sizeof(int64_t));
    n->accbw = skv__calloc(maxd, sizeof(int64_t));
    n->ints = skv__calloc(ints, sizeof(int));
    if (!n->want || !n->devs || !n->pick || !n->trial || !n->acc ||
        !n->ints || !n->pool || !n->accbw)
        return skv__err(err, SKV_ENOMEM, "node: out of memory");
    return 0;
}

static int add_plugin(skv_node *n, skv_plugin *pl, skv_error *err)
{
    if (!pl)
        return skv__err(err, SKV_EINVAL, "node: plugin %zu is NULL", n->np);
    int rc = skv_plugin_declare_slots(pl, n->reg, err);
    skv_alloc_map *m = NULL;
    if (rc == 0)
        rc = skv_plugin_create_map(pl, &m, NULL, n->reg, err);
    if (rc)
        return rc;
    n->p[n->np++] = (skv__node_plugin){pl, m, SKV__NODE_ACCEL, NULL, NULL,
                                       NULL};
    return assign_role(n, n->np - 1, err);
}

int skv_node_new(skv_node **out, const skv_topo *topo,
                 skv_plugin *const *plugins, size_t nplugins, skv_error *err)
{
    if (!out || !topo || (!plugins && nplugins))
        return skv__err(err, SKV_EINVAL, "skv_node_new: %s is NULL",
                        !out ? "out" : !topo ? "topo" : "plugins");
    skv_node *n = skv__calloc(1, sizeof(*n));
    if (!n)
        return skv__err(err, SKV_ENOMEM, "node: out of memory");
    n->topo = topo;
    n->cpu = n->mem = -1;
    int rc = skv_slot_registry_new(&n->reg, err);
    if (rc == 0 && !(n->p = skv__calloc(nplugins + 1, sizeof(*n->p))))
        rc = skv__err(err, SKV_ENOMEM, "node: out of memory");
    for (size_t i = 0; rc == 0 && i < nplugins; i++)
        rc = add_plugin(n, plugins[i], err);
    if (rc == 0)
        rc = scratch_init(n, err);
    if (rc) {
        skv_node_free(n);
        return rc;
    }
    n->cpu_is_topo = cpu_matches_topo(n);
    *out = n;
    return 0;
}

const skv_topo *skv_node_topo(const skv_node *node)
{
    return node ? node->topo : NULL;
}

const skv_slot_registry *skv_node_registry(const skv_node *node)
{
    return node ? node->reg : NULL;
}

size_t skv_node_plugin_count(const skv_node *node)
{
    return node ? node->np : 0;
}

skv_plugin *skv_node_plugin_at(const skv_node *node, size_t index)
{
    return node && index < node->np ? node->p[index].plugin : NULL;
}

const skv_alloc_map *skv_node_map(const skv_node *node, size_t index)
{
    return node && index < node->np ? node->p[index].map : NULL;
}
