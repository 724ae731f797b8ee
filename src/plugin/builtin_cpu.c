/* Built-in "cpu" plugin: one device per allowed core (device i is
 * skv_topo_core_at(topo, i), id "i"), slot "cpu" in whole cores. The
 * container gets the cores' PUs as cpuset.cpus.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

typedef struct cpu_state {
    const skv_topo *topo;
} cpu_state;

static int cpu_init(void **state, const skv_plugin_context *ctx,
                    const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    if (!ctx->topo)
        return skv__err(err, SKV_EINVAL, "the cpu plugin needs a topology");
    if (ctx->config && *ctx->config)
        return skv__err(err, SKV_EINVAL, "the cpu plugin takes no "
                        "configuration (got '%s')", ctx->config);
    cpu_state *s = skv__calloc(1, sizeof(*s));
    if (!s)
        return skv__err(err, SKV_ENOMEM, "cpu plugin: out of memory");
    s->topo = ctx->topo;
    *state = s;
    return 0;
}

static void cpu_fini(void *state) { skv__free(state); }

static int cpu_slots(void *state, skv_plugin_slots *out,
                     const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(state);
    skv_plugin_slot s = {"cpu", SKV_SLOT_COUNT, "core", SKV_ALLOC_DISCRETE,
                         0, 0, 0};
    return host->slot_declare(out, &s, err);
}

static int cpu_devices(void *state, skv_device_list *out,
                       const skv_plugin_host *host, skv_error *err)
{
    const cpu_state *s = state;
    for (size_t i = 0; i < skv_topo_core_count(s->topo); i++) {
        const skv_topo_core *c = skv_topo_core_at(s->topo, i);
        char id[24];
        snprintf(id, sizeof(id), "%zu", i);
        skv_device_slot slot = {"cpu", SKV_QTY_SCALE};
        skv_device d = {id, c->numa_node, NULL, 0, (uint32_t)c->npus,
                        NULL, &slot, 1};
        int rc = host->device_add(out, &d, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The core an amount names, NULL for a zero amount. */
static const skv_topo_core *core_of(const cpu_state *s,
                                    const skv_device_amount *a)
{
    if (a->qty == 0)
        return NULL;
    return skv_topo_core_at(s->topo, strtoul(a->device_id, NULL, 10));
}

/* PUs of the cores with a non-zero amount, as cpuset.cpus, and the thread
 * count for OpenMP so runtimes do not oversubscribe. */
static int cpu_config(void *state, skv_container_config *cfg,
                      const skv_device_amount *a, size_t n,
                      const skv_plugin_host *host, skv_error *err)
{
    const cpu_state *s = state;
    size_t total = 0, np = 0, ncores = 0;
    for (size_t i = 0; i < n; i++) {
        const skv_topo_core *c = core_of(s, &a[i]);
        total += c ? c->npus : 0;
    }
    int *pus = skv__calloc(total + 1, sizeof(int));
    if (!pus)
        return skv__err(err, SKV_ENOMEM, "cpu plugin: out of memory");
    for (size_t i = 0; i < n; i++) {
        const skv_topo_core *c = core_of(s, &a[i]);
        if (!c)
            continue;
        ncores++;
        for (size_t j = 0; j < c->npus; j++)
            pus[np++] = c->pus[j];
    }
    char *list = NULL;
    int rc = skv_topo_cpulist_format(&list, pus, np, err);
    skv__free(pus);
    if (!rc && np) {
        skv__ccfg_take_cpus(cfg, list); /* canonical already: no re-parse */
        list = NULL;
    }
    skv__free(list);
    if (!rc && ncores) {
        char num[24];
        snprintf(num, sizeof(num), "%zu", ncores);
        rc = host->ccfg_set_env(cfg, "OMP_NUM_THREADS", num, err);
    }
    return rc;
}

/* Per-CPU tick counters from /proc/stat: busy and total per PU index. */
typedef struct ticks {
    int64_t busy, total;
} ticks;

static void parse_stat_line(const char *line, ticks *t, size_t nt)
{
    char *end;
    unsigned long cpu = strtoul(line + 3, &end, 10);
    if (end == line + 3 || cpu >= nt)
        return;
    int64_t v[8] = {0};
    const char *p = end;
    for (int k = 0; k < 8; k++) {
        v[k] = (int64_t)strtoll(p, &end, 10);
        if (end == p)
            break;
        p = end;
    }
    /* user nice system idle iowait irq softirq steal */
    t[cpu].busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t[cpu].total = t[cpu].busy + v[3] + v[4];
}

static int cpu_stats(void *state, skv_stats *out, const skv_plugin_host *host,
                     skv_error *err)
{
    const cpu_state *s = state;
    size_t npu = skv_topo_pu_count(s->topo);
    size_t nt = (size_t)skv_topo_pu_at(s->topo, npu - 1)->os_index + 1;
    char *text;
    int rc = skv__sys_read_alloc("/proc/stat", &text, NULL, err);
    if (rc)
        return rc;
    ticks *t = skv__calloc(nt, sizeof(*t));
    if (!t) {
        skv__free(text);
        return skv__err(err, SKV_ENOMEM, "cpu plugin: out of memory");
    }
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9')
            parse_stat_line(line, t, nt);
        line = nl ? nl + 1 : NULL;
    }
    skv__free(text);
    for (size_t i = 0; !rc && i < skv_topo_core_count(s->topo); i++) {
        const skv_topo_core *c = skv_topo_core_at(s->topo, i);
        int64_t busy = 0, total = 0;
        for (size_t j = 0; j < c->npus; j++) {
            busy += t[c->pus[j]].busy;
            total += t[c->pus[j]].total;
        }
        char id[24];
        snprintf(id, sizeof(id), "%zu", i);
        rc = host->stats_add(out, id, "cpu_busy_ticks", busy, err);
        if (!rc)
            rc = host->stats_add(out, id, "cpu_total_ticks", total, err);
    }
    skv__free(t);
    return rc;
}

const skv_compute_plugin_ops skv__plugin_cpu_ops = {
    SKV_PLUGIN_ABI_VERSION, "cpu", SKV_VERSION_STRING,
    cpu_init, cpu_fini, cpu_slots, cpu_devices,
    NULL, cpu_config, cpu_stats,
};
