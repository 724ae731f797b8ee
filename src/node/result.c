/* The node mapper: what an allocation hands out (amounts, cpuset, memory
 * nodeset, container configuration) and its getters.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "node_internal.h"

static int fill_amounts(skv_node_placement *a, const skv_node *n,
                        skv_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < a->nres; i++)
        total += skv_alloc_result_count(a->res[i].r);
    a->amounts = skv__calloc(total + 1, sizeof(*a->amounts));
    if (!a->amounts)
        return skv__err(err, SKV_ENOMEM, "node allocation: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < a->nres; i++) {
        const skv__node_plugin *p = &n->p[a->res[i].plugin];
        skv_alloc_entry e;
        for (size_t j = 0; skv_alloc_result_at(a->res[i].r, j, &e) == 0; j++)
            a->amounts[k++] = (skv_node_amount){
                skv_plugin_name(p->plugin),
                skv_alloc_map_slot_name(p->map, e.slot),
                skv_alloc_map_device_id(p->map, e.device),
                skv_alloc_map_device_numa(p->map, e.device), p->pci[e.device],
                e.qty};
    }
    a->namounts = k;
    return 0;
}

static const skv__node_res *result_of(const skv_node_placement *a, long plugin)
{
    for (size_t i = 0; plugin >= 0 && i < a->nres; i++)
        if (a->res[i].plugin == (size_t)plugin)
            return &a->res[i];
    return NULL;
}

/* The PUs of the cores taken, when the cpu map is the topology's cores. */
static int make_cpuset(skv_node_placement *a, const skv_node *n, skv_error *err)
{
    const skv__node_res *r = result_of(a, n->cpu);
    size_t np = 0;
    skv_alloc_entry e;
    for (size_t j = 0; r && n->cpu_is_topo &&
                       skv_alloc_result_at(r->r, j, &e) == 0; j++) {
        const skv_topo_core *c = skv_topo_core_at(n->topo, e.device);
        if (e.slot != n->cpu_slot || !c)
            continue;
        for (size_t k = 0; k < c->npus; k++)
            n->ints[np++] = c->pus[k];
    }
    return skv_topo_cpulist_format(&a->cpuset, n->ints, np, err);
}

/* NUMA nodes memory came from, else those of the cores. */
static int make_mems(skv_node_placement *a, const skv_node *n,
                     const skv__node_step *st, skv_error *err)
{
    const skv__node_res *r = result_of(a, n->mem);
    size_t k = 0;
    skv_alloc_entry e;
    for (size_t j = 0; r && skv_alloc_result_at(r->r, j, &e) == 0; j++) {
        int node = skv_alloc_map_device_numa(n->p[n->mem].map, e.device);
        if (e.slot == n->mem_slot && node >= 0)
            n->ints[k++] = node;
    }
    for (size_t j = 0; !r && j < st->ncore_nodes; j++)
        if (st->core_nodes[j] >= 0)
            n->ints[k++] = st->core_nodes[j];
    return skv_topo_cpulist_format(&a->mems, n->ints, k, err);
}

static int make_config(skv_node_placement *a, const skv_node *n, skv_error *err)
{
    int rc = skv_container_config_new(&a->cfg, err);
    for (size_t i = 0; rc == 0 && i < a->nres; i++) {
        const skv__node_plugin *p = &n->p[a->res[i].plugin];
        rc = skv_plugin_container_config_result(p->plugin, a->cfg, p->map,
                                                a->res[i].r, err);
    }
    if (rc)
        return rc;
    /* A cpu plugin that is not the topology's cores decides the cpuset. */
    const char *cpus = skv_container_config_cpus(a->cfg);
    if (!*a->cpuset && cpus && *cpus) {
        char *copy = skv__strdup(cpus);
        if (!copy)
            return skv__err(err, SKV_ENOMEM, "node allocation: out of memory");
        skv__free(a->cpuset);
        a->cpuset = copy;
    }
    /* Both lists come from skv_topo_cpulist_format, so they are canonical:
     * when the plugins already set the same text, setting it again (a parse
     * and a format) would change nothing. */
    cpus = skv_container_config_cpus(a->cfg);
    if (*a->cpuset && !(cpus && strcmp(cpus, a->cpuset) == 0))
        rc = skv_container_config_set_cpus(a->cfg, a->cpuset, err);
    const char *mems = skv_container_config_mems(a->cfg);
    if (rc == 0 && *a->mems && !(mems && strcmp(mems, a->mems) == 0))
        rc = skv_container_config_set_mems(a->cfg, a->mems, err);
    return rc;
}

int skv__node_finish(skv_node_placement *a, skv_node *n,
                     const skv__node_step *st, bool no_config,
                     skv_error *err)
{
    int rc = fill_amounts(a, n, err);
    if (rc == 0)
        rc = make_cpuset(a, n, err);
    if (rc == 0)
        rc = make_mems(a, n, st, err);
    if (rc == 0 && !no_config)
        rc = make_config(a, n, err);
    return rc;
}

size_t skv_node_placement_count(const skv_node_placement *a)
{
    return a ? a->namounts : 0;
}

int skv_node_placement_at(const skv_node_placement *a, size_t index,
                      skv_node_amount *out)
{
    if (!a || !out || index >= a->namounts)
        return SKV_ERANGE;
    *out = a->amounts[index];
    return 0;
}

const char *skv_node_placement_cpuset(const skv_node_placement *a)
{
    return a && a->cpuset ? a->cpuset : "";
}

const char *skv_node_placement_mems(const skv_node_placement *a)
{
    return a && a->mems ? a->mems : "";
}

const skv_container_config *skv_node_placement_config(
    const skv_node_placement *a)
{
    return a ? a->cfg : NULL;
}

size_t skv_node_placement_numa_nodes(const skv_node_placement *a, int *nodes,
                                 size_t cap)
{
    size_t count = 0;
    int last = -1;
    /* Repeated minimum search: amounts are few and nodes fewer. */
    for (;;) {
        int next = -1;
        bool found = false;
        for (size_t i = 0; a && i < a->namounts; i++) {
            int v = a->amounts[i].numa_node;
            if (v > last && (!found || v < next)) {
                next = v;
                found = true;
            }
        }
        if (!found)
            return count;
        if (nodes && count < cap)
            nodes[count] = next;
        count++;
        last = next;
    }
}
