/* What hosts ask of an open plugin: register its slots, build its
 * allocation map, container configuration and statistics.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

int skv_plugin_declare_slots(skv_plugin *p, skv_slot_registry *reg,
                             skv_error *err)
{
    if (!p || !reg)
        return skv__err(err, SKV_EINVAL, "plugin_declare_slots: NULL argument");
    /* Check everything first so that a conflict leaves reg unchanged. */
    for (size_t i = 0; i < skv_plugin_slot_count(p); i++) {
        const skv_plugin_slot *s = skv_plugin_slot_at(p, i);
        skv_slot_kind kind;
        const char *unit;
        if (skv_slot_registry_lookup(reg, s->name, &kind, &unit) == 0 &&
            (kind != s->kind || strcmp(unit ? unit : "", s->unit) != 0))
            return skv__err(err, SKV_EEXIST, "plugin '%s': slot '%s' is "
                            "already registered as %s '%s'",
                            skv_plugin_name(p), s->name,
                            skv_slot_kind_name(kind), unit ? unit : "");
    }
    for (size_t i = 0; i < skv_plugin_slot_count(p); i++) {
        const skv_plugin_slot *s = skv_plugin_slot_at(p, i);
        int rc = skv_slot_registry_add(reg, s->name, s->kind, s->unit, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int add_slots(skv_alloc_map *m, const skv_plugin *p, skv_error *err)
{
    for (size_t i = 0; i < skv_plugin_slot_count(p); i++) {
        const skv_plugin_slot *s = skv_plugin_slot_at(p, i);
        skv_alloc_slot_spec spec = SKV_ALLOC_SLOT_SPEC_INIT;
        spec.name = s->name;
        spec.kind = s->kind;
        spec.mode = s->mode;
        spec.quantum = s->quantum;
        spec.exclusive_group = s->exclusive_group;
        spec.flags = s->flags;
        int rc = skv_alloc_map_add_slot(m, NULL, &spec, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The standard map: declared slots, one device per plugin device. */
static int standard_map(skv_alloc_map **out, const skv_plugin *p,
                        const skv_alloc_map_options *opts, skv_error *err)
{
    skv_alloc_map *m;
    int rc = skv_alloc_map_new(&m, opts, err);
    if (rc)
        return rc;
    rc = add_slots(m, p, err);
    const skv_device_list *devs = skv_plugin_devices(p);
    for (size_t i = 0; !rc && i < skv_device_list_count(devs); i++) {
        const skv_device *d = skv_device_list_at(devs, i);
        size_t idx;
        rc = skv_alloc_map_add_device(m, &idx, d->id, d->numa_node, err);
        for (size_t j = 0; !rc && j < d->nslots; j++)
            if (d->slots[j].qty > 0)
                rc = skv_alloc_map_set_capacity(m, idx, d->slots[j].slot,
                                                d->slots[j].qty, err);
    }
    if (rc) {
        skv__err_prefix(err, "plugin '%s': building its map",
                        skv_plugin_name(p));
        skv_alloc_map_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int skv_plugin_create_map(skv_plugin *p, skv_alloc_map **out,
                          const skv_alloc_map_options *opts,
                          const skv_slot_registry *reg, skv_error *err)
{
    if (!p || !out)
        return skv__err(err, SKV_EINVAL, "plugin_create_map: NULL argument");
    void *state;
    const skv_compute_plugin_ops *ops = skv__plugin_ops(p, &state);
    if (!ops->create_map)
        return standard_map(out, p, opts, err);
    skv_error le = SKV_ERROR_INIT;
    skv_alloc_map *m = NULL;
    int rc = ops->create_map(state, &m, skv_plugin_devices(p), opts, reg,
                             skv_plugin_host_table(), &le);
    if ((rc = skv__plugin_call_rc(p, rc, &le, err, "create_map")))
        return rc;
    if (!m)
        return skv__err(err, SKV_EINVAL, "plugin '%s': create_map returned "
                        "no map", skv_plugin_name(p));
    *out = m;
    return 0;
}

static int check_amounts(const skv_plugin *p, const skv_device_amount *a,
                         size_t n, skv_error *err)
{
    if (n && !a)
        return skv__err(err, SKV_EINVAL, "plugin '%s': amounts is NULL",
                        skv_plugin_name(p));
    for (size_t i = 0; i < n; i++) {
        const skv_device *d = skv_device_list_find(skv_plugin_devices(p),
                                                   a[i].device_id);
        if (!d)
            return skv__err(err, SKV_EINVAL, "plugin '%s': no device '%s'",
                            skv_plugin_name(p),
                            a[i].device_id ? a[i].device_id : "(null)");
        bool has = false;
        for (size_t j = 0; a[i].slot && j < d->nslots && !has; j++)
            has = strcmp(d->slots[j].slot, a[i].slot) == 0;
        if (!has)
            return skv__err(err, SKV_EINVAL, "plugin '%s': device '%s' has no "
                            "slot '%s'", skv_plugin_name(p), d->id,
                            a[i].slot ? a[i].slot : "(null)");
        if (a[i].qty < 0 || a[i].qty > SKV_QTY_MAX)
            return skv__err(err, SKV_EINVAL, "plugin '%s': device '%s' slot "
                            "'%s': invalid amount", skv_plugin_name(p), d->id,
                            a[i].slot);
    }
    return 0;
}

int skv_plugin_container_config(skv_plugin *p, skv_container_config *cfg,
                                const skv_device_amount *amounts, size_t n,
                                skv_error *err)
{
    if (!p || !cfg)
        return skv__err(err, SKV_EINVAL, "plugin_container_config: NULL "
                        "argument");
    int rc = check_amounts(p, amounts, n, err);
    void *state;
    const skv_compute_plugin_ops *ops = skv__plugin_ops(p, &state);
    if (rc || !ops->container_config || n == 0)
        return rc;
    /* Build aside, then move in: cfg is untouched when anything fails. */
    skv_container_config *tmp;
    if ((rc = skv_container_config_new(&tmp, err)))
        return rc;
    skv_error le = SKV_ERROR_INIT;
    rc = ops->container_config(state, tmp, amounts, n, skv_plugin_host_table(),
                               &le);
    rc = skv__plugin_call_rc(p, rc, &le, err, "container_config");
    if (!rc)
        rc = skv__ccfg_absorb(cfg, tmp, err);
    skv_container_config_free(tmp);
    return rc;
}

int skv_plugin_container_config_result(skv_plugin *p,
                                       skv_container_config *cfg,
                                       const skv_alloc_map *map,
                                       const skv_alloc_result *r,
                                       skv_error *err)
{
    if (!p || !cfg || !map || !r)
        return skv__err(err, SKV_EINVAL, "plugin_container_config_result: "
                        "NULL argument");
    if (skv_alloc_result_released(r))
        return skv__err(err, SKV_ESTATE, "plugin '%s': the allocation was "
                        "already released", skv_plugin_name(p));
    size_t n = skv_alloc_result_count(r);
    skv_device_amount stack[32]; /* most allocations use a few devices */
    skv_device_amount *a = n <= SKV__ARRAY_LEN(stack)
                               ? stack : skv__calloc(n, sizeof(*a));
    if (!a)
        return skv__err(err, SKV_ENOMEM, "plugin: out of memory");
    for (size_t i = 0; i < n; i++) {
        skv_alloc_entry e;
        skv_alloc_result_at(r, i, &e);
        a[i].slot = skv_alloc_map_slot_name(map, e.slot);
        a[i].device_id = skv_alloc_map_device_id(map, e.device);
        a[i].qty = e.qty;
    }
    int rc = skv_plugin_container_config(p, cfg, a, n, err);
    if (a != stack)
        skv__free(a);
    return rc;
}

int skv_plugin_stats(skv_plugin *p, skv_stats *out, skv_error *err)
{
    if (!p || !out)
        return skv__err(err, SKV_EINVAL, "plugin_stats: NULL argument");
    void *state;
    const skv_compute_plugin_ops *ops = skv__plugin_ops(p, &state);
    if (!ops->stats)
        return 0;
    size_t before = skv_stats_count(out);
    skv_error le = SKV_ERROR_INIT;
    int rc = ops->stats(state, out, skv_plugin_host_table(), &le);
    rc = skv__plugin_call_rc(p, rc, &le, err, "stats");
    if (rc)
        skv__stats_truncate(out, before);
    return rc;
}
