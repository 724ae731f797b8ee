/* Out-of-tree plugins: a shared object exporting SKV_PLUGIN_ENTRY_SYMBOL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <string.h>

#include "plugin_internal.h"

int skv_plugin_open_so(skv_plugin **out, const char *path,
                       const skv_plugin_context *ctx, skv_error *err)
{
    if (!out || !path || !*path)
        return skv__err(err, SKV_EINVAL, "plugin_open_so: NULL or empty path");
    /* RTLD_LOCAL: plugins must not see each other's symbols. */
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        return skv__err(err, SKV_EIO, "plugin '%s': cannot load: %s", path,
                        why ? why : "unknown error");
    }
    union {
        void *obj;
        skv_compute_plugin_entry_fn fn;
    } entry;
    dlerror();
    entry.obj = dlsym(dl, SKV_PLUGIN_ENTRY_SYMBOL);
    if (!entry.obj) {
        dlclose(dl);
        return skv__err(err, SKV_EINVAL, "plugin '%s': no symbol '%s'", path,
                        SKV_PLUGIN_ENTRY_SYMBOL);
    }
    const skv_compute_plugin_ops *ops = entry.fn();
    if (!ops) {
        dlclose(dl);
        return skv__err(err, SKV_EINVAL, "plugin '%s': %s() returned NULL",
                        path, SKV_PLUGIN_ENTRY_SYMBOL);
    }
    int rc = skv__plugin_open(out, ops, ctx, dl, err);
    if (rc)
        skv__err_prefix(err, "loading '%s'", path);
    return rc;
}
