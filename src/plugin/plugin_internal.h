/* Internal: shared pieces of the plugin module (plugin objects, key=value
 * configuration, the GPU container-configuration logic shared by the cuda
 * and mock plugins).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_PLUGIN_INTERNAL_H
#define SKV_PLUGIN_INTERNAL_H

#include <stdbool.h>

#include "skv_internal.h"
#include "sokovan/plugin.h"

struct skv_plugin_slots {
    skv_plugin_slot *items;     /* name/unit owned */
    size_t n;
};

typedef struct env_entry {
    char *name;
    char *value;
} env_entry;

/* Kept here so ccfg.c and ccfg_query.c share it. */
struct skv_container_config {
    char **devices;
    size_t ndevices;
    env_entry *env;
    size_t nenv;
    skv_ccfg_mount *mounts;     /* source/target owned */
    size_t nmounts;
    char *cpus;
    char *mems;
    unsigned flags;
};

/* Built-in tables. */
extern const skv_compute_plugin_ops skv__plugin_cpu_ops;
extern const skv_compute_plugin_ops skv__plugin_mem_ops;
extern const skv_compute_plugin_ops skv__plugin_cuda_ops;
extern const skv_compute_plugin_ops skv__plugin_mock_ops;

/* Merge src into dst with skv_container_config_merge's result and errors,
 * taking src's strings instead of copying them (src must then only be
 * freed). dst is unchanged on failure. */
int skv__ccfg_absorb(skv_container_config *dst, skv_container_config *src,
                     skv_error *err);
/* Set cpuset.cpus / cpuset.mems to list, a string from
 * skv_topo_cpulist_format (already canonical), taking ownership of it. */
void skv__ccfg_take_cpus(skv_container_config *cfg, char *list);
void skv__ccfg_take_mems(skv_container_config *cfg, char *list);

/* Drop entries past the first n (undo a failed append). */
void skv__stats_truncate(skv_stats *st, size_t n);

/* Open a plugin from a checked-here table; takes ownership of the dlopen
 * handle dl (may be NULL) in every case. */
int skv__plugin_open(skv_plugin **out, const skv_compute_plugin_ops *ops,
                     const skv_plugin_context *ctx, void *dl, skv_error *err);
/* The table and state of a plugin object (for the dispatching files). */
const skv_compute_plugin_ops *skv__plugin_ops(const skv_plugin *p,
                                              void **state);
/* Turn a plugin callback's return code and its error detail le into ours,
 * naming the plugin and the callback. */
int skv__plugin_call_rc(const skv_plugin *p, int rc, const skv_error *le,
                        skv_error *err, const char *what);

int skv__plugin_slots_declare(skv_plugin_slots *out,
                              const skv_plugin_slot *slot, skv_error *err);
void skv__plugin_slots_clear(skv_plugin_slots *s);

/* ---- "key=value,key=value" configuration -------------------------------- */

typedef struct skv__kv {
    char *key;
    char *value;
} skv__kv;

typedef struct skv__kvlist {
    skv__kv *items;
    size_t n;
} skv__kvlist;

/* Parse text (NULL or "" = empty). Every key must be in allowed (NULL
 * terminated) and appear once; else SKV_EINVAL naming plugin and key. */
int skv__kv_parse(skv__kvlist *out, const char *text,
                  const char *const *allowed, const char *plugin,
                  skv_error *err);
void skv__kv_free(skv__kvlist *l);
/* Value of key or NULL. */
const char *skv__kv_get(const skv__kvlist *l, const char *key);
/* Element i of a ':'-separated list value; the last element repeats for
 * i past the end (so "16g" applies to every device). Copies into buf. */
int skv__kv_list_item(char *buf, size_t bufsz, const char *value, size_t i);
/* Parse a non-negative integer / boolean value; SKV_EINVAL naming key. */
int skv__kv_uint(uint64_t *out, const char *value, const char *key,
                 const char *plugin, skv_error *err);
int skv__kv_bool(bool *out, const char *value, const char *key,
                 const char *plugin, skv_error *err);

/* ---- NVIDIA-style GPU configuration ------------------------------------- */

typedef struct skv__gpu {
    char id[24];                /* plugin device id */
    char uuid[96];              /* "GPU-..." or "" */
    int minor;                  /* N of /dev/nvidiaN; -1 unknown */
    uint64_t memory_bytes;
    skv_qty shares_capacity;    /* capacity of the shares slot (> 0) */
    char devnode[32];           /* "/dev/nvidiaN", "" when minor < 0; set by
                                   skv__gpu_prepare */
} skv__gpu;

/* Bit i set: the i-th NVIDIA control node (/dev/nvidiactl, /dev/nvidia-uvm,
 * /dev/nvidia-uvm-tools) exists. Probed once, when a plugin opens: the
 * device nodes a machine has do not change while the plugin is open (a
 * driver load or unload means reopening the plugin), and probing them on
 * every container configuration cost three stat() calls each time. */
unsigned skv__gpu_probe_nodes(void);
/* Precompute what skv__gpu_container_config formats per device (the device
 * node path), so that each call only copies strings. */
void skv__gpu_prepare(skv__gpu *gpus, size_t n);

typedef struct skv__gpu_slots {
    const char *device_slot;    /* "cuda.device" */
    const char *shares_slot;    /* "cuda.shares" */
    const char *mps_pipe_dir;   /* NULL: CUDA_MPS_PIPE_DIRECTORY or
                                   /tmp/nvidia-mps */
    unsigned common_nodes;      /* skv__gpu_probe_nodes() at open */
} skv__gpu_slots;

/* Device nodes, CUDA/NVIDIA_VISIBLE_DEVICES and, for shares, MPS limits or
 * the not-enforced flag. Amounts were validated against the devices; gpus
 * went through skv__gpu_prepare. */
int skv__gpu_container_config(skv_container_config *cfg, const skv__gpu *gpus,
                              size_t ngpus, const skv__gpu_slots *slots,
                              const skv_device_amount *amounts, size_t n,
                              skv_error *err);
/* Whether an MPS control daemon listens in dir (NULL: the default dir);
 * *dir_out receives the directory used (static or borrowed). */
bool skv__gpu_mps_running(const char *dir, const char **dir_out);

/* mock_health.c: report the faults listed in path (lines "ID [reason]",
 * ID a device index below n; '#' comments). No file: none. */
int skv__mock_faults_read(const char *path, size_t n,
                          skv_device_health_fn report, void *arg,
                          skv_error *err);

/* Normalize "00000000:34:00.0" to "0000:34:00.0" (lower case). */
void skv__pci_busid_normalize(char *buf, size_t bufsz, const char *in);
/* Local NUMA node of a PCI device: the topology's answer when it knows the
 * bus id, else /sys/bus/pci/devices/<id>/numa_node; -1 when unknown. */
int skv__pci_numa(const skv_topo *topo, const char *busid);

#endif
