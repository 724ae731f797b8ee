/* sokovan-topo: the machine and an allocation as JSON or as tables.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "topo_tool.h"

static const char *fmt_qty(char *buf, skv_qty q, skv_slot_kind kind)
{
    skv_qty_format(buf, SKV_QTY_FORMAT_MAX, q,
                   kind == SKV_SLOT_BYTES ? SKV_SLOT_BYTES : SKV_SLOT_COUNT);
    return buf;
}

/* Memory for people: "754.6 GiB" ("-" for 0). Display only; the JSON
 * carries exact byte counts. */
static const char *human(char *buf, uint64_t bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes == 0)
        return "-";
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        v /= 1024;
        u++;
    }
    snprintf(buf, SKV_QTY_FORMAT_MAX, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

/* The kind of a slot name, from the node's registry. */
static skv_slot_kind kind_of(const tool *t, const char *slot)
{
    skv_slot_kind k = SKV_SLOT_COUNT;
    skv_slot_registry_lookup(skv_node_registry(t->node), slot, &k, NULL);
    return k;
}

static size_t cores_on(const skv_topo *topo, int node)
{
    size_t n = 0;
    for (size_t i = 0; i < skv_topo_core_count(topo); i++)
        n += skv_topo_core_at(topo, i)->numa_node == node;
    return n;
}

static void json_numa(const tool *t, json *j)
{
    json_open(j, "numa_nodes", '[');
    for (size_t i = 0; i < skv_topo_numa_count(t->topo); i++) {
        const skv_topo_numa *n = skv_topo_numa_at(t->topo, i);
        json_open(j, NULL, '{');
        json_int(j, "id", n->id);
        json_str(j, "cpus", n->cpuset);
        json_int(j, "cores", (long long)cores_on(t->topo, n->id));
        json_int(j, "memory_bytes", (long long)n->memory_bytes);
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_device(const tool *t, json *j, const skv_plugin *p,
                        const skv_device *d)
{
    char buf[SKV_QTY_FORMAT_MAX];
    json_open(j, NULL, '{');
    json_str(j, "plugin", skv_plugin_name(p));
    json_str(j, "id", d->id);
    json_int(j, "numa_node", d->numa_node);
    json_str(j, "pci_bus_id", d->pci_bus_id);
    json_str(j, "model", d->model);
    json_int(j, "memory_bytes", (long long)d->memory_bytes);
    json_open(j, "slots", '{');
    for (size_t s = 0; s < d->nslots; s++)
        json_str(j, d->slots[s].slot,
                 fmt_qty(buf, d->slots[s].qty, kind_of(t, d->slots[s].slot)));
    json_close(j, '}');
    json_close(j, '}');
}

static void json_slots(const tool *t, json *j)
{
    char buf[SKV_QTY_FORMAT_MAX];
    json_open(j, "slots", '[');
    for (size_t i = 0; i < skv_node_plugin_count(t->node); i++) {
        const skv_alloc_map *m = skv_node_map(t->node, i);
        for (size_t s = 0; s < skv_alloc_map_slot_count(m); s++) {
            skv_alloc_slot_spec spec;
            skv_alloc_map_slot_spec(m, s, &spec);
            skv_qty cap = skv_alloc_map_capacity(m, s, SKV_ALLOC_ALL);
            json_open(j, NULL, '{');
            json_str(j, "name", spec.name);
            json_str(j, "plugin", skv_plugin_name(skv_node_plugin_at(t->node, i)));
            json_str(j, "kind", skv_slot_kind_name(spec.kind));
            json_str(j, "mode", spec.mode == SKV_ALLOC_DISCRETE ? "discrete"
                                                                : "fractional");
            json_str(j, "capacity", fmt_qty(buf, cap, spec.kind));
            json_int(j, "capacity_raw", (long long)cap);
            json_close(j, '}');
        }
    }
    json_close(j, ']');
}

static void json_allocation(const tool *t, json *j)
{
    const skv_node_placement *a = t->placement;
    char buf[SKV_QTY_FORMAT_MAX];
    json_open(j, "allocation", '{');
    json_str(j, "request", t->request);
    json_str(j, "policy", skv_node_policy_name(t->policy));
    json_open(j, "devices", '[');
    skv_node_amount am;
    for (size_t i = 0; skv_node_placement_at(a, i, &am) == 0; i++) {
        json_open(j, NULL, '{');
        json_str(j, "plugin", am.plugin);
        json_str(j, "slot", am.slot);
        json_str(j, "id", am.device);
        json_int(j, "numa_node", am.numa_node);
        json_str(j, "pci_bus_id", am.pci_bus_id);
        json_str(j, "amount", fmt_qty(buf, am.qty, kind_of(t, am.slot)));
        json_int(j, "amount_raw", (long long)am.qty);
        json_close(j, '}');
    }
    json_close(j, ']');
    json_str(j, "cpuset", skv_node_placement_cpuset(a));
    json_str(j, "mems", skv_node_placement_mems(a));
    int nodes[64];
    size_t nn = skv_node_placement_numa_nodes(a, nodes, 64);
    json_open(j, "numa_nodes", '[');
    for (size_t i = 0; i < nn && i < 64; i++)
        json_int(j, NULL, nodes[i]);
    json_close(j, ']');
    const skv_container_config *cfg = skv_node_placement_config(a);
    json_open(j, "env", '{');
    const char *name, *value;
    for (size_t i = 0; skv_container_config_env_at(cfg, i, &name, &value) == 0;
         i++)
        json_str(j, name, value);
    json_close(j, '}');
    json_open(j, "device_nodes", '[');
    for (size_t i = 0; i < skv_container_config_device_count(cfg); i++)
        json_str(j, NULL, skv_container_config_device_at(cfg, i));
    json_close(j, ']');
    json_int(j, "shares_not_enforced",
             (skv_container_config_flags(cfg) & SKV_CCFG_SHARES_NOT_ENFORCED)
                 != 0);
    json_close(j, '}');
}

void print_json(const tool *t, FILE *f)
{
    json j;
    json_begin(&j, f);
    json_open(&j, NULL, '{');
    json_str(&j, "source", skv_topo_source(t->topo));
    json_int(&j, "cores", (long long)skv_topo_core_count(t->topo));
    json_int(&j, "pus", (long long)skv_topo_pu_count(t->topo));
    json_int(&j, "memory_bytes", (long long)skv_topo_memory_bytes(t->topo));
    json_numa(t, &j);
    json_open(&j, "devices", '[');
    for (size_t i = 0; i < t->nplugins; i++) {
        const skv_device_list *l = skv_plugin_devices(t->plugins[i]);
        for (size_t d = 0; d < skv_device_list_count(l); d++)
            json_device(t, &j, t->plugins[i], skv_device_list_at(l, d));
    }
    json_close(&j, ']');
    json_slots(t, &j);
    if (t->placement)
        json_allocation(t, &j);
    json_close(&j, '}');
    json_end(&j);
}

static void table_machine(const tool *t, FILE *f)
{
    char buf[SKV_QTY_FORMAT_MAX];
    fprintf(f, "Machine: %s\n  %zu NUMA nodes, %zu cores, %zu PUs, memory %s\n\n",
            skv_topo_source(t->topo), skv_topo_numa_count(t->topo),
            skv_topo_core_count(t->topo), skv_topo_pu_count(t->topo),
            human(buf, skv_topo_memory_bytes(t->topo)));
    fprintf(f, "%-6s %-24s %-6s %s\n", "NUMA", "CPUS", "CORES", "MEMORY");
    for (size_t i = 0; i < skv_topo_numa_count(t->topo); i++) {
        const skv_topo_numa *n = skv_topo_numa_at(t->topo, i);
        fprintf(f, "%-6d %-24s %-6zu %s\n", n->id, *n->cpuset ? n->cpuset : "-",
                cores_on(t->topo, n->id),
                human(buf, n->memory_bytes));
    }
}

static void table_devices(const tool *t, FILE *f)
{
    char buf[SKV_QTY_FORMAT_MAX];
    bool header = false;
    for (size_t i = 0; i < t->nplugins; i++) {
        const char *pn = skv_plugin_name(t->plugins[i]);
        if (strcmp(pn, "cpu") == 0 || strcmp(pn, "mem") == 0)
            continue;
        const skv_device_list *l = skv_plugin_devices(t->plugins[i]);
        for (size_t d = 0; d < skv_device_list_count(l); d++) {
            const skv_device *dev = skv_device_list_at(l, d);
            if (!header)
                fprintf(f, "\n%-7s %-6s %-5s %-14s %-10s %s\n", "PLUGIN", "ID",
                        "NUMA", "PCI", "MEMORY", "MODEL");
            header = true;
            fprintf(f, "%-7s %-6s %-5d %-14s %-10s %s\n", pn, dev->id,
                    dev->numa_node, *dev->pci_bus_id ? dev->pci_bus_id : "-",
                    human(buf, dev->memory_bytes),
                    *dev->model ? dev->model : "-");
        }
    }
    if (!header)
        fprintf(f, "\nNo accelerators.\n");
}

static void table_slots(const tool *t, FILE *f)
{
    char buf[SKV_QTY_FORMAT_MAX];
    fprintf(f, "\n%-16s %-8s %-7s %-11s %s\n", "SLOT", "PLUGIN", "KIND",
            "MODE", "CAPACITY");
    for (size_t i = 0; i < skv_node_plugin_count(t->node); i++) {
        const skv_alloc_map *m = skv_node_map(t->node, i);
        for (size_t s = 0; s < skv_alloc_map_slot_count(m); s++) {
            skv_alloc_slot_spec spec;
            skv_alloc_map_slot_spec(m, s, &spec);
            fprintf(f, "%-16s %-8s %-7s %-11s %s\n", spec.name,
                    skv_plugin_name(skv_node_plugin_at(t->node, i)),
                    skv_slot_kind_name(spec.kind),
                    spec.mode == SKV_ALLOC_DISCRETE ? "discrete" : "fractional",
                    fmt_qty(buf, skv_alloc_map_capacity(m, s, SKV_ALLOC_ALL),
                            spec.kind));
        }
    }
}

static void table_allocation(const tool *t, FILE *f)
{
    const skv_node_placement *a = t->placement;
    char buf[SKV_QTY_FORMAT_MAX];
    fprintf(f, "\nAllocation of %s (%s):\n", t->request,
            skv_node_policy_name(t->policy));
    fprintf(f, "  %-7s %-14s %-6s %-5s %-14s %s\n", "PLUGIN", "SLOT", "DEVICE",
            "NUMA", "PCI", "AMOUNT");
    skv_node_amount am;
    for (size_t i = 0; skv_node_placement_at(a, i, &am) == 0; i++)
        fprintf(f, "  %-7s %-14s %-6s %-5d %-14s %s\n", am.plugin, am.slot,
                am.device, am.numa_node, *am.pci_bus_id ? am.pci_bus_id : "-",
                fmt_qty(buf, am.qty, kind_of(t, am.slot)));
    fprintf(f, "  cpuset: %s\n  mems:   %s\n",
            *skv_node_placement_cpuset(a) ? skv_node_placement_cpuset(a) : "-",
            *skv_node_placement_mems(a) ? skv_node_placement_mems(a) : "-");
    const skv_container_config *cfg = skv_node_placement_config(a);
    const char *name, *value;
    for (size_t i = 0; skv_container_config_env_at(cfg, i, &name, &value) == 0;
         i++)
        fprintf(f, "  env:    %s=%s\n", name, value);
    for (size_t i = 0; i < skv_container_config_device_count(cfg); i++)
        fprintf(f, "  device: %s\n", skv_container_config_device_at(cfg, i));
    if (skv_container_config_flags(cfg) & SKV_CCFG_SHARES_NOT_ENFORCED)
        fprintf(f, "  note:   fractional shares are accounted, not enforced\n");
}

void print_table(const tool *t, FILE *f)
{
    table_machine(t, f);
    table_devices(t, f);
    table_slots(t, f);
    if (t->placement)
        table_allocation(t, f);
}
