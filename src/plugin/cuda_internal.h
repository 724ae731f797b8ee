/* Internal: the cuda plugin's device record and its health probes
 * (builtin_cuda.c, cuda_health.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_CUDA_INTERNAL_H
#define SKV_CUDA_INTERNAL_H

#include "nvml_loader.h"

typedef struct skv__cuda_dev {
    skv__gpu gpu;
    char name[SKV__NVML_NAME_MAX];
    char pci[32];
    int numa;
    skv__nvml_dev handle;
    char fault[32];             /* a critical XID seen: "xid 79" (sticky) */
} skv__cuda_dev;

typedef struct skv__cuda_health {
    skv__nvml_evset set;        /* XID events; NULL: not watched */
} skv__cuda_health;

/* Watch the devices' XID events where the driver can. */
void skv__cuda_health_open(skv__cuda_health *h, skv__nvml *n,
                           skv__cuda_dev *devs, size_t ndev);
void skv__cuda_health_close(skv__cuda_health *h, skv__nvml *n);
/* Report the unhealthy devices now (the plugin's health callback). */
int skv__cuda_health_report(skv__cuda_health *h, skv__nvml *n,
                            skv__cuda_dev *devs, size_t ndev,
                            skv_device_health_fn report, void *arg);

#endif
