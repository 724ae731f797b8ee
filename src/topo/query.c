/* Read-only accessors of a loaded topology.
 * SPDX-License-Identifier: Apache-2.0 */
#include <strings.h>
#include <string.h>

#include "topo_internal.h"

const char *skv_topo_link_name(skv_topo_link link)
{
    static const char *const names[] = {"self", "pix", "pxb", "phb", "node",
                                        "sys"};
    if ((unsigned)link < SKV__ARRAY_LEN(names))
        return names[link];
    return "?";
}

const char *skv_topo_source(const skv_topo *t) { return t ? t->source : ""; }
size_t skv_topo_numa_count(const skv_topo *t) { return t ? t->nnuma : 0; }
size_t skv_topo_core_count(const skv_topo *t) { return t ? t->ncores : 0; }
size_t skv_topo_pu_count(const skv_topo *t) { return t ? t->npus : 0; }
size_t skv_topo_accel_count(const skv_topo *t) { return t ? t->naccels : 0; }
const char *skv_topo_cpuset(const skv_topo *t) { return t ? t->cpuset : ""; }
uint64_t skv_topo_memory_bytes(const skv_topo *t) { return t ? t->memory : 0; }

const skv_topo_numa *skv_topo_numa_at(const skv_topo *t, size_t i)
{
    return t && i < t->nnuma ? &t->numa[i] : NULL;
}

static long numa_pos(const skv_topo *t, int id)
{
    for (size_t i = 0; t && i < t->nnuma; i++)
        if (t->numa[i].id == id)
            return (long)i;
    return -1;
}

const skv_topo_numa *skv_topo_numa_find(const skv_topo *t, int id)
{
    long i = numa_pos(t, id);
    return i < 0 ? NULL : &t->numa[i];
}

unsigned skv_topo_numa_distance(const skv_topo *t, int from, int to)
{
    long a = numa_pos(t, from), b = numa_pos(t, to);
    if (a < 0 || b < 0 || !t->numa_dist)
        return 0;
    return t->numa_dist[(size_t)a * t->nnuma + (size_t)b];
}

const skv_topo_core *skv_topo_core_at(const skv_topo *t, size_t i)
{
    return t && i < t->ncores ? &t->cores[i] : NULL;
}

const skv_topo_pu *skv_topo_pu_at(const skv_topo *t, size_t i)
{
    return t && i < t->npus ? &t->pus[i] : NULL;
}

const skv_topo_pu *skv_topo_pu_find(const skv_topo *t, int os_index)
{
    size_t lo = 0, hi = t ? t->npus : 0;
    while (lo < hi) { /* pus are sorted by os_index */
        size_t mid = lo + (hi - lo) / 2;
        if (t->pus[mid].os_index == os_index)
            return &t->pus[mid];
        if (t->pus[mid].os_index < os_index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const skv_topo_accel *skv_topo_accel_at(const skv_topo *t, size_t i)
{
    return t && i < t->naccels ? &t->accels[i] : NULL;
}

const skv_topo_accel *skv_topo_accel_find(const skv_topo *t, const char *key)
{
    if (!t || !key || !*key)
        return NULL;
    for (size_t i = 0; i < t->naccels; i++) {
        const skv_topo_accel *a = &t->accels[i];
        if (strcmp(a->name, key) == 0 || strcasecmp(a->pci_bus_id, key) == 0)
            return a;
        for (size_t j = 0; j < a->nos_devices; j++)
            if (strcmp(a->os_devices[j], key) == 0)
                return a;
    }
    return NULL;
}

skv_topo_link skv_topo_accel_link(const skv_topo *t, size_t a, size_t b)
{
    if (!t || a >= t->naccels || b >= t->naccels)
        return SKV_TOPO_LINK_SYS;
    return (skv_topo_link)t->links[a * t->naccels + b];
}

uint64_t skv_topo_accel_nvlink_bw(const skv_topo *t, size_t a, size_t b)
{
    if (!t || !t->nvlink || a >= t->naccels || b >= t->naccels || a == b)
        return 0;
    return t->nvlink[a * t->naccels + b];
}
