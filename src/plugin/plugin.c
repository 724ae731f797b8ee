/* Plugin objects: checking a function table, running a plugin's setup
 * (init, slots, devices) and dispatching to it with the host table.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <string.h>

#include "plugin_internal.h"

#define PLUGIN_NAME_MAX 32

struct skv_plugin {
    const skv_compute_plugin_ops *ops;
    void *state;
    void *dl;                   /* dlopen handle of an out-of-tree plugin */
    bool inited;
    skv_plugin_slots slots;
    skv_device_list *devices;
};

static void host_log(skv_log_level level, const char *plugin, const char *msg)
{
    skv__log(level, "plugin", "%s: %s", plugin ? plugin : "?", msg ? msg : "");
}

static const skv_plugin_host host_table = {
    SKV_PLUGIN_ABI_VERSION,
    skv__plugin_slots_declare,
    skv_device_list_add,
    skv_container_config_add_device,
    skv_container_config_set_env,
    skv_container_config_add_mount,
    skv_container_config_add_flags,
    skv_stats_add,
    skv_qty_parse,
    host_log,
    skv__sys_path,
};

const skv_plugin_host *skv_plugin_host_table(void) { return &host_table; }

const char *const *skv_plugin_builtin_names(void)
{
    static const char *const names[] = {"cpu", "mem", "cuda", "mock", NULL};
    return names;
}

/* Normalize what a plugin callback returned into our error conventions. */
static int plugin_rc(const skv_plugin *p, int rc, const skv_error *le,
                     skv_error *err, const char *what)
{
    if (rc == 0)
        return 0;
    if (rc > 0 || rc < SKV_ERR_MIN)
        rc = SKV_EINVAL;
    if (le->code == rc && le->message[0])
        return skv__err(err, rc, "plugin '%s': %s", p->ops->name, le->message);
    return skv__err(err, rc, "plugin '%s': %s failed (%s)", p->ops->name,
                    what, skv_strerror(rc));
}

void skv_plugin_free(skv_plugin *p)
{
    if (!p)
        return;
    if (p->inited && p->ops->fini)
        p->ops->fini(p->state);
    skv__plugin_slots_clear(&p->slots);
    skv_device_list_free(p->devices);
    if (p->dl)
        dlclose(p->dl);
    skv__free(p);
}

static int check_name(const char *name, skv_error *err)
{
    size_t len = name ? strlen(name) : 0;
    bool ok = len > 0 && len < PLUGIN_NAME_MAX && name[0] >= 'a' &&
              name[0] <= 'z';
    for (size_t i = 1; ok && i < len; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
             name[i] == '-';
    if (!ok)
        return skv__err(err, SKV_EINVAL, "plugin name '%s' is invalid "
                        "([a-z][a-z0-9_-]*, shorter than %d)",
                        name ? name : "(null)", PLUGIN_NAME_MAX);
    return 0;
}

static int check_ops(const skv_compute_plugin_ops *ops,
                     const skv_plugin_context *ctx, skv_error *err)
{
    if (!ops)
        return skv__err(err, SKV_EINVAL, "plugin: function table is NULL");
    if (ops->abi_version < SKV_PLUGIN_ABI_MIN ||
        ops->abi_version > SKV_PLUGIN_ABI_VERSION)
        return skv__err(err, SKV_EVERSION, "plugin '%s' was built for plugin "
                        "ABI %u; this library speaks ABI %u to %u",
                        ops->name ? ops->name : "?", (unsigned)ops->abi_version,
                        SKV_PLUGIN_ABI_MIN, SKV_PLUGIN_ABI_VERSION);
    int rc = check_name(ops->name, err);
    if (rc)
        return rc;
    if (!ops->declare_slots || !ops->list_devices)
        return skv__err(err, SKV_EINVAL, "plugin '%s': declare_slots and "
                        "list_devices are required", ops->name);
    if (ctx && ctx->version != SKV_PLUGIN_CONTEXT_VERSION)
        return skv__err(err, SKV_EVERSION, "plugin context version %u; this "
                        "library knows %u", ctx->version,
                        SKV_PLUGIN_CONTEXT_VERSION);
    return 0;
}

/* Every device slot must be a declared slot. */
static int check_devices(const skv_plugin *p, skv_error *err)
{
    for (size_t i = 0; i < skv_device_list_count(p->devices); i++) {
        const skv_device *d = skv_device_list_at(p->devices, i);
        for (size_t j = 0; j < d->nslots; j++) {
            bool found = false;
            for (size_t k = 0; k < p->slots.n && !found; k++)
                found = strcmp(p->slots.items[k].name, d->slots[j].slot) == 0;
            if (!found)
                return skv__err(err, SKV_EINVAL, "plugin '%s': device '%s' "
                                "has undeclared slot '%s'", p->ops->name,
                                d->id, d->slots[j].slot);
        }
    }
    return 0;
}

static int setup(skv_plugin *p, const skv_plugin_context *ctx, skv_error *err)
{
    static const skv_plugin_context empty = SKV_PLUGIN_CONTEXT_INIT;
    skv_error le = SKV_ERROR_INIT;
    int rc = 0;
    if (p->ops->init) {
        rc = plugin_rc(p, p->ops->init(&p->state, ctx ? ctx : &empty,
                                       &host_table, &le), &le, err, "init");
        if (rc)
            return rc;
    }
    p->inited = true;
    rc = p->ops->declare_slots(p->state, &p->slots, &host_table, &le);
    if ((rc = plugin_rc(p, rc, &le, err, "declare_slots")))
        return rc;
    if ((rc = skv_device_list_new(&p->devices, err)))
        return rc;
    rc = p->ops->list_devices(p->state, p->devices, &host_table, &le);
    if ((rc = plugin_rc(p, rc, &le, err, "list_devices")))
        return rc;
    return check_devices(p, err);
}

int skv__plugin_open(skv_plugin **out, const skv_compute_plugin_ops *ops,
                     const skv_plugin_context *ctx, void *dl, skv_error *err)
{
    int rc = out ? check_ops(ops, ctx, err)
                 : skv__err(err, SKV_EINVAL, "plugin_open: out is NULL");
    skv_plugin *p = rc ? NULL : skv__calloc(1, sizeof(*p));
    if (!rc && !p)
        rc = skv__err(err, SKV_ENOMEM, "plugin: out of memory");
    if (rc) {
        if (dl)
            dlclose(dl);
        return rc;
    }
    p->ops = ops;
    p->dl = dl;
    if ((rc = setup(p, ctx, err))) {
        skv_plugin_free(p);
        return rc;
    }
    skv__log(SKV_LOG_DEBUG, "plugin", "opened '%s' with %zu devices",
             ops->name, skv_device_list_count(p->devices));
    *out = p;
    return 0;
}

int skv_plugin_open_ops(skv_plugin **out, const skv_compute_plugin_ops *ops,
                        const skv_plugin_context *ctx, skv_error *err)
{
    return skv__plugin_open(out, ops, ctx, NULL, err);
}

int skv_plugin_open_builtin(skv_plugin **out, const char *name,
                            const skv_plugin_context *ctx, skv_error *err)
{
    static const skv_compute_plugin_ops *const builtins[] = {
        &skv__plugin_cpu_ops, &skv__plugin_mem_ops, &skv__plugin_cuda_ops,
        &skv__plugin_mock_ops};
    for (size_t i = 0; name && i < SKV__ARRAY_LEN(builtins); i++)
        if (strcmp(builtins[i]->name, name) == 0)
            return skv__plugin_open(out, builtins[i], ctx, NULL, err);
    return skv__err(err, SKV_ENOENT, "no built-in plugin named '%s' (known: "
                    "cpu, mem, cuda, mock)", name ? name : "(null)");
}

const char *skv_plugin_name(const skv_plugin *p)
{
    return p ? p->ops->name : "";
}

const char *skv_plugin_version(const skv_plugin *p)
{
    return p && p->ops->version ? p->ops->version : "";
}

size_t skv_plugin_slot_count(const skv_plugin *p) { return p ? p->slots.n : 0; }

const skv_plugin_slot *skv_plugin_slot_at(const skv_plugin *p, size_t i)
{
    return p && i < p->slots.n ? &p->slots.items[i] : NULL;
}

const skv_device_list *skv_plugin_devices(const skv_plugin *p)
{
    return p ? p->devices : NULL;
}

const skv_compute_plugin_ops *skv__plugin_ops(const skv_plugin *p,
                                              void **state)
{
    *state = p->state;
    return p->ops;
}

int skv__plugin_call_rc(const skv_plugin *p, int rc, const skv_error *le,
                        skv_error *err, const char *what)
{
    return plugin_rc(p, rc, le, err, what);
}
