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
