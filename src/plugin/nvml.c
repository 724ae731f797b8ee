/* The few NVML entry points the cuda plugin uses, resolved with dlopen at
 * run time so the library has no build or link dependency on the driver.
 * Types are declared here from NVML's documented ABI.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "nvml_loader.h"

static const char *const nvml_symbols[] = {
    "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName",
    "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetUUID", "nvmlDeviceGetMinorNumber"};

static int resolve(skv__nvml *n, const char *path, skv_error *err)
{
    void **slots[] = {
        (void **)&n->init, (void **)&n->shutdown, (void **)&n->get_count,
        (void **)&n->get_handle, (void **)&n->get_name,
        (void **)&n->get_pci, (void **)&n->get_memory,
        (void **)&n->get_uuid, (void **)&n->get_minor};
    for (size_t i = 0; i < SKV__ARRAY_LEN(nvml_symbols); i++) {
        void *sym = dlsym(n->dl, nvml_symbols[i]);
        if (!sym)
            return skv__err(err, SKV_EINVAL, "NVML library '%s' lacks '%s'",
                            path, nvml_symbols[i]);
        /* POSIX guarantees object and function pointers convert. */
        memcpy(slots[i], &sym, sizeof(sym));
    }
    return 0;
}

/* The health probes: older drivers may lack some (each one missing is a
 * probe not run). */
static void resolve_optional(skv__nvml *n)
{
    static const char *const names[] = {
        "nvmlDeviceGetRetiredPagesPendingStatus",
        "nvmlDeviceGetTotalEccErrors", "nvmlEventSetCreate",
        "nvmlDeviceRegisterEvents", "nvmlEventSetWait_v2",
        "nvmlEventSetFree"};
    void **slots[] = {(void **)&n->retired_pending, (void **)&n->ecc_total,
                      (void **)&n->evset_create,
                      (void **)&n->register_events,
                      (void **)&n->evset_wait, (void **)&n->evset_free};
    for (size_t i = 0; i < SKV__ARRAY_LEN(names); i++) {
        void *sym = dlsym(n->dl, names[i]);
        memcpy(slots[i], &sym, sizeof(sym));
    }
}

/* A missing or broken default library means "no NVIDIA GPUs here". */
static int soft_fail(skv__nvml *n, bool required, int rc, skv_error *le,
                     skv_error *err)
{
    if (n->dl)
        dlclose(n->dl);
    n->dl = NULL;
    if (required)
        return skv__err(err, rc, "%s", le->message);
    skv__log(SKV_LOG_INFO, "plugin", "cuda: %s: no devices", le->message);
    return 0;
}

int skv__nvml_open(skv__nvml *n, const char *path, bool required,
                   skv_error *err)
{
    skv_error le = SKV_ERROR_INIT;
    memset(n, 0, sizeof(*n));
    n->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        const char *why = dlerror();
        skv__err(&le, SKV_EIO, "cannot load NVML library '%s': %s", path,
                 why ? why : "unknown error");
        return soft_fail(n, required, SKV_EIO, &le, err);
    }
    int rc = resolve(n, path, &le);
    if (!rc)
        resolve_optional(n);
    if (!rc && n->init() != 0)
        rc = skv__err(&le, SKV_EIO, "NVML library '%s': nvmlInit_v2 failed "
                      "(no driver?)", path);
    if (rc)
        return soft_fail(n, required, rc, &le, err);
    n->initialized = true;
    return 0;
}

void skv__nvml_close(skv__nvml *n)
{
    if (n->initialized)
        n->shutdown();
    if (n->dl)
        dlclose(n->dl);
    memset(n, 0, sizeof(*n));
}
