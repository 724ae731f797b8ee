/* The agent's node: topology, compute plugins, the CPU/memory slice this
 * agent may use (the rest is held by a reservation placement, so the node
 * mapper never hands it out) and the accelerators as registered.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

static int open_plugin(skv_agent *a, const char *spec, bool optional,
                       skv_error *err)
{
    char name[256];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len >= sizeof(name))
        return skv__err(err, SKV_EINVAL, "plugin list: bad entry '%s'", spec);
    memcpy(name, spec, len);
    name[len] = '\0';
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.topo = a->topo;
    ctx.config = colon ? colon + 1 : NULL;
    skv_plugin *p = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = strchr(name, '/') ? skv_plugin_open_so(&p, name, &ctx, &e)
                               : skv_plugin_open_builtin(&p, name, &ctx, &e);
    if (rc == 0 && optional &&
        skv_device_list_count(skv_plugin_devices(p)) == 0) {
        skv_plugin_free(p);
        return 0;
    }
    if (rc && optional)
        return 0;
    if (rc)
        return skv__err(err, rc, "plugin '%s': %s", name, e.message);
    a->pl[a->npl++] = p;
    return 0;
}

/* An hwloc XML describes another machine: its GPUs become mock devices at
 * the XML's PCI addresses (NVIDIA as "cuda", AMD as "rocm"), so placement
 * can be tested without the hardware; NVML's real GPUs would not match. */
static int open_xml_gpus(skv_agent *a, skv_error *err)
{
    bool cuda = false, rocm = false;
    for (size_t i = 0; i < skv_topo_accel_count(a->topo); i++) {
        const skv_topo_accel *x = skv_topo_accel_at(a->topo, i);
        const char *p = x->compute ? skv_topo_accel_prefix(x) : NULL;
        cuda = cuda || (p && strcmp(p, "cuda") == 0);
        rocm = rocm || (p && strcmp(p, "rocm") == 0);
    }
    int rc = cuda ? open_plugin(a, "mock:topology=1,prefix=cuda", false, err)
                  : 0;
    if (rc == 0 && rocm)
        rc = open_plugin(a, "mock:topology=1,prefix=rocm", false, err);
    if (rc == 0 && (cuda || rocm))
        skv__log(SKV_LOG_INFO, "agent", "topology %s: its GPUs are mock "
                 "devices", skv_topo_source(a->topo));
    return rc;
}

static int open_plugins(skv_agent *a, const char *list, bool xml,
                        skv_error *err)
{
    bool dflt = !list;
    char *copy = skv__strdup(dflt ? "cpu;mem" : list);
    size_t cap = 3;
    for (const char *c = copy; c && *c; c++)
        cap += *c == ';';
    a->pl = skv__calloc(cap, sizeof(*a->pl));
    if (!copy || !a->pl) {
        skv__free(copy);
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    int rc = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ";", &save); rc == 0 && t;
         t = strtok_r(NULL, ";", &save))
        rc = open_plugin(a, t, false, err);
    /* Zero configuration: NVIDIA GPUs when NVML finds some. */
    if (rc == 0 && dflt && !xml)
        rc = open_plugin(a, "cuda", true, err);
    else if (rc == 0 && dflt)
        rc = open_xml_gpus(a, err);
    skv__free(copy);
    return rc;
}

/* Index of the plugin whose map offers slot; -1 when none. */
static long plugin_with(const skv_node *n, const char *slot)
{
    size_t s;
    for (size_t i = 0; i < skv_node_plugin_count(n); i++)
        if (skv_alloc_map_slot_index(skv_node_map(n, i), slot, &s) == 0)
            return (long)i;
    return -1;
}

const char *skv__agent_plugin_slot(const skv_agent *a, size_t plugin,
                                   const char *suffix)
{
    const skv_alloc_map *m = skv_node_map(a->node, plugin);
    size_t sl = strlen(suffix);
    for (size_t s = 0; m && s < skv_alloc_map_slot_count(m); s++) {
        const char *name = skv_alloc_map_slot_name(m, s);
        size_t nl = strlen(name);
        if (nl > sl && strcmp(name + nl - sl, suffix) == 0)
            return name;
    }
    return NULL;
}

static int add_dev(skv_agent *a, size_t pi, const char *prefix,
                   const char *dev, skv_error *err)
{
    skv__agent_dev *d = &a->devs[a->ndevs];
    d->id = skv__asprintf("%s%s", prefix, dev);
    d->dev = skv__strdup(dev);
    d->kind = skv__strdup(skv_plugin_name(skv_node_plugin_at(a->node, pi)));
    d->plugin = pi;
    a->ndevs++;
    if (!d->id || !d->dev || !d->kind)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    return 0;
}

/* Every device of every accelerator plugin, named after its *.device slot
 * ("cuda.device" + device "0" -> "cuda0"). */
static int build_devs(skv_agent *a, skv_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < skv_node_plugin_count(a->node); i++)
        total += skv_alloc_map_device_count(skv_node_map(a->node, i));
    a->devs = skv__calloc(total + 1, sizeof(*a->devs));
    if (!a->devs)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; i < skv_node_plugin_count(a->node); i++) {
        const char *slot = skv__agent_plugin_slot(a, i, ".device");
        const skv_alloc_map *m = skv_node_map(a->node, i);
        if (!slot || plugin_with(a->node, "cpu") == (long)i ||
            plugin_with(a->node, "mem") == (long)i)
            continue;
        char prefix[SKV_SLOT_NAME_MAX];
        snprintf(prefix, sizeof(prefix), "%.*s",
                 (int)(strlen(slot) - strlen(".device")), slot);
        for (size_t d = 0; d < skv_alloc_map_device_count(m); d++) {
            int rc = add_dev(a, i, prefix, skv_alloc_map_device_id(m, d), err);
            if (rc)
                return rc;
            if (skv__agent_dev_find(a, a->devs[a->ndevs - 1].id) !=
                &a->devs[a->ndevs - 1])
                return skv__err(err, SKV_EEXIST, "two accelerators are both "
                                "named '%s'", a->devs[a->ndevs - 1].id);
        }
    }
    return 0;
}

int skv__agent_accel_slice(skv_agent *a, const char *list, skv_error *err)
{
    if (!list)
        return 0;
    for (size_t i = 0; i < a->ndevs; i++)
        a->devs[i].excluded = true;
    char *copy = skv__strdup(list);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); rc == 0 && t;
         t = strtok_r(NULL, ", ", &save)) {
        skv__agent_dev *d = (skv__agent_dev *)skv__agent_dev_find(a, t);
        if (!d)
            rc = skv__err(err, SKV_EINVAL, "agent option accelerators: this "
                          "node has no accelerator '%s'", t);
        else
            d->excluded = false;
    }
    skv__free(copy);
    return rc;
}

const skv__agent_dev *skv__agent_dev_find(const skv_agent *a, const char *id)
{
    for (size_t i = 0; id && i < a->ndevs; i++)
        if (strcmp(a->devs[i].id, id) == 0)
            return &a->devs[i];
    return NULL;
}

int skv__agent_setup_node(skv_agent *a, const skv_agent_options *o,
                          skv_error *err)
{
    int rc = o->topology_xml ? skv_topo_load_xml(&a->topo, o->topology_xml,
                                                 err)
                             : skv_topo_load_live(&a->topo, err);
    if (rc == 0)
        rc = open_plugins(a, o->plugins, o->topology_xml != NULL, err);
    if (rc == 0)
        rc = skv_node_new(&a->node, a->topo, a->pl, a->npl, err);
    if (rc == 0 && (plugin_with(a->node, "cpu") < 0 ||
                    plugin_with(a->node, "mem") < 0))
        rc = skv__err(err, SKV_EINVAL, "agent: the plugin list must provide "
                      "the 'cpu' and 'mem' slots (plugins cpu and mem)");
    if (rc == 0)
        rc = build_devs(a, err);
    if (rc == 0)
        rc = skv__agent_accel_slice(a, o->version >= 2 ? o->accelerators
                                                       : NULL, err);
    if (rc == 0)
        rc = skv__agent_slice(a, o->cpus, o->memory_bytes, err);
    return rc;
}

void skv__agent_free_node(skv_agent *a)
{
    if (a->reserve && a->node)
        skv_node_release(a->node, a->reserve, NULL);
    skv_node_placement_free(a->reserve);
    skv_node_free(a->node);
    for (size_t i = 0; i < a->npl; i++)
        skv_plugin_free(a->pl[i]);
    skv__free(a->pl);
    for (size_t i = 0; i < a->ndevs; i++) {
        skv__free(a->devs[i].id);
        skv__free(a->devs[i].dev);
        skv__free(a->devs[i].kind);
    }
    skv__free(a->devs);
    skv__free(a->slice_cpus);
    skv_topo_free(a->topo);
}
