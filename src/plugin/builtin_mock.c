/* Built-in "mock" plugin: accelerators described by configuration, or the
 * compute accelerators of a topology (e.g. the 16 GPUs of a DGX-2 XML), so
 * that every GPU code path (exclusive whole/shared slots, NUMA placement,
 * NVIDIA-style container configuration, MPS) runs in CI without a GPU.
 *
 * Config "key=value,..."; list values are ':'-separated, the last element
 * repeating ("memory=32g" for all, "numa=0:0:1:1"):
 *   count=N         devices (default 1; not with topology)
 *   topology=1      take the compute accelerators of the context's topology;
 *                   with prefix cuda or rocm only that vendor's
 *                   (skv_topo_accel_prefix: an AMD GPU never becomes cuda)
 *   prefix=NAME     slot names NAME.device / NAME.shares (default "mock")
 *   memory=LIST     bytes per device (default: topology's value, else 0)
 *   pus=LIST        processing units per device (default 0)
 *   numa=LIST       NUMA node per device (default: topology's, else -1)
 *   shares=LIST     NAME.shares capacity per device (default 1)
 *   model=TEXT      model name (default: topology's, else "Mock GPU")
 *   antifrag=BOOL   anti-fragmentation for NAME.shares (default 1)
 *   devnodes=BOOL   emit /dev/nvidiaN (N = device index) nodes (default 0)
 *   mps_pipe_dir=DIR  where to look for an MPS control daemon
 *   faults=FILE     device faults injected by hand: each line "ID [reason]"
 *                   makes device ID unhealthy (read at every health report;
 *                   no file: all healthy). See mock_health.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

#define MOCK_MAX_DEVICES 1024

typedef struct mock_dev {
    skv__gpu gpu;
    int numa;
    char pci[32];
    char model[96];
    uint32_t pus;
    skv_qty shares;
} mock_dev;

typedef struct mock_state {
    char device_slot[SKV_SLOT_NAME_MAX];
    char shares_slot[SKV_SLOT_NAME_MAX];
    bool antifrag;
    char *mps_dir;
    mock_dev *devs;
    size_t n;
    skv__gpu *gpus;             /* devs[i].gpu with the shares capacity,
                                   prepared for mock_config */
    unsigned nodes;             /* skv__gpu_probe_nodes() at init */
    char *faults;               /* faults=FILE, or NULL */
} mock_state;

static const char *const mock_keys[] = {
    "count", "topology", "prefix", "memory", "pus", "numa", "shares",
    "model", "antifrag", "devnodes", "mps_pipe_dir", "faults", NULL};

static void mock_fini(void *state)
{
    mock_state *s = state;
    if (!s)
        return;
    skv__free(s->devs);
    skv__free(s->gpus);
    skv__free(s->mps_dir);
    skv__free(s->faults);
    skv__free(s);
}

static int set_prefix(mock_state *s, const char *prefix, skv_error *err)
{
    snprintf(s->device_slot, sizeof(s->device_slot), "%s.device", prefix);
    snprintf(s->shares_slot, sizeof(s->shares_slot), "%s.shares", prefix);
    int rc = strchr(prefix, '.') ? SKV_EINVAL : 0;
    if (!rc)
        rc = skv_slot_name_check(s->shares_slot, NULL);
    if (rc)
        return skv__err(err, SKV_EINVAL, "plugin 'mock' config: prefix '%s' "
                        "does not make valid slot names", prefix);
    return 0;
}

/* A vendor's prefix takes that vendor's devices only; others take all. */
static bool vendor_ok(const mock_state *s, const skv_topo_accel *a)
{
    char prefix[SKV_SLOT_NAME_MAX];
    snprintf(prefix, sizeof(prefix), "%s", s->device_slot);
    char *dot = strrchr(prefix, '.');
    if (dot)
        *dot = '\0';
    if (strcmp(prefix, "cuda") != 0 && strcmp(prefix, "rocm") != 0)
        return true;
    const char *p = skv_topo_accel_prefix(a);
    return p && strcmp(p, prefix) == 0;
}

/* Devices from the topology's compute accelerators. */
static int from_topology(mock_state *s, const skv_topo *topo, skv_error *err)
{
    if (!topo)
        return skv__err(err, SKV_EINVAL, "plugin 'mock' config: topology=1 "
                        "needs a topology in the plugin context");
    s->devs = skv__calloc(skv_topo_accel_count(topo) + 1, sizeof(*s->devs));
    if (!s->devs)
        return skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    for (size_t i = 0; i < skv_topo_accel_count(topo); i++) {
        const skv_topo_accel *a = skv_topo_accel_at(topo, i);
        if (!a->compute || !vendor_ok(s, a))
            continue;
        mock_dev *d = &s->devs[s->n++];
        d->numa = a->numa_node;
        d->gpu.memory_bytes = a->memory_bytes;
        snprintf(d->pci, sizeof(d->pci), "%s", a->pci_bus_id);
        snprintf(d->model, sizeof(d->model), "%s", a->model);
        snprintf(d->gpu.uuid, sizeof(d->gpu.uuid), "%s", a->uuid);
    }
    return 0;
}

static int from_count(mock_state *s, const skv__kvlist *kv, skv_error *err)
{
    uint64_t count = 1;
    const char *v = skv__kv_get(kv, "count");
    int rc = v ? skv__kv_uint(&count, v, "count", "mock", err) : 0;
    if (rc)
        return rc;
    if (count > MOCK_MAX_DEVICES)
        return skv__err(err, SKV_EINVAL, "plugin 'mock' config: count=%llu is "
                        "above %d", (unsigned long long)count,
                        MOCK_MAX_DEVICES);
    s->devs = skv__calloc(count + 1, sizeof(*s->devs));
    if (!s->devs)
        return skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    s->n = count;
    for (size_t i = 0; i < s->n; i++)
        s->devs[i].numa = -1;
    return 0;
}

/* Parse one element of a list-valued key into device d. */
static int apply_item(mock_dev *d, const char *key, const char *item,
                      skv_error *le)
{
    uint64_t u = 0;
    skv_qty q = 0;
    int rc = 0;
    if (strcmp(key, "memory") == 0) {
        if (!(rc = skv_qty_parse(&q, item, SKV_SLOT_BYTES, le)) &&
            q == SKV_QTY_UNLIMITED)
            rc = skv__err(le, SKV_EINVAL, "memory must be finite");
        d->gpu.memory_bytes = rc ? 0 : (uint64_t)q;
    } else if (strcmp(key, "shares") == 0) {
        if (!(rc = skv_qty_parse(&q, item, SKV_SLOT_COUNT, le)) &&
            (q == SKV_QTY_UNLIMITED || q == 0))
            rc = skv__err(le, SKV_EINVAL, "shares must be finite and > 0");
        d->shares = q;
    } else if (strcmp(key, "pus") == 0) {
        if (!(rc = skv__kv_uint(&u, item, key, "mock", le)))
            d->pus = (uint32_t)u;
    } else if (strcmp(item, "-1") == 0) { /* numa */
        d->numa = -1;
    } else if (!(rc = skv__kv_uint(&u, item, key, "mock", le))) {
        d->numa = (int)u;
    }
    return rc;
}

/* Apply one list-valued key to every device. */
static int apply_list(mock_state *s, const skv__kvlist *kv, const char *key,
                      skv_error *err)
{
    const char *v = skv__kv_get(kv, key);
    for (size_t i = 0; v && i < s->n; i++) {
        char item[64];
        skv_error le = SKV_ERROR_INIT;
        int rc = skv__kv_list_item(item, sizeof(item), v, i);
        if (rc)
            return skv__err(err, SKV_EINVAL, "plugin 'mock' config: %s='%s': "
                            "element too long", key, v);
        if ((rc = apply_item(&s->devs[i], key, item, &le)))
            return skv__err(err, rc == SKV_ENOMEM ? rc : SKV_EINVAL,
                            "plugin 'mock' config: %s='%s': %s", key, v,
                            le.message);
    }
    return 0;
}

static int parse_flags(mock_state *s, const skv__kvlist *kv, bool *devnodes,
                       skv_error *err)
{
    const char *v;
    int rc = 0;
    s->antifrag = true;
    *devnodes = false;
    if ((v = skv__kv_get(kv, "antifrag")))
        rc = skv__kv_bool(&s->antifrag, v, "antifrag", "mock", err);
    if (!rc && (v = skv__kv_get(kv, "devnodes")))
        rc = skv__kv_bool(devnodes, v, "devnodes", "mock", err);
    if (!rc && (v = skv__kv_get(kv, "mps_pipe_dir")) &&
        !(s->mps_dir = skv__strdup(v)))
        rc = skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    if (!rc && (v = skv__kv_get(kv, "faults")) && v[0] != '/')
        rc = skv__err(err, SKV_EINVAL, "plugin 'mock' config: faults='%s' "
                      "must be an absolute path", v);
    if (!rc && v && !(s->faults = skv__strdup(v)))
        rc = skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    return rc;
}

/* What mock_config hands to the shared GPU code, computed once. */
static int prepare_gpus(mock_state *s, skv_error *err)
{
    s->gpus = skv__calloc(s->n + 1, sizeof(*s->gpus));
    if (!s->gpus)
        return skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    for (size_t i = 0; i < s->n; i++) {
        s->gpus[i] = s->devs[i].gpu;
        s->gpus[i].shares_capacity = s->devs[i].shares;
    }
    skv__gpu_prepare(s->gpus, s->n);
    s->nodes = skv__gpu_probe_nodes();
    return 0;
}

static int configure(mock_state *s, const skv__kvlist *kv,
                     const skv_topo *topo, skv_error *err)
{
    bool topology = false, devnodes;
    const char *v = skv__kv_get(kv, "prefix");
    int rc = set_prefix(s, v ? v : "mock", err);
    if (!rc && (v = skv__kv_get(kv, "topology")))
        rc = skv__kv_bool(&topology, v, "topology", "mock", err);
    if (!rc && topology && skv__kv_get(kv, "count"))
        rc = skv__err(err, SKV_EINVAL, "plugin 'mock' config: count and "
                      "topology exclude each other");
    if (!rc)
        rc = topology ? from_topology(s, topo, err) : from_count(s, kv, err);
    for (size_t i = 0; !rc && i < s->n; i++)
        s->devs[i].shares = SKV_QTY_SCALE;
    static const char *const lists[] = {"memory", "pus", "numa", "shares"};
    for (size_t i = 0; !rc && i < SKV__ARRAY_LEN(lists); i++)
        rc = apply_list(s, kv, lists[i], err);
    if (!rc)
        rc = parse_flags(s, kv, &devnodes, err);
    v = skv__kv_get(kv, "model");
    for (size_t i = 0; !rc && i < s->n; i++) {
        mock_dev *d = &s->devs[i];
        snprintf(d->gpu.id, sizeof(d->gpu.id), "%zu", i);
        d->gpu.minor = devnodes ? (int)i : -1;
        if (v || !d->model[0])
            snprintf(d->model, sizeof(d->model), "%s", v ? v : "Mock GPU");
    }
    return rc ? rc : prepare_gpus(s, err);
}

static int mock_init(void **state, const skv_plugin_context *ctx,
                     const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    skv__kvlist kv;
    int rc = skv__kv_parse(&kv, ctx->config, mock_keys, "mock", err);
    if (rc)
        return rc;
    mock_state *s = skv__calloc(1, sizeof(*s));
    rc = s ? configure(s, &kv, ctx->topo, err)
           : skv__err(err, SKV_ENOMEM, "mock plugin: out of memory");
    skv__kv_free(&kv);
    if (rc) {
        mock_fini(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int mock_slots(void *state, skv_plugin_slots *out,
                      const skv_plugin_host *host, skv_error *err)
{
    const mock_state *s = state;
    skv_plugin_slot dev = {s->device_slot, SKV_SLOT_COUNT, "GPU",
                           SKV_ALLOC_DISCRETE, 0, 1, 0};
    skv_plugin_slot sh = {s->shares_slot, SKV_SLOT_COUNT, "fGPU",
                          SKV_ALLOC_FRACTIONAL, 0, 1,
                          s->antifrag ? SKV_ALLOC_SLOT_ANTIFRAG : 0};
    int rc = host->slot_declare(out, &dev, err);
    return rc ? rc : host->slot_declare(out, &sh, err);
}

static int mock_devices(void *state, skv_device_list *out,
                        const skv_plugin_host *host, skv_error *err)
{
    const mock_state *s = state;
    for (size_t i = 0; i < s->n; i++) {
        const mock_dev *m = &s->devs[i];
        skv_device_slot slots[2] = {{s->device_slot, SKV_QTY_SCALE},
                                    {s->shares_slot, m->shares}};
        skv_device d = {m->gpu.id, m->numa, m->pci, m->gpu.memory_bytes,
                        m->pus, m->model, slots, 2};
        int rc = host->device_add(out, &d, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int mock_config(void *state, skv_container_config *cfg,
                       const skv_device_amount *a, size_t n,
                       const skv_plugin_host *host, skv_error *err)
{
    SKV__UNUSED(host);
    const mock_state *s = state;
    skv__gpu_slots sl = {s->device_slot, s->shares_slot, s->mps_dir, s->nodes};
    return skv__gpu_container_config(cfg, s->gpus, s->n, &sl, a, n, err);
}

static int mock_stats(void *state, skv_stats *out, const skv_plugin_host *host,
                      skv_error *err)
{
    const mock_state *s = state;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n; i++)
        if (s->devs[i].gpu.memory_bytes)
            rc = host->stats_add(out, s->devs[i].gpu.id, "memory_total_bytes",
                                 (int64_t)s->devs[i].gpu.memory_bytes, err);
    return rc;
}

static int mock_health(void *state, skv_device_health_fn report, void *arg,
                       skv_error *err)
{
    const mock_state *s = state;
    return s->faults ? skv__mock_faults_read(s->faults, s->n, report, arg, err)
                     : 0;
}

const skv_compute_plugin_ops skv__plugin_mock_ops = {
    SKV_PLUGIN_ABI_VERSION, "mock", SKV_VERSION_STRING,
    mock_init, mock_fini, mock_slots, mock_devices,
    NULL, mock_config, mock_stats, mock_health,
};
