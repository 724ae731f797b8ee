/* The agent's slice of the host (several agents on one machine): cores
 * outside the CPU list and memory beyond the byte budget are taken by a
 * reservation placement held for the agent's lifetime, so the node mapper
 * only hands out the slice. A core belongs to the slice when all of its PUs
 * are in the list.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

typedef struct slice {
    const skv_alloc_map *cm, *mm;
    size_t cs, ms;
    skv_device_amount *fx;
    size_t nfx;
    int *pus;
    size_t npus;
    bool *node_has_cores;       /* [mem devices] */
} slice;

static bool in_list(const int *list, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return true;
    return false;
}

static void take_cores(skv_agent *a, slice *s, const int *list, size_t n,
                       bool all)
{
    for (size_t d = 0; d < skv_alloc_map_device_count(s->cm); d++) {
        const skv_topo_core *c = skv_topo_core_at(a->topo, d);
        bool in = all;
        for (size_t k = 0; !all && c && k < c->npus; k++)
            in = k == 0 ? in_list(list, n, c->pus[k])
                        : in && in_list(list, n, c->pus[k]);
        skv_qty cap = skv_alloc_map_capacity(s->cm, s->cs, d);
        if (!in) {
            s->fx[s->nfx++] = (skv_device_amount){
                skv_alloc_map_device_id(s->cm, d), "cpu", cap};
            continue;
        }
        a->cpu_cap += cap;
        int node = skv_alloc_map_device_numa(s->cm, d);
        for (size_t m = 0; m < skv_alloc_map_device_count(s->mm); m++)
            if (skv_alloc_map_device_numa(s->mm, m) == node)
                s->node_has_cores[m] = true;
        for (size_t k = 0; c && k < c->npus; k++)
            s->pus[s->npus++] = c->pus[k];
    }
}

/* Memory beyond the budget: from nodes without slice cores first, highest
 * node first. */
static void take_memory(skv_agent *a, slice *s, uint64_t budget)
{
    skv_qty total = 0;
    size_t nm = skv_alloc_map_device_count(s->mm);
    for (size_t m = 0; m < nm; m++)
        total += skv_alloc_map_capacity(s->mm, s->ms, m);
    a->mem_cap = total;
    if (budget == 0 || (skv_qty)budget >= total)
        return;
    skv_qty excess = total - (skv_qty)budget;
    for (int pass = 0; pass < 2 && excess > 0; pass++)
        for (size_t m = nm; m-- > 0 && excess > 0;) {
            if (s->node_has_cores[m] != (pass == 1))
                continue;
            skv_qty cap = skv_alloc_map_capacity(s->mm, s->ms, m);
            skv_qty take = cap < excess ? cap : excess;
            if (take == 0)
                continue;
            s->fx[s->nfx++] = (skv_device_amount){
                skv_alloc_map_device_id(s->mm, m), "mem", take};
            excess -= take;
        }
    a->mem_cap = (skv_qty)budget;
}

/* Accelerators outside the slice: their whole-device slot, and every other
 * slot not exclusive with it (a held whole device blocks its partners). */
static void take_accels(skv_agent *a, slice *s)
{
    for (size_t i = 0; i < a->ndevs; i++) {
        const skv__agent_dev *d = &a->devs[i];
        const skv_alloc_map *m = skv_node_map(a->node, d->plugin);
        const char *whole = skv__agent_plugin_slot(a, d->plugin, ".device");
        size_t di, ws;
        if (!d->excluded || !whole ||
            skv_alloc_map_device_index(m, d->dev, &di) != 0 ||
            skv_alloc_map_slot_index(m, whole, &ws) != 0)
            continue;
        skv_alloc_slot_spec wspec;
        skv_alloc_map_slot_spec(m, ws, &wspec);
        for (size_t sl = 0; sl < skv_alloc_map_slot_count(m); sl++) {
            skv_alloc_slot_spec spec;
            skv_alloc_map_slot_spec(m, sl, &spec);
            skv_qty cap = skv_alloc_map_capacity(m, sl, di);
            if (cap <= 0 || (sl != ws && wspec.exclusive_group != 0 &&
                             spec.exclusive_group == wspec.exclusive_group))
                continue;
            s->fx[s->nfx++] = (skv_device_amount){d->dev, spec.name, cap};
        }
    }
}

static int find(const skv_node *n, const char *slot,
                const skv_alloc_map **m, size_t *s)
{
    for (size_t i = 0; i < skv_node_plugin_count(n); i++)
        if (skv_alloc_map_slot_index(skv_node_map(n, i), slot, s) == 0) {
            *m = skv_node_map(n, i);
            return 0;
        }
    return SKV_ENOENT;
}

static int reserve(skv_agent *a, slice *s, skv_error *err)
{
    skv_slots *none = NULL;
    int rc = skv_slots_new(&none, err);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.fixed = s->fx;
    o.nfixed = s->nfx;
    o.flags = SKV_NODE_NO_CONFIG;
    if (rc == 0 && s->nfx > 0)
        rc = skv_node_alloc(&a->reserve, a->node, none, &o, err);
    skv_slots_free(none);
    if (rc == 0)
        rc = skv_topo_cpulist_format(&a->slice_cpus, s->pus, s->npus, err);
    return rc;
}

int skv__agent_slice(skv_agent *a, const char *cpus, uint64_t mem,
                     skv_error *err)
{
    slice s;
    memset(&s, 0, sizeof(s));
    if (find(a->node, "cpu", &s.cm, &s.cs) || find(a->node, "mem", &s.mm,
                                                    &s.ms))
        return skv__err(err, SKV_EINVAL, "agent: no cpu or mem slot");
    int *list = NULL;
    size_t nlist = 0;
    int rc = cpus ? skv_topo_cpulist_parse(&list, &nlist, cpus, err) : 0;
    if (rc)
        return skv__err(err, rc, "agent option cpus '%s': invalid CPU list",
                        cpus);
    size_t ncores = skv_alloc_map_device_count(s.cm);
    size_t nmem = skv_alloc_map_device_count(s.mm);
    s.fx = skv__calloc(ncores + nmem + a->ndevs * SKV_ALLOC_MAP_SLOTS_MAX + 1,
                       sizeof(*s.fx));
    s.pus = skv__calloc(skv_topo_pu_count(a->topo) + 1, sizeof(*s.pus));
    s.node_has_cores = skv__calloc(nmem + 1, sizeof(bool));
    if (!s.fx || !s.pus || !s.node_has_cores)
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc == 0) {
        take_cores(a, &s, list, nlist, !cpus);
        take_memory(a, &s, mem);
        take_accels(a, &s);
        if (a->cpu_cap == 0)
            rc = skv__err(err, SKV_EINVAL, "agent option cpus '%s': no whole "
                          "core of this node is in the list", cpus);
    }
    if (rc == 0)
        rc = reserve(a, &s, err);
    skv__free(list);
    skv__free(s.fx);
    skv__free(s.pus);
    skv__free(s.node_has_cores);
    return rc;
}
