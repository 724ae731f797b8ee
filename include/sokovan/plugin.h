/*
 * sokovan/plugin.h - compute plugins: the code that knows one kind of
 * device (CPU cores, NUMA memory, NVIDIA GPUs, ...). A plugin declares its
 * slot types and its devices, and turns an allocation (amounts per device)
 * into container configuration (device nodes, environment, mounts, cpuset)
 * and reports statistics.
 *
 * Built-in plugins: "cpu", "mem", "cuda" (NVML loaded with dlopen at run
 * time), "mock" (a configured accelerator, for CI without GPUs). Out-of-tree
 * plugins are shared objects exporting SKV_PLUGIN_ENTRY_SYMBOL, a function
 * returning a skv_compute_plugin_ops table. A plugin never needs to link
 * against libsokovan: every service it uses comes through the
 * skv_plugin_host table it is handed.
 *
 * Thread-safety: a skv_plugin object needs exclusive access for every call
 * (plugins may keep state); distinct plugin objects are independent, except
 * that the cuda plugin's NVML library is process-wide (opened per plugin
 * object, reference-counted by the dynamic loader). Device lists, container
 * configurations and statistics follow the default rule: read concurrently,
 * modify exclusively.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_PLUGIN_H
#define SOKOVAN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/alloc.h"
#include "sokovan/common.h"
#include "sokovan/slots.h"
#include "sokovan/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices ------------------------------------------------------------ */

/* Capacity of one slot on one device. */
typedef struct skv_device_slot {
    const char *slot;   /* a slot name the plugin declared */
    skv_qty qty;        /* capacity in that slot's unit (milli-units/bytes) */
} skv_device_slot;

/* One device of a plugin. When added to a list everything is copied; the
 * pointers of a device read back from a list are borrowed from the list. */
typedef struct skv_device {
    const char *id;             /* unique within the plugin: "0", "nvml3" */
    int numa_node;              /* local NUMA node id; -1 unknown */
    const char *pci_bus_id;     /* "0000:34:00.0"; NULL/"" none */
    uint64_t memory_bytes;      /* device memory; 0 none/unknown */
    uint32_t processing_units;  /* SMs, compute units, PUs; 0 unknown */
    const char *model;          /* "Tesla V100-SXM3-32GB"; NULL/"" unknown */
    const skv_device_slot *slots; /* per-slot capacities of this device */
    size_t nslots;
} skv_device;

typedef struct skv_device_list skv_device_list;

SKV_EXTERN int skv_device_list_new(skv_device_list **out, skv_error *err);
SKV_EXTERN void skv_device_list_free(skv_device_list *list);
/* Copy dev into the list. Empty or duplicate id, invalid slot name,
 * duplicate slot in the device, negative or unlimited capacity: SKV_EINVAL
 * (list unchanged). */
SKV_EXTERN int skv_device_list_add(skv_device_list *list,
                                   const skv_device *dev, skv_error *err);
SKV_EXTERN size_t skv_device_list_count(const skv_device_list *list);
/* In insertion order; NULL past the end. Strings are never NULL ("" for
 * unknown). Borrowed until the list is modified or freed. */
SKV_EXTERN const skv_device *skv_device_list_at(const skv_device_list *list,
                                                size_t index);
SKV_EXTERN const skv_device *skv_device_list_find(const skv_device_list *list,
                                                  const char *id);
/* Capacity of dev in slot (0 when the device has no such slot). */
SKV_EXTERN skv_qty skv_device_capacity(const skv_device *dev,
                                       const char *slot);

/* ---- allocations handed to plugins --------------------------------------- */

/* An amount of one slot taken on one device. */
typedef struct skv_device_amount {
    const char *device_id;
    const char *slot;
    skv_qty qty;
} skv_device_amount;

/* ---- container configuration ------------------------------------------- */

/* Flags of a container configuration. */
#define SKV_CCFG_SHARES_NOT_ENFORCED 0x1u /* fractional device shares are
                                             accounted but not enforced
                                             (e.g. no NVIDIA MPS daemon) */
#define SKV_CCFG_MOUNT_READONLY 0x1u     /* mount flag */

typedef struct skv_container_config skv_container_config;

typedef struct skv_ccfg_mount {
    const char *source;
    const char *target;
    unsigned flags;             /* SKV_CCFG_MOUNT_* */
} skv_ccfg_mount;

SKV_EXTERN int skv_container_config_new(skv_container_config **out,
                                        skv_error *err);
SKV_EXTERN void skv_container_config_free(skv_container_config *cfg);
/* Add a device node path ("/dev/nvidia0"); adding one twice is a no-op.
 * Must be an absolute path without "..": else SKV_EINVAL. */
SKV_EXTERN int skv_container_config_add_device(skv_container_config *cfg,
                                               const char *path,
                                               skv_error *err);
/* Set (or replace) an environment variable. name: [A-Za-z_][A-Za-z0-9_]*. */
SKV_EXTERN int skv_container_config_set_env(skv_container_config *cfg,
                                            const char *name,
                                            const char *value, skv_error *err);
/* Add a bind mount (absolute paths; a second mount onto the same target
 * is SKV_EEXIST unless source and flags are identical). */
SKV_EXTERN int skv_container_config_add_mount(skv_container_config *cfg,
                                              const char *source,
                                              const char *target,
                                              unsigned flags, skv_error *err);
/* cpuset.cpus / cpuset.mems list strings ("0-3,8"); validated with
 * skv_topo_cpulist_parse and stored in canonical form. NULL clears. */
SKV_EXTERN int skv_container_config_set_cpus(skv_container_config *cfg,
                                             const char *cpulist,
                                             skv_error *err);
SKV_EXTERN int skv_container_config_set_mems(skv_container_config *cfg,
                                             const char *nodelist,
                                             skv_error *err);
/* OR flags (SKV_CCFG_SHARES_NOT_ENFORCED ...) into the configuration. */
SKV_EXTERN void skv_container_config_add_flags(skv_container_config *cfg,
                                               unsigned flags);
SKV_EXTERN unsigned skv_container_config_flags(const skv_container_config *cfg);
/* Merge src into dst (devices, env, mounts, cpus/mems when set in src,
 * flags). A conflicting env value or mount: SKV_EEXIST, dst unchanged. */
SKV_EXTERN int skv_container_config_merge(skv_container_config *dst,
                                          const skv_container_config *src,
                                          skv_error *err);

/* Getters; borrowed until the configuration is modified or freed. */
SKV_EXTERN size_t skv_container_config_device_count(
    const skv_container_config *cfg);
SKV_EXTERN const char *skv_container_config_device_at(
    const skv_container_config *cfg, size_t index);
SKV_EXTERN size_t skv_container_config_env_count(
    const skv_container_config *cfg);
/* Entries in name order. SKV_ERANGE past the end. */
SKV_EXTERN int skv_container_config_env_at(const skv_container_config *cfg,
                                           size_t index, const char **name,
                                           const char **value);
/* Value of name, NULL when unset. */
SKV_EXTERN const char *skv_container_config_get_env(
    const skv_container_config *cfg, const char *name);
SKV_EXTERN size_t skv_container_config_mount_count(
    const skv_container_config *cfg);
SKV_EXTERN const skv_ccfg_mount *skv_container_config_mount_at(
    const skv_container_config *cfg, size_t index);
/* NULL when not set. */
SKV_EXTERN const char *skv_container_config_cpus(const skv_container_config *cfg);
SKV_EXTERN const char *skv_container_config_mems(const skv_container_config *cfg);

/* ---- statistics --------------------------------------------------------- */

/* One measurement: metric of a device ("" device = the whole plugin). */
typedef struct skv_stat {
    const char *device_id;
    const char *metric;         /* "memory_used_bytes", "cpu_busy_ticks" ... */
    int64_t value;
} skv_stat;

typedef struct skv_stats skv_stats;

SKV_EXTERN int skv_stats_new(skv_stats **out, skv_error *err);
SKV_EXTERN void skv_stats_free(skv_stats *stats);
/* Append one measurement (strings copied). Empty metric: SKV_EINVAL. */
SKV_EXTERN int skv_stats_add(skv_stats *stats, const char *device_id,
                             const char *metric, int64_t value,
                             skv_error *err);
SKV_EXTERN size_t skv_stats_count(const skv_stats *stats);
SKV_EXTERN const skv_stat *skv_stats_at(const skv_stats *stats, size_t index);
/* Lookup of (device_id, metric): SKV_ENOENT when absent. */
SKV_EXTERN int skv_stats_get(const skv_stats *stats, const char *device_id,
                             const char *metric, int64_t *value);

/* ---- the plugin ABI ------------------------------------------------------ */

/* ABI 2 added `health` at the end of the table; tables of ABI 1 still
 * load (and report no health). */
#define SKV_PLUGIN_ABI_VERSION 2u
#define SKV_PLUGIN_ABI_MIN 1u
#define SKV_PLUGIN_ENTRY_SYMBOL "skv_compute_plugin_entry"
#define SKV_PLUGIN_CONTEXT_VERSION 1u

/* A slot type a plugin provides, with how its allocation map hands it out
 * (see sokovan/alloc.h). Copied when declared. */
typedef struct skv_plugin_slot {
    const char *name;           /* valid slot name ("cuda.shares") */
    skv_slot_kind kind;         /* COUNT, BYTES or UNIQUE */
    const char *unit;           /* display unit ("GPU", "B") or NULL */
    skv_alloc_mode mode;        /* DISCRETE or FRACTIONAL */
    skv_qty quantum;            /* 0: the alloc module's default */
    unsigned exclusive_group;   /* 0 none; same non-zero group = exclusive */
    unsigned flags;             /* SKV_ALLOC_SLOT_* (SKV_ALLOC_SLOT_ANTIFRAG) */
} skv_plugin_slot;

/* Collector the library hands to declare_slots. */
typedef struct skv_plugin_slots skv_plugin_slots;

/* Services of the library, handed to every plugin call that needs them, so
 * that plugins need not link against libsokovan. Grows only at the end. */
typedef struct skv_plugin_host {
    uint32_t abi_version;       /* SKV_PLUGIN_ABI_VERSION */
    /* Declare one slot (invalid name/kind/mode, duplicate: SKV_EINVAL). */
    int (*slot_declare)(skv_plugin_slots *out, const skv_plugin_slot *slot,
                        skv_error *err);
    int (*device_add)(skv_device_list *list, const skv_device *dev,
                      skv_error *err);
    int (*ccfg_add_device)(skv_container_config *cfg, const char *path,
                           skv_error *err);
    int (*ccfg_set_env)(skv_container_config *cfg, const char *name,
                        const char *value, skv_error *err);
    int (*ccfg_add_mount)(skv_container_config *cfg, const char *source,
                          const char *target, unsigned flags, skv_error *err);
    void (*ccfg_add_flags)(skv_container_config *cfg, unsigned flags);
    int (*stats_add)(skv_stats *stats, const char *device_id,
                     const char *metric, int64_t value, skv_error *err);
    int (*qty_parse)(skv_qty *out, const char *text, skv_slot_kind kind,
                     skv_error *err);
    void (*log)(skv_log_level level, const char *plugin, const char *msg);
    /* Every /sys, /proc, /dev path must be resolved with this (system root). */
    int (*sys_path)(char *buf, size_t bufsz, const char *abs_path,
                    skv_error *err);
} skv_plugin_host;

/* What a plugin is opened with. */
typedef struct skv_plugin_context {
    unsigned version;           /* SKV_PLUGIN_CONTEXT_VERSION */
    const skv_topo *topo;       /* the machine; may be NULL for plugins that
                                   do not need it (cpu/mem require it). Must
                                   outlive the plugin object. */
    const char *config;         /* plugin-specific "key=value,..." or NULL */
} skv_plugin_context;

#define SKV_PLUGIN_CONTEXT_INIT {SKV_PLUGIN_CONTEXT_VERSION, NULL, NULL}

/* The function table. abi_version first; new members only at the end.
 * Optional members may be NULL. Every callback gets the plugin's state. */
/* Receives one unhealthy device (see skv_compute_plugin_ops.health);
 * non-zero stops the report with that error. */
typedef int (*skv_device_health_fn)(void *arg, const char *device_id,
                                    const char *reason);

typedef struct skv_compute_plugin_ops {
    uint32_t abi_version;       /* SKV_PLUGIN_ABI_VERSION */
    const char *name;           /* [a-z][a-z0-9_-]*, shorter than 32 */
    const char *version;        /* the plugin's own version, free text */
    /* Create the state (optional; state NULL when absent). */
    int (*init)(void **state, const skv_plugin_context *ctx,
                const skv_plugin_host *host, skv_error *err);
    void (*fini)(void *state);  /* optional */
    /* Declare the plugin's slot types with host->slot_declare (required;
     * called once, when the plugin is opened). */
    int (*declare_slots)(void *state, skv_plugin_slots *out,
                         const skv_plugin_host *host, skv_error *err);
    /* Add the plugin's devices to out (required; zero devices is fine). */
    int (*list_devices)(void *state, skv_device_list *out,
                        const skv_plugin_host *host, skv_error *err);
    /* Build the allocation map for these devices (optional: the library
     * builds the standard map from the device capacities when NULL). */
    int (*create_map)(void *state, skv_alloc_map **out,
                      const skv_device_list *devices,
                      const skv_alloc_map_options *opts,
                      const skv_slot_registry *reg,
                      const skv_plugin_host *host, skv_error *err);
    /* Add what a container needs for these amounts (optional). Amounts
     * name devices of this plugin only. */
    int (*container_config)(void *state, skv_container_config *cfg,
                            const skv_device_amount *amounts, size_t n,
                            const skv_plugin_host *host, skv_error *err);
    /* Append current measurements (optional). */
    int (*stats)(void *state, skv_stats *out, const skv_plugin_host *host,
                 skv_error *err);
    /* ABI 2: the devices that are unhealthy now (optional: all healthy).
     * Call report once per unhealthy device with its id and a short reason
     * ("xid 79", "injected fault"); devices not reported are healthy. The
     * agent calls it periodically; it must not block. */
    int (*health)(void *state, skv_device_health_fn report, void *arg,
                  skv_error *err);
} skv_compute_plugin_ops;

/* The symbol an out-of-tree plugin exports. */
typedef const skv_compute_plugin_ops *(*skv_compute_plugin_entry_fn)(void);

/* ---- plugin objects ------------------------------------------------------ */

typedef struct skv_plugin skv_plugin;

/* Names of the built-in plugins ("cpu", "mem", "cuda", "mock"), NULL
 * terminated. */
SKV_EXTERN const char *const *skv_plugin_builtin_names(void);
/* Open a built-in plugin by name (SKV_ENOENT when unknown). The plugin's
 * devices are listed once, here. ctx may be NULL (no topology, no config). */
SKV_EXTERN int skv_plugin_open_builtin(skv_plugin **out, const char *name,
                                       const skv_plugin_context *ctx,
                                       skv_error *err);
/* Open a plugin from a shared object exporting SKV_PLUGIN_ENTRY_SYMBOL.
 * Not loadable: SKV_EIO; no entry symbol or invalid table: SKV_EINVAL;
 * another ABI version: SKV_EVERSION. The object is closed on failure. */
SKV_EXTERN int skv_plugin_open_so(skv_plugin **out, const char *path,
                                  const skv_plugin_context *ctx,
                                  skv_error *err);
/* Open a plugin from a table linked into the host program (the table must
 * outlive the plugin object). Same checks as skv_plugin_open_so. */
SKV_EXTERN int skv_plugin_open_ops(skv_plugin **out,
                                   const skv_compute_plugin_ops *ops,
                                   const skv_plugin_context *ctx,
                                   skv_error *err);
SKV_EXTERN void skv_plugin_free(skv_plugin *plugin);

SKV_EXTERN const char *skv_plugin_name(const skv_plugin *plugin);
SKV_EXTERN const char *skv_plugin_version(const skv_plugin *plugin);
/* The host table the library hands to plugins (for hosts wrapping plugins). */
SKV_EXTERN const skv_plugin_host *skv_plugin_host_table(void);

/* The slot types the plugin declared, in declaration order. */
SKV_EXTERN size_t skv_plugin_slot_count(const skv_plugin *plugin);
SKV_EXTERN const skv_plugin_slot *skv_plugin_slot_at(const skv_plugin *plugin,
                                                     size_t index);
/* Register the plugin's slot types into reg (kind and unit; an existing
 * entry with another kind or unit: SKV_EEXIST, reg unchanged). */
SKV_EXTERN int skv_plugin_declare_slots(skv_plugin *plugin,
                                        skv_slot_registry *reg,
                                        skv_error *err);
/* The devices listed when the plugin was opened. */
SKV_EXTERN const skv_device_list *skv_plugin_devices(const skv_plugin *plugin);
/* Create the plugin's allocation map over its devices: the plugin's own
 * create_map, or the standard one (its slots as declared, one map device
 * per device with its NUMA node and capacities, strategy from opts; opts
 * NULL: alloc's defaults). reg (may be NULL) is handed to the plugin's own
 * create_map. Free with skv_alloc_map_free. */
SKV_EXTERN int skv_plugin_create_map(skv_plugin *plugin, skv_alloc_map **out,
                                     const skv_alloc_map_options *opts,
                                     const skv_slot_registry *reg,
                                     skv_error *err);
/* Add the container configuration for amounts taken from this plugin's
 * devices to cfg. Unknown device id, or a slot that device lacks:
 * SKV_EINVAL. On failure cfg is unchanged. */
SKV_EXTERN int skv_plugin_container_config(skv_plugin *plugin,
                                           skv_container_config *cfg,
                                           const skv_device_amount *amounts,
                                           size_t n, skv_error *err);
/* The same for an allocation result of a map made by skv_plugin_create_map
 * (map device ids and slot names are the plugin's). A released result:
 * SKV_ESTATE. */
SKV_EXTERN int skv_plugin_container_config_result(skv_plugin *plugin,
                                                  skv_container_config *cfg,
                                                  const skv_alloc_map *map,
                                                  const skv_alloc_result *r,
                                                  skv_error *err);
/* Append the plugin's measurements to out (nothing when it has none). */
/* The plugin's unhealthy devices now, one report(arg, id, reason) each (a
 * plugin without health reporting, or of ABI 1, reports none). */
SKV_EXTERN int skv_plugin_health(skv_plugin *plugin,
                                 skv_device_health_fn report, void *arg,
                                 skv_error *err);
SKV_EXTERN int skv_plugin_stats(skv_plugin *plugin, skv_stats *out,
                                skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_PLUGIN_H */
