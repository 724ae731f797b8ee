/* Internal: NVML resolved at run time (see nvml.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_NVML_LOADER_H
#define SKV_NVML_LOADER_H

#include <stdbool.h>

#include "plugin_internal.h"

/* Our own declarations of the NVML ABI pieces we use. */
typedef int skv__nvml_ret;                 /* nvmlReturn_t, 0 = success */
typedef struct skv__nvml_dev_st *skv__nvml_dev; /* nvmlDevice_t */

typedef struct skv__nvml_pci {             /* nvmlPciInfo_t (v3) */
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id;                /* device << 16 | vendor */
    unsigned pci_subsystem_id;
    char bus_id[32];                       /* "00000000:34:00.0" */
} skv__nvml_pci;

typedef struct skv__nvml_memory {          /* nvmlMemory_t (v1) */
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} skv__nvml_memory;

typedef struct skv__nvml_evset_st *skv__nvml_evset; /* nvmlEventSet_t */

typedef struct skv__nvml_event {           /* nvmlEventData_t */
    skv__nvml_dev device;
    unsigned long long type;
    unsigned long long data;               /* the XID for XID events */
    unsigned gpu_instance;
    unsigned compute_instance;
} skv__nvml_event;

#define SKV__NVML_EVENT_XID_CRITICAL 0x8ull /* nvmlEventTypeXidCriticalError */
#define SKV__NVML_ERROR_TIMEOUT 10

#define SKV__NVML_NAME_MAX 96              /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define SKV__NVML_UUID_MAX 96              /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

typedef struct skv__nvml {
    void *dl;
    bool initialized;
    skv__nvml_ret (*init)(void);
    skv__nvml_ret (*shutdown)(void);
    skv__nvml_ret (*get_count)(unsigned *count);
    skv__nvml_ret (*get_handle)(unsigned index, skv__nvml_dev *dev);
    skv__nvml_ret (*get_name)(skv__nvml_dev dev, char *name, unsigned len);
    skv__nvml_ret (*get_pci)(skv__nvml_dev dev, skv__nvml_pci *pci);
    skv__nvml_ret (*get_memory)(skv__nvml_dev dev, skv__nvml_memory *mem);
    skv__nvml_ret (*get_uuid)(skv__nvml_dev dev, char *uuid, unsigned len);
    skv__nvml_ret (*get_minor)(skv__nvml_dev dev, unsigned *minor);
    /* Health probes: optional (NULL when the library lacks them). */
    skv__nvml_ret (*retired_pending)(skv__nvml_dev dev, int *pending);
    skv__nvml_ret (*ecc_total)(skv__nvml_dev dev, int error_type,
                               int counter_type, unsigned long long *count);
    skv__nvml_ret (*evset_create)(skv__nvml_evset *set);
    skv__nvml_ret (*register_events)(skv__nvml_dev dev,
                                     unsigned long long types,
                                     skv__nvml_evset set);
    skv__nvml_ret (*evset_wait)(skv__nvml_evset set, skv__nvml_event *ev,
                                unsigned timeout_ms);
    skv__nvml_ret (*evset_free)(skv__nvml_evset set);
} skv__nvml;

/* Load and initialize NVML from path. Unless required, any failure means
 * "no NVIDIA GPUs" (logged, returns 0, n->dl stays NULL). Required: cannot
 * load or nvmlInit fails: SKV_EIO; missing symbols: SKV_EINVAL. */
int skv__nvml_open(skv__nvml *n, const char *path, bool required,
                   skv_error *err);
void skv__nvml_close(skv__nvml *n);

#endif
