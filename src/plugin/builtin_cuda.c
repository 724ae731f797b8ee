/* Built-in "cuda" plugin: NVIDIA GPUs through NVML (dlopen'ed at run
 * time; no NVML = no devices). Device ids are NVML indexes ("0", "1", ...).
 * Slots cuda.device (whole GPUs) and cuda.shares (fractions; mutually
 * exclusive per GPU).
 *
 * Config "key=value,...":
 *   library=PATH     NVML library (default libnvidia-ml.so.1); when given,
 *                    failing to load it is an error
 *   shares=LIST      cuda.shares capacity per GPU, ':'-separated (default 1)
 *   antifrag=BOOL    anti-fragmentation for cuda.shares (default 1)
 *   mps_pipe_dir=DIR where to look for an MPS control daemon
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define CUDA_MAX_DEVICES 256

typedef skv__cuda_dev cuda_dev;

typedef struct cuda_state {
    skv__nvml nvml;
    cuda_dev *devs;
    size_t n;
    bool antifrag;
    char *mps_dir;
    skv__gpu *gpus;             /* devs[i].gpu, prepared for cuda_config */
    unsigned nodes;             /* skv__gpu_probe_nodes() at init */
    skv__cuda_health health;    /* cuda_health.c */
} cuda_state;

static const char *const cuda_keys[] = {"library", "shares", "antifrag",
                                        "mps_pipe_dir", NULL};

static void cuda_fini(void *state)
{
    cuda_state *s = state;
    if (!s)
        return;
    skv__cuda_health_close(&s->health, &s->nvml);
    skv__nvml_close(&s->nvml);
    skv__free(s->devs);
    skv__free(s->gpus);
    skv__free(s->mps_dir);
    skv__free(s);
}

/* Query one GPU; false when NVML cannot describe it (it is skipped). */
static bool query(cuda_state *s, unsigned i, cuda_dev *d,
                  const skv_topo *topo)
{
    skv__nvml *n = &s->nvml;
    skv__nvml_dev h;
    skv__nvml_pci pci;
    skv__nvml_memory mem;
    unsigned minor;
    if (n->get_handle(i, &h) != 0 || n->get_pci(h, &pci) != 0 ||
        n->get_minor(h, &minor) != 0) {
        skv__log(SKV_LOG_WARN, "plugin", "cuda: NVML device %u: cannot query "
                 "it; skipped", i);
        return false;
    }
    memset(d, 0, sizeof(*d));
    d->handle = h;
    snprintf(d->gpu.id, sizeof(d->gpu.id), "%u", i);
    d->gpu.minor = minor > 1000000 ? -1 : (int)minor;
    pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
    skv__pci_busid_normalize(d->pci, sizeof(d->pci), pci.bus_id);
    if (n->get_memory(h, &mem) == 0)
        d->gpu.memory_bytes = mem.total;
    if (n->get_uuid(h, d->gpu.uuid, sizeof(d->gpu.uuid)) != 0)
        d->gpu.uuid[0] = '\0';
    if (n->get_name(h, d->name, sizeof(d->name)) != 0)
        d->name[0] = '\0';
    d->gpu.uuid[sizeof(d->gpu.uuid) - 1] = '\0';
    d->name[sizeof(d->name) - 1] = '\0';
    d->numa = skv__pci_numa(topo, d->pci);
    d->gpu.shares_capacity = SKV_QTY_SCALE;
    return true;
}

static int enumerate(cuda_state *s, const skv_topo *topo, skv_error *err)
{
    unsigned count = 0;
    if (!s->nvml.dl)
        return 0;
    if (s->nvml.get_count(&count) != 0)
        return skv__err(err, SKV_EIO, "cuda: nvmlDeviceGetCount_v2 failed");
    if (count > CUDA_MAX_DEVICES)
        count = CUDA_MAX_DEVICES;
    s->devs = skv__calloc(count + 1, sizeof(*s->devs));
    if (!s->devs)
        return skv__err(err, SKV_ENOMEM, "cuda plugin: out of memory");
    for (unsigned i = 0; i < count; i++)
        if (query(s, i, &s->devs[s->n], topo))
            s->n++;
    return 0;
}

static int apply_shares(cuda_state *s, const char *v, skv_error *err)
{
    for (size_t i = 0; v && i < s->n; i++) {
        char item[64];
        skv_qty q = 0;
        skv_error le = SKV_ERROR_INIT;
        int rc = skv__kv_list_item(item, sizeof(item), v, i)
                     ? skv__err(&le, SKV_EINVAL, "element too long")
                     : skv_qty_parse(&q, item, SKV_SLOT_COUNT, &le);
        if (!rc && (q == 0 || q == SKV_QTY_UNLIMITED))
            rc = skv__err(&le, SKV_EINVAL, "must be finite and > 0");
        if (rc)
            return skv__err(err, SKV_EINVAL, "plugin 'cuda' config: shares="
                            "'%s': %s", v, le.message);
        s->devs[i].gpu.shares_capacity = q;
    }
    return 0;
}

static int configure(cuda_state *s, const skv__kvlist *kv,
                     const skv_topo *topo, skv_error *err)
{
    const char *lib = skv__kv_get(kv, "library");
    const char *v;
    int rc = 0;
    s->antifrag = true;
    if ((v = skv__kv_get(kv, "antifrag")))
        rc = skv__kv_bool(&s->antifrag, v, "antifrag", "cuda", err);
    if (!rc && (v = skv__kv_get(kv, "mps_pipe_dir")) &&
        !(s->mps_dir = skv__strdup(v)))
        rc = skv__err(err, SKV_ENOMEM, "cuda plugin: out of memory");
    if (!rc && lib && !*lib)
        rc = skv__err(err, SKV_EINVAL, "plugin 'cuda' config: empty library");
    if (!rc)
        rc = skv__nvml_open(&s->nvml, lib ? lib : "libnvidia-ml.so.1",
                            lib != NULL, err);
    if (!rc)
        rc = enumerate(s, topo, err);
    if (!rc)
        rc = apply_shares(s, skv__kv_get(kv, "shares"), err);
    if (!rc && !(s->gpus = skv__calloc(s->n + 1, sizeof(*s->gpus))))
        rc = skv__err(err, SKV_ENOMEM, "cuda plugin: out of memory");
    for (size_t i = 0; !rc && i < s->n; i++)
        s->gpus[i] = s->devs[i].gpu;
    if (!rc) {
        skv__gpu_prepare(s->gpus, s->n);
        s->nodes = skv__gpu_probe_nodes();
        skv__cuda_health_open(&s->health, &s->nvml, s->devs, s->n);
    }
    return rc;
}

static int cuda_init(void **state, const skv_plugin_context *ctx,
                     const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    skv__kvlist kv;
    int rc = skv__kv_parse(&kv, ctx->config, cuda_keys, "cuda", err);
    if (rc)
        return rc;
    cuda_state *s = skv__calloc(1, sizeof(*s));
    rc = s ? configure(s, &kv, ctx->topo, err)
           : skv__err(err, SKV_ENOMEM, "cuda plugin: out of memory");
    skv__kv_free(&kv);
    if (rc) {
        cuda_fini(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int cuda_slots(void *state, skv_plugin_slots *out,
                      const skv_plugin_host *host, skv_error *err)
{
    const cuda_state *s = state;
    skv_plugin_slot dev = {"cuda.device", SKV_SLOT_COUNT, "GPU",
                           SKV_ALLOC_DISCRETE, 0, 1, 0};
    skv_plugin_slot sh = {"cuda.shares", SKV_SLOT_COUNT, "fGPU",
                          SKV_ALLOC_FRACTIONAL, 0, 1,
                          s->antifrag ? SKV_ALLOC_SLOT_ANTIFRAG : 0};
    int rc = host->slot_declare(out, &dev, err);
    return rc ? rc : host->slot_declare(out, &sh, err);
}

static int cuda_devices(void *state, skv_device_list *out,
                        const skv_plugin_host *host, skv_error *err)
{
    const cuda_state *s = state;
    for (size_t i = 0; i < s->n; i++) {
        const cuda_dev *c = &s->devs[i];
        skv_device_slot slots[2] = {{"cuda.device", SKV_QTY_SCALE},
                                    {"cuda.shares", c->gpu.shares_capacity}};
        skv_device d = {c->gpu.id, c->numa, c->pci, c->gpu.memory_bytes, 0,
                        c->name, slots, 2};
        int rc = host->device_add(out, &d, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int cuda_config(void *state, skv_container_config *cfg,
                       const skv_device_amount *a, size_t n,
                       const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    const cuda_state *s = state;
    skv__gpu_slots sl = {"cuda.device", "cuda.shares", s->mps_dir, s->nodes};
    return skv__gpu_container_config(cfg, s->gpus, s->n, &sl, a, n, err);
}

/* Memory in use per GPU, as NVML reports it now. */
static int cuda_stats(void *state, skv_stats *out, const skv_plugin_host *host,
                      skv_error *err)
{
    cuda_state *s = state;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        skv__nvml_dev h;
        skv__nvml_memory mem;
        unsigned idx = (unsigned)strtoul(s->devs[i].gpu.id, NULL, 10);
        if (s->nvml.get_handle(idx, &h) != 0 ||
            s->nvml.get_memory(h, &mem) != 0)
            continue;
        rc = host->stats_add(out, s->devs[i].gpu.id, "memory_total_bytes",
                             (int64_t)mem.total, err);
        if (!rc)
            rc = host->stats_add(out, s->devs[i].gpu.id, "memory_used_bytes",
                                 (int64_t)mem.used, err);
    }
    return rc;
}

static int cuda_health(void *state, skv_device_health_fn report, void *arg,
                       skv_error *err)
{
    SKV__UNUSED(err);
    cuda_state *s = state;
    return skv__cuda_health_report(&s->health, &s->nvml, s->devs, s->n,
                                   report, arg);
}

const skv_compute_plugin_ops skv__plugin_cuda_ops = {
    SKV_PLUGIN_ABI_VERSION, "cuda", SKV_VERSION_STRING,
    cuda_init, cuda_fini, cuda_slots, cuda_devices,
    NULL, cuda_config, cuda_stats, cuda_health,
};
