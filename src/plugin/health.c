/* skv_plugin_health: a plugin's unhealthy devices (ABI 2 tables with a
 * health callback; others report none). Each reported id must be one of
 * the plugin's devices: a plugin naming another is a bug, refused.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

typedef struct hctx {
    skv_plugin *p;
    skv_device_health_fn report;
    void *arg;
    skv_error *err;
    int own_rc;        /* a refusal of ours or the receiver's stop */
} hctx;

static bool own_device(skv_plugin *p, const char *id)
{
    const skv_device_list *l = skv_plugin_devices(p);
    for (size_t i = 0; l && i < skv_device_list_count(l); i++)
        if (!strcmp(skv_device_list_at(l, i)->id, id))
            return true;
    return false;
}

static int relay(void *arg, const char *device_id, const char *reason)
{
    hctx *h = arg;
    if (!device_id || !own_device(h->p, device_id))
        return h->own_rc = skv__err(h->err, SKV_EINVAL, "plugin '%s' reported "
                                    "health of '%s', not one of its devices",
                                    skv_plugin_name(h->p),
                                    device_id ? device_id : "(null)");
    return h->own_rc = h->report(h->arg, device_id, reason ? reason : "");
}

int skv_plugin_health(skv_plugin *p, skv_device_health_fn report, void *arg,
                      skv_error *err)
{
    if (!p || !report)
        return skv__err(err, SKV_EINVAL, "plugin_health: NULL argument");
    void *state;
    const skv_compute_plugin_ops *ops = skv__plugin_ops(p, &state);
    if (ops->abi_version < 2 || !ops->health)
        return 0;
    skv_error le = SKV_ERROR_INIT;
    hctx h = {p, report, arg, err, 0};
    int rc = ops->health(state, relay, &h, &le);
    if (h.own_rc)
        return h.own_rc;
    return skv__plugin_call_rc(p, rc, &le, err, "health");
}
