/* Built-in "mem" plugin: one device per allowed NUMA node with memory (id =
 * the node id), slot "mem" in bytes. The container gets the nodes it takes
 * memory from as cpuset.mems, so memory really comes from there.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

typedef struct mem_state {
    const skv_topo *topo;
} mem_state;

static int mem_init(void **state, const skv_plugin_context *ctx,
                    const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    if (!ctx->topo)
        return skv__err(err, SKV_EINVAL, "the mem plugin needs a topology");
    if (ctx->config && *ctx->config)
        return skv__err(err, SKV_EINVAL, "the mem plugin takes no "
                        "configuration (got '%s')", ctx->config);
    mem_state *s = skv__calloc(1, sizeof(*s));
    if (!s)
        return skv__err(err, SKV_ENOMEM, "mem plugin: out of memory");
    s->topo = ctx->topo;
    *state = s;
    return 0;
}

static void mem_fini(void *state) { skv__free(state); }

static int mem_slots(void *state, skv_plugin_slots *out,
                     const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(state);
    skv_plugin_slot s = {"mem", SKV_SLOT_BYTES, "B", SKV_ALLOC_DISCRETE, 0, 0,
                         0};
    return host->slot_declare(out, &s, err);
}

static int mem_devices(void *state, skv_device_list *out,
                       const skv_plugin_host *host, skv_error *err)
{
    const mem_state *s = state;
    for (size_t i = 0; i < skv_topo_numa_count(s->topo); i++) {
        const skv_topo_numa *n = skv_topo_numa_at(s->topo, i);
        if (n->memory_bytes == 0 || n->memory_bytes > (uint64_t)SKV_QTY_MAX)
            continue;
        char id[24];
        snprintf(id, sizeof(id), "%d", n->id);
        skv_device_slot slot = {"mem", (skv_qty)n->memory_bytes};
        skv_device d = {id, n->id, NULL, n->memory_bytes, (uint32_t)n->ncpus,
                        NULL, &slot, 1};
        int rc = host->device_add(out, &d, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int mem_config(void *state, skv_container_config *cfg,
                      const skv_device_amount *a, size_t n,
                      const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(state);
    SKV__UNUSED(host);
    int *nodes = skv__calloc(n + 1, sizeof(int));
    if (!nodes)
        return skv__err(err, SKV_ENOMEM, "mem plugin: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i].qty > 0)
            nodes[k++] = atoi(a[i].device_id);
    char *list = NULL;
    int rc = skv_topo_cpulist_format(&list, nodes, k, err);
    skv__free(nodes);
    if (!rc && k) {
        skv__ccfg_take_mems(cfg, list); /* canonical already: no re-parse */
        list = NULL;
    }
    skv__free(list);
    return rc;
}

/* "Node 0 MemFree:  123 kB" -> bytes of the named field, -1 if absent. */
static int64_t meminfo_field(const char *text, const char *field)
{
    const char *p = strstr(text, field);
    if (!p)
        return -1;
    p += strlen(field);
    char *end;
    long long kib = strtoll(p, &end, 10);
    if (end == p || kib < 0 || kib > INT64_MAX / 1024)
        return -1;
    return (int64_t)kib * 1024;
}

/* Total and free memory per node from sysfs; nodes without the file are
 * skipped (containers may hide it). */
static int mem_stats(void *state, skv_stats *out, const skv_plugin_host *host,
                     skv_error *err)
{
    const mem_state *s = state;
    int rc = 0;
    for (size_t i = 0; !rc && i < skv_topo_numa_count(s->topo); i++) {
        const skv_topo_numa *n = skv_topo_numa_at(s->topo, i);
        char path[96], id[24], text[4096];
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
                 n->id);
        snprintf(id, sizeof(id), "%d", n->id);
        if (skv__sys_read(path, text, sizeof(text), NULL, NULL) != 0)
            continue;
        int64_t total = meminfo_field(text, "MemTotal:");
        int64_t free_b = meminfo_field(text, "MemFree:");
        if (total >= 0)
            rc = host->stats_add(out, id, "memory_total_bytes", total, err);
        if (!rc && free_b >= 0)
            rc = host->stats_add(out, id, "memory_free_bytes", free_b, err);
    }
    return rc;
}

const skv_compute_plugin_ops skv__plugin_mem_ops = {
    SKV_PLUGIN_ABI_VERSION, "mem", SKV_VERSION_STRING,
    mem_init, mem_fini, mem_slots, mem_devices,
    NULL, mem_config, mem_stats,
};
