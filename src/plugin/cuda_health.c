/* The cuda plugin's device health through NVML (each probe only where the
 * driver offers it):
 *   - XID critical errors (nvmlEventTypeXidCriticalError, read without
 *     waiting at each report): a GPU that raised one stays unhealthy until
 *     the plugin is opened again (a driver reload or a reboot clears it);
 *     XIDs that name an application's own error (13, 31, 43, 45, 68, 109:
 *     a bad kernel, a page fault, a stopped or killed context) are not the
 *     GPU's fault and are ignored, as NVIDIA's Kubernetes device plugin
 *     does;
 *   - pages pending retirement (nvmlDeviceGetRetiredPagesPendingStatus):
 *     the GPU needs a reset before its memory can be trusted;
 *   - volatile uncorrected ECC errors (nvmlDeviceGetTotalEccErrors, since
 *     the driver loaded).
 * Not run on the development machine of this code (no NVIDIA driver);
 * tests/so/fake_nvml.c stands in for the library in the unit tests.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

#define MAX_EVENTS_PER_REPORT 64

static bool app_xid(unsigned long long xid)
{
    static const unsigned long long benign[] = {13, 31, 43, 45, 68, 109};
    for (size_t i = 0; i < SKV__ARRAY_LEN(benign); i++)
        if (xid == benign[i])
            return true;
    return false;
}

void skv__cuda_health_open(skv__cuda_health *h, skv__nvml *n,
                           skv__cuda_dev *devs, size_t ndev)
{
    memset(h, 0, sizeof *h);
    if (!n->dl || !n->evset_create || !n->register_events ||
        !n->evset_wait || n->evset_create(&h->set) != 0) {
        h->set = NULL;
        return;
    }
    for (size_t i = 0; i < ndev; i++)       /* unsupported: not watched */
        n->register_events(devs[i].handle, SKV__NVML_EVENT_XID_CRITICAL,
                           h->set);
}

void skv__cuda_health_close(skv__cuda_health *h, skv__nvml *n)
{
    if (h->set && n->evset_free)
        n->evset_free(h->set);
    h->set = NULL;
}

/* Record the XIDs raised since the last report on their GPUs. */
static void drain_events(skv__cuda_health *h, skv__nvml *n,
                         skv__cuda_dev *devs, size_t ndev)
{
    skv__nvml_event ev;
    for (int k = 0; h->set && k < MAX_EVENTS_PER_REPORT; k++) {
        memset(&ev, 0, sizeof ev);
        if (n->evset_wait(h->set, &ev, 0) != 0)
            return;                 /* timeout: nothing more */
        if (!(ev.type & SKV__NVML_EVENT_XID_CRITICAL) || app_xid(ev.data))
            continue;
        for (size_t i = 0; i < ndev; i++)
            if (devs[i].handle == ev.device && !devs[i].fault[0])
                snprintf(devs[i].fault, sizeof devs[i].fault, "xid %llu",
                         ev.data);
    }
}

/* Why device d is unhealthy now ("" when it is not). */
static void probe(skv__nvml *n, const skv__cuda_dev *d, char *why, size_t cap)
{
    int pending = 0;
    unsigned long long ecc = 0;
    why[0] = '\0';
    if (d->fault[0])
        snprintf(why, cap, "%s", d->fault);
    else if (n->retired_pending &&
             n->retired_pending(d->handle, &pending) == 0 && pending)
        snprintf(why, cap, "retired pages pending");
    /* error type 1: uncorrected; counter 0: volatile */
    else if (n->ecc_total && n->ecc_total(d->handle, 1, 0, &ecc) == 0 && ecc)
        snprintf(why, cap, "%llu uncorrected ECC errors", ecc);
}

int skv__cuda_health_report(skv__cuda_health *h, skv__nvml *n,
                            skv__cuda_dev *devs, size_t ndev,
                            skv_device_health_fn report, void *arg)
{
    if (!n->dl)
        return 0;
    drain_events(h, n, devs, ndev);
    for (size_t i = 0; i < ndev; i++) {
        char why[64];
        probe(n, &devs[i], why, sizeof why);
        int rc = why[0] ? report(arg, devs[i].gpu.id, why) : 0;
        if (rc)
            return rc;
    }
    return 0;
}
