/* NUMA nodes, cores and PUs out of an hwloc topology, restricted to the
 * allowed cpuset/nodeset so that nothing the OS will not let us use is
 * ever handed out.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "topo_internal.h"

static int cmp_numa(const void *a, const void *b)
{
    const skv_topo_numa *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_pu(const void *a, const void *b)
{
    const skv_topo_pu *x = a, *y = b;
    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* The allowed PU indexes of cpuset as a new int array. */
static int bitmap_to_array(int **out, size_t *n, hwloc_const_bitmap_t set,
                           hwloc_const_bitmap_t allowed)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return SKV_ENOMEM;
    hwloc_bitmap_and(b, set, allowed);
    int w = hwloc_bitmap_weight(b);
    int *arr = skv__calloc(w > 0 ? (size_t)w : 1, sizeof(int));
    if (!arr) {
        hwloc_bitmap_free(b);
        return SKV_ENOMEM;
    }
    size_t k = 0;
    unsigned i;
    hwloc_bitmap_foreach_begin(i, b) {
        arr[k++] = (int)i;
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(b);
    *out = arr;
    *n = k;
    return 0;
}

static int build_numa(skv_topo *t, hwloc_topology_t h, skv_error *err)
{
    hwloc_const_bitmap_t acpu = hwloc_topology_get_allowed_cpuset(h);
    hwloc_const_bitmap_t anode = hwloc_topology_get_allowed_nodeset(h);
    int total = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    t->numa = skv__calloc(total > 0 ? (size_t)total : 1, sizeof(*t->numa));
    if (!t->numa)
        return skv__err(err, SKV_ENOMEM, "topology: out of memory");
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, o))) {
        if (o->os_index == HWLOC_UNKNOWN_INDEX ||
            !hwloc_bitmap_isset(anode, o->os_index))
            continue;
        skv_topo_numa *n = &t->numa[t->nnuma];
        int *cpus;
        size_t nc;
        if (bitmap_to_array(&cpus, &nc, o->cpuset, acpu))
            return skv__err(err, SKV_ENOMEM, "topology: out of memory");
        n->cpus = cpus;
        n->ncpus = nc;
        n->id = (int)o->os_index;
        n->memory_bytes = o->attr->numanode.local_memory;
        t->nnuma++;
        char *s;
        int rc = skv_topo_cpulist_format(&s, cpus, nc, err);
        if (rc)
            return rc;
        n->cpuset = s;
        t->memory += n->memory_bytes;
    }
    qsort(t->numa, t->nnuma, sizeof(*t->numa), cmp_numa);
    return 0;
}

/* NUMA id whose allowed cpus contain PU os index pu; -1 when none. */
static int numa_of_pu(const skv_topo *t, int pu)
{
    for (size_t i = 0; i < t->nnuma; i++)
        for (size_t j = 0; j < t->numa[i].ncpus; j++)
            if (t->numa[i].cpus[j] == pu)
                return t->numa[i].id;
    return -1;
}

static int obj_os(hwloc_obj_t o)
{
    return (!o || o->os_index == HWLOC_UNKNOWN_INDEX) ? -1 : (int)o->os_index;
}

/* One core per hwloc Core with allowed PUs; topologies without a Core level
 * (some synthetic ones) get one core per PU. */
static int build_cores(skv_topo *t, hwloc_topology_t h, skv_error *err)
{
    hwloc_const_bitmap_t acpu = hwloc_topology_get_allowed_cpuset(h);
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0
                                ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    int total = hwloc_get_nbobjs_by_type(h, type);
    t->cores = skv__calloc(total > 0 ? (size_t)total : 1, sizeof(*t->cores));
    if (!t->cores)
        return skv__err(err, SKV_ENOMEM, "topology: out of memory");
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(h, type, o))) {
        int *pus;
        size_t np;
        if (bitmap_to_array(&pus, &np, o->cpuset, acpu))
            return skv__err(err, SKV_ENOMEM, "topology: out of memory");
        if (np == 0) {
            skv__free(pus);
            continue;
        }
        skv_topo_core *c = &t->cores[t->ncores];
        c->index = t->ncores;
        c->os_index = obj_os(o);
        c->package = obj_os(hwloc_get_ancestor_obj_by_type(
            h, HWLOC_OBJ_PACKAGE, o));
        c->pus = pus;
        c->npus = np;
        c->numa_node = numa_of_pu(t, pus[0]);
        t->ncores++;
        t->npus += np;
    }
    return 0;
}

static int build_pus(skv_topo *t, skv_error *err)
{
    t->pus = skv__calloc(t->npus ? t->npus : 1, sizeof(*t->pus));
    int *all = skv__calloc(t->npus ? t->npus : 1, sizeof(int));
    if (!t->pus || !all) {
        skv__free(all);
        return skv__err(err, SKV_ENOMEM, "topology: out of memory");
    }
    size_t k = 0;
    for (size_t c = 0; c < t->ncores; c++)
        for (size_t j = 0; j < t->cores[c].npus; j++) {
            skv_topo_pu *p = &t->pus[k];
            p->os_index = t->cores[c].pus[j];
            p->core = c;
            p->numa_node = numa_of_pu(t, p->os_index);
            all[k++] = p->os_index;
        }
    qsort(t->pus, t->npus, sizeof(*t->pus), cmp_pu);
    int rc = skv_topo_cpulist_format(&t->cpuset, all, t->npus, err);
    skv__free(all);
    return rc;
}

static int numa_index(const skv_topo *t, int id)
{
    for (size_t i = 0; i < t->nnuma; i++)
        if (t->numa[i].id == id)
            return (int)i;
    return -1;
}

/* The OS-provided NUMA latency matrix, when present. */
static int build_numa_dist(skv_topo *t, hwloc_topology_t h, skv_error *err)
{
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (t->nnuma == 0 ||
        hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
        nr == 0)
        return 0;
    t->numa_dist = skv__calloc(t->nnuma * t->nnuma, sizeof(unsigned));
    if (!t->numa_dist) {
        hwloc_distances_release(h, d);
        return skv__err(err, SKV_ENOMEM, "topology: out of memory");
    }
    for (unsigned i = 0; i < d->nbobjs; i++)
        for (unsigned j = 0; j < d->nbobjs; j++) {
            int a = numa_index(t, obj_os(d->objs[i]));
            int b = numa_index(t, obj_os(d->objs[j]));
            uint64_t v = d->values[i * d->nbobjs + j];
            if (a >= 0 && b >= 0)
                t->numa_dist[(size_t)a * t->nnuma + (size_t)b] =
                    v > 0xffffffffu ? 0xffffffffu : (unsigned)v;
        }
    hwloc_distances_release(h, d);
    return 0;
}

int skv__topo_build_cpus(skv_topo *t, hwloc_topology_t h, skv_error *err)
{
    int rc = build_numa(t, h, err);
    if (!rc)
        rc = build_cores(t, h, err);
    if (!rc)
        rc = build_pus(t, err);
    if (!rc)
        rc = build_numa_dist(t, h, err);
    return rc;
}
