/* Test fixture: a fake libnvidia-ml with two GPUs, so the cuda plugin's
 * NVML path runs without a GPU. FAKE_NVML_FAIL_INIT=1 makes nvmlInit fail.
 * Only the entry points the cuda plugin resolves are provided.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))
#define FAKE_GPUS 2u

typedef struct fake_dev *nvml_dev;
typedef struct {
    char legacy[16];
    unsigned domain, bus, device, pci_device_id, subsystem;
    char bus_id[32];
} nvml_pci;
typedef struct {
    unsigned long long total, free, used;
} nvml_mem;

FAKE_API int nvmlInit_v2(void);
FAKE_API int nvmlShutdown(void);
FAKE_API int nvmlDeviceGetCount_v2(unsigned *count);
FAKE_API int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_dev *dev);
FAKE_API int nvmlDeviceGetName(nvml_dev dev, char *name, unsigned len);
FAKE_API int nvmlDeviceGetPciInfo_v3(nvml_dev dev, nvml_pci *pci);
FAKE_API int nvmlDeviceGetMemoryInfo(nvml_dev dev, nvml_mem *mem);
FAKE_API int nvmlDeviceGetUUID(nvml_dev dev, char *uuid, unsigned len);
FAKE_API int nvmlDeviceGetMinorNumber(nvml_dev dev, unsigned *minor);

static int initialized;

static int index_of(nvml_dev dev)
{
    uintptr_t v = (uintptr_t)dev;
    return initialized && v >= 1 && v <= FAKE_GPUS ? (int)v - 1 : -1;
}

int nvmlInit_v2(void)
{
    const char *fail = getenv("FAKE_NVML_FAIL_INIT");
    if (fail && strcmp(fail, "1") == 0)
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    initialized = 1;
    return 0;
}

int nvmlShutdown(void)
{
    initialized = 0;
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
    *count = FAKE_GPUS;
    return initialized ? 0 : 1;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_dev *dev)
{
    if (!initialized || i >= FAKE_GPUS)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = (nvml_dev)(uintptr_t)(i + 1);
    return 0;
}

int nvmlDeviceGetName(nvml_dev dev, char *name, unsigned len)
{
    if (index_of(dev) < 0)
        return 2;
    snprintf(name, len, "Fake Tesla V100-SXM3-32GB");
    return 0;
}

int nvmlDeviceGetPciInfo_v3(nvml_dev dev, nvml_pci *pci)
{
    static const unsigned buses[FAKE_GPUS] = {0x34, 0xb7};
    int i = index_of(dev);
    if (i < 0)
        return 2;
    memset(pci, 0, sizeof(*pci));
    pci->bus = buses[i];
    pci->pci_device_id = 0x1db810de;
    snprintf(pci->bus_id, sizeof(pci->bus_id), "00000000:%02X:00.0", buses[i]);
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvml_dev dev, nvml_mem *mem)
{
    int i = index_of(dev);
    if (i < 0)
        return 2;
    mem->total = 32ull << 30;
    mem->used = (unsigned long long)(i + 1) << 30;
    mem->free = mem->total - mem->used;
    return 0;
}

int nvmlDeviceGetUUID(nvml_dev dev, char *uuid, unsigned len)
{
    int i = index_of(dev);
    if (i < 0)
        return 2;
    snprintf(uuid, len, "GPU-fake-%d", i);
    return 0;
}

int nvmlDeviceGetMinorNumber(nvml_dev dev, unsigned *minor)
{
    int i = index_of(dev);
    if (i < 0)
        return 2;
    *minor = (unsigned)i * 2; /* minors need not follow indexes */
    return 0;
}

/* ---- health probes, driven by the environment -----------------------------
 * FAKE_NVML_XID="I:X[,I:X...]"  XID X on GPU I, each delivered once
 * FAKE_NVML_RETIRED="I"         GPU I has pages pending retirement
 * FAKE_NVML_ECC="I:N"           GPU I has N volatile uncorrected errors
 * FAKE_NVML_NO_EVENTS=1         nvmlEventSetCreate fails (not supported) */

typedef struct fake_evset *nvml_evset;
typedef struct {
    nvml_dev device;
    unsigned long long type, data;
    unsigned gi, ci;
} nvml_event;

FAKE_API int nvmlDeviceGetRetiredPagesPendingStatus(nvml_dev dev, int *p);
FAKE_API int nvmlDeviceGetTotalEccErrors(nvml_dev dev, int type, int counter,
                                         unsigned long long *count);
FAKE_API int nvmlEventSetCreate(nvml_evset *set);
FAKE_API int nvmlDeviceRegisterEvents(nvml_dev dev, unsigned long long types,
                                      nvml_evset set);
FAKE_API int nvmlEventSetWait_v2(nvml_evset set, nvml_event *ev,
                                 unsigned timeout_ms);
FAKE_API int nvmlEventSetFree(nvml_evset set);

static int fake_set;                /* the one event set handed out */
static unsigned delivered;          /* XID entries already delivered */
static unsigned registered;         /* devices registered for XIDs */

/* "I:N" for GPU i: N, else 0. */
static unsigned long long env_pair(const char *name, int i)
{
    const char *v = getenv(name);
    unsigned gi;
    unsigned long long n;
    return v && sscanf(v, "%u:%llu", &gi, &n) == 2 && (int)gi == i ? n : 0;
}

int nvmlDeviceGetRetiredPagesPendingStatus(nvml_dev dev, int *p)
{
    int i = index_of(dev);
    if (i < 0)
        return 2;
    const char *v = getenv("FAKE_NVML_RETIRED");
    *p = v && atoi(v) == i;
    return 0;
}

int nvmlDeviceGetTotalEccErrors(nvml_dev dev, int type, int counter,
                                unsigned long long *count)
{
    int i = index_of(dev);
    if (i < 0 || type != 1 || counter != 0)
        return 2;
    *count = env_pair("FAKE_NVML_ECC", i);
    return 0;
}

int nvmlEventSetCreate(nvml_evset *set)
{
    const char *no = getenv("FAKE_NVML_NO_EVENTS");
    if (no && strcmp(no, "1") == 0)
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *set = (nvml_evset)&fake_set;
    delivered = 0;
    registered = 0;
    return 0;
}

int nvmlDeviceRegisterEvents(nvml_dev dev, unsigned long long types,
                             nvml_evset set)
{
    if (index_of(dev) < 0 || set != (nvml_evset)&fake_set || types != 0x8)
        return 2;
    registered |= 1u << index_of(dev);
    return 0;
}

int nvmlEventSetWait_v2(nvml_evset set, nvml_event *ev, unsigned timeout_ms)
{
    (void)timeout_ms;
    const char *v = getenv("FAKE_NVML_XID");
    if (set != (nvml_evset)&fake_set)
        return 2;
    unsigned k = 0;
    for (const char *p = v; p && *p; k++) {
        unsigned gi;
        unsigned long long x;
        if (sscanf(p, "%u:%llu", &gi, &x) != 2)
            break;
        if (k == delivered && (registered >> gi) & 1u) {
            delivered++;
            memset(ev, 0, sizeof(*ev));
            ev->device = (nvml_dev)(uintptr_t)(gi + 1);
            ev->type = 0x8;
            ev->data = x;
            return 0;
        }
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    return 10; /* NVML_ERROR_TIMEOUT */
}

int nvmlEventSetFree(nvml_evset set)
{
    return set == (nvml_evset)&fake_set ? 0 : 2;
}
