/* Test fixture: a well-formed out-of-tree compute plugin ("acme" NPUs).
 * It uses only the host table, never libsokovan symbols.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "sokovan/plugin.h"

SKV_EXTERN const skv_compute_plugin_ops *skv_compute_plugin_entry(void);

static int acme_slots(void *state, skv_plugin_slots *out,
                      const skv_plugin_host *host, skv_error *err)
{
    (void)state;
    skv_plugin_slot s = {"acme.npu", SKV_SLOT_COUNT, "NPU", SKV_ALLOC_DISCRETE,
                         0, 0, 0};
    return host->slot_declare(out, &s, err);
}

static int acme_devices(void *state, skv_device_list *out,
                        const skv_plugin_host *host, skv_error *err)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        char id[8];
        snprintf(id, sizeof(id), "npu%d", i);
        skv_device_slot slot = {"acme.npu", 1000};
        skv_device d = {id, i, "", 8ull << 30, 64, "Acme NPU", &slot, 1};
        int rc = host->device_add(out, &d, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int acme_config(void *state, skv_container_config *cfg,
                       const skv_device_amount *a, size_t n,
                       const skv_plugin_host *host, skv_error *err)
{
    (void)state;
    char list[64] = "";
    for (size_t i = 0; i < n; i++) {
        char path[32];
        snprintf(path, sizeof(path), "/dev/acme-%s", a[i].device_id);
        int rc = host->ccfg_add_device(cfg, path, err);
        if (rc)
            return rc;
        strncat(list, a[i].device_id, sizeof(list) - strlen(list) - 2);
        if (i + 1 < n)
            strcat(list, ",");
    }
    return host->ccfg_set_env(cfg, "ACME_VISIBLE_DEVICES", list, err);
}

static int acme_stats(void *state, skv_stats *out, const skv_plugin_host *host,
                      skv_error *err)
{
    (void)state;
    return host->stats_add(out, "npu0", "acme_temperature_c", 42, err);
}

static const skv_compute_plugin_ops acme_ops = {
    SKV_PLUGIN_ABI_VERSION, "acme", "1.2.3", NULL, NULL, acme_slots,
    acme_devices, NULL, acme_config, acme_stats,
};

const skv_compute_plugin_ops *skv_compute_plugin_entry(void)
{
    return &acme_ops;
}
