/* Test fixture: a plugin built for a future plugin ABI; must be refused.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sokovan/plugin.h"

SKV_EXTERN const skv_compute_plugin_ops *skv_compute_plugin_entry(void);

static int never_slots(void *state, skv_plugin_slots *out,
                       const skv_plugin_host *host, skv_error *err)
{
    (void)state, (void)out, (void)host, (void)err;
    return SKV_EINVAL;
}

static int never_devices(void *state, skv_device_list *out,
                         const skv_plugin_host *host, skv_error *err)
{
    (void)state, (void)out, (void)host, (void)err;
    return SKV_EINVAL;
}

static const skv_compute_plugin_ops future_ops = {
    SKV_PLUGIN_ABI_VERSION + 1, "future", "9.9", NULL, NULL, never_slots,
    never_devices, NULL, NULL, NULL,
};

const skv_compute_plugin_ops *skv_compute_plugin_entry(void)
{
    return &future_ops;
}
