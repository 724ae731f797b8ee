/* Container configuration for NVIDIA-style GPUs, shared by the cuda plugin
 * and the mock plugin (so CI runs this exact code without a GPU).
 * The control device nodes are probed once when the plugin opens (a node
 * appearing or vanishing later, e.g. the driver being loaded, is seen by
 * plugins opened after it); the MPS daemon, which does come and go, is
 * still looked for on every call.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin_internal.h"

#define MPS_DEFAULT_DIR "/tmp/nvidia-mps"

bool skv__gpu_mps_running(const char *dir, const char **dir_out)
{
    const char *env = getenv("CUDA_MPS_PIPE_DIRECTORY");
    const char *d = dir && *dir ? dir : (env && *env ? env : MPS_DEFAULT_DIR);
    char path[4096];
    struct stat st;
    if (dir_out)
        *dir_out = d;
    /* The control daemon listens on the "control" FIFO in its pipe dir. */
    if ((size_t)snprintf(path, sizeof(path), "%s/control", d) >= sizeof(path))
        return false;
    return stat(path, &st) == 0;
}

void skv__pci_busid_normalize(char *buf, size_t bufsz, const char *in)
{
    const char *p = in ? in : "";
    size_t len = strlen(p);
    /* NVML writes an 8-digit domain ("00000000:34:00.0"). */
    if (len == 16 && strncmp(p, "0000", 4) == 0)
        p += 4;
    size_t i = 0;
    for (; p[i] && i + 1 < bufsz; i++)
        buf[i] = (char)tolower((unsigned char)p[i]);
    if (bufsz)
        buf[i] = '\0';
}

int skv__pci_numa(const skv_topo *topo, const char *busid)
{
    const skv_topo_accel *a = topo && *busid ? skv_topo_accel_find(topo, busid)
                                             : NULL;
    if (a)
        return a->numa_node;
    char path[128], text[32];
    if (!*busid || strchr(busid, '/'))
        return -1;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", busid);
    if (skv__sys_read(path, text, sizeof(text), NULL, NULL) != 0)
        return -1;
    int n = atoi(text);
    return n >= 0 ? n : -1;
}

typedef struct gpu_use {
    skv_qty whole;              /* amount of the device slot */
    skv_qty share;              /* amount of the shares slot */
} gpu_use;

static const char *const common_nodes[] = {"/dev/nvidiactl",
                                           "/dev/nvidia-uvm",
                                           "/dev/nvidia-uvm-tools"};

unsigned skv__gpu_probe_nodes(void)
{
    unsigned mask = 0;
    for (size_t i = 0; i < SKV__ARRAY_LEN(common_nodes); i++)
        if (skv__sys_exists(common_nodes[i]))
            mask |= 1u << i;
    return mask;
}

void skv__gpu_prepare(skv__gpu *gpus, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gpus[i].devnode[0] = '\0';
        if (gpus[i].minor >= 0)
            snprintf(gpus[i].devnode, sizeof(gpus[i].devnode),
                     "/dev/nvidia%d", gpus[i].minor);
    }
}

static int add_common_nodes(skv_container_config *cfg, unsigned mask,
                            skv_error *err)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(common_nodes); i++)
        if (mask & (1u << i)) {
            int rc = skv_container_config_add_device(cfg, common_nodes[i], err);
            if (rc)
                return rc;
        }
    return 0;
}

/* MPS limits for the shared devices: the largest share sets the thread
 * percentage (it is per client process); memory is pinned per device. */
static int mps_env(skv_container_config *cfg, const skv__gpu *gpus,
                   const gpu_use *use, size_t ngpus, const char *dir,
                   skv_error *err)
{
    int64_t pct = 1;
    char limits[2048] = "";
    size_t len = 0, ordinal = 0;
    for (size_t i = 0; i < ngpus; i++) {
        if (!use[i].whole && !use[i].share)
            continue;
        if (use[i].share) {
            skv_qty cap = gpus[i].shares_capacity > 0 ? gpus[i].shares_capacity
                                                      : SKV_QTY_SCALE;
            int64_t p = (use[i].share * 100 + cap - 1) / cap;
            pct = p > pct ? p : pct;
            /* 128-bit product: exact for any memory size and share. */
            uint64_t mib = (uint64_t)((unsigned __int128)gpus[i].memory_bytes *
                                      (uint64_t)use[i].share / (uint64_t)cap
                                      >> 20);
            if (mib && len < sizeof(limits) - 48)
                len += (size_t)snprintf(limits + len, sizeof(limits) - len,
                                        "%s%zu=%lluM", len ? "," : "", ordinal,
                                        (unsigned long long)mib);
        }
        ordinal++; /* CUDA ordinals follow CUDA_VISIBLE_DEVICES order */
    }
    char num[24];
    snprintf(num, sizeof(num), "%lld", (long long)(pct > 100 ? 100 : pct));
    int rc = skv_container_config_set_env(cfg, "CUDA_MPS_PIPE_DIRECTORY", dir,
                                          err);
    if (!rc)
        rc = skv_container_config_add_mount(cfg, dir, dir, 0, err);
    if (!rc)
        rc = skv_container_config_set_env(cfg,
                                          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                                          num, err);
    if (!rc && len)
        rc = skv_container_config_set_env(cfg, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                                          limits, err);
    return rc;
}

/* Index of the GPU whose id is id. The plugins' ids are mostly their
 * position, so that is tried before the scan. */
static size_t gpu_index(const skv__gpu *gpus, size_t ngpus, const char *id)
{
    char *end;
    unsigned long guess = strtoul(id, &end, 10);
    if (end != id && !*end && guess < ngpus && strcmp(gpus[guess].id, id) == 0)
        return guess;
    for (size_t i = 0; i < ngpus; i++)
        if (strcmp(gpus[i].id, id) == 0)
            return i;
    return ngpus;
}

static void collect_use(gpu_use *use, const skv__gpu *gpus, size_t ngpus,
                        const skv__gpu_slots *sl, const skv_device_amount *a,
                        size_t n)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = gpu_index(gpus, ngpus, a[k].device_id);
        if (i == ngpus)
            continue;
        if (strcmp(a[k].slot, sl->device_slot) == 0)
            use[i].whole += a[k].qty;
        else if (strcmp(a[k].slot, sl->shares_slot) == 0)
            use[i].share += a[k].qty;
    }
}

/* Visible devices (UUIDs when known) and device nodes. */
static int visible(skv_container_config *cfg, const skv__gpu *gpus,
                   const gpu_use *use, size_t ngpus, const skv__gpu_slots *sl,
                   bool *any_share, skv_error *err)
{
    char stack[4096];
    size_t cap = ngpus * sizeof(gpus[0].uuid) + 1, len = 0;
    char *list = cap <= sizeof(stack) ? stack : skv__malloc(cap);
    if (!list)
        return skv__err(err, SKV_ENOMEM, "gpu config: out of memory");
    int rc = 0;
    for (size_t i = 0; !rc && i < ngpus; i++) {
        if (!use[i].whole && !use[i].share)
            continue;
        *any_share = *any_share || use[i].share;
        const char *name = gpus[i].uuid[0] ? gpus[i].uuid : gpus[i].id;
        size_t nlen = strlen(name);
        if (len)
            list[len++] = ',';
        memcpy(list + len, name, nlen);
        len += nlen;
        if (gpus[i].devnode[0])
            rc = skv_container_config_add_device(cfg, gpus[i].devnode, err);
    }
    list[len] = '\0';
    if (!rc && len)
        rc = add_common_nodes(cfg, sl->common_nodes, err);
    if (!rc && len)
        rc = skv_container_config_set_env(cfg, "CUDA_VISIBLE_DEVICES", list, err);
    if (!rc && len)
        rc = skv_container_config_set_env(cfg, "NVIDIA_VISIBLE_DEVICES", list,
                                          err);
    if (list != stack)
        skv__free(list);
    return rc;
}

/* Per-call scratch for this many GPUs lives on the stack. */
#define GPU_STACK_USE 64

int skv__gpu_container_config(skv_container_config *cfg, const skv__gpu *gpus,
                              size_t ngpus, const skv__gpu_slots *sl,
                              const skv_device_amount *a, size_t n,
                              skv_error *err)
{
    gpu_use stack[GPU_STACK_USE];
    gpu_use *use = ngpus <= GPU_STACK_USE ? stack
                                          : skv__malloc(ngpus * sizeof(*use));
    if (!use)
        return skv__err(err, SKV_ENOMEM, "gpu config: out of memory");
    memset(use, 0, (ngpus ? ngpus : 1) * sizeof(*use));
    collect_use(use, gpus, ngpus, sl, a, n);
    bool any_share = false;
    int rc = visible(cfg, gpus, use, ngpus, sl, &any_share, err);
    if (!rc && any_share) {
        const char *dir;
        if (skv__gpu_mps_running(sl->mps_pipe_dir, &dir))
            rc = mps_env(cfg, gpus, use, ngpus, dir, err);
        else
            skv_container_config_add_flags(cfg, SKV_CCFG_SHARES_NOT_ENFORCED);
    }
    if (use != stack)
        skv__free(use);
    return rc;
}
