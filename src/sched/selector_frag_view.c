/* Turning the scheduler's plugin views into the fragmentation measure's
 * node and shape (selector_frag.h). Slot indexes are resolved once per slot
 * table, agent model bits once per agent, so a score costs no string work.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_internal.h"
#include "selector_frag.h"

static int slot_index(const skv_sched_agent_view *a, const char *name)
{
    for (size_t i = 0; i < a->n_slots; i++)
        if (strcmp(a->slot_names[i], name) == 0)
            return (int)i;
    return -1;
}

void skv__frag_slots_resolve(skv__frag_slots *sl, const skv_sched_agent_view *a)
{
    if (sl->names == a->slot_names && sl->n == a->n_slots)
        return;
    sl->names = a->slot_names;
    sl->n = a->n_slots;
    sl->cpu = slot_index(a, "cpu");
    sl->mem = slot_index(a, "mem");
    sl->whole = -1;
    sl->share = -1;
    /* GPU slots are whatever the devices are taken through. */
    for (size_t i = 0; i < a->n_devices; i++) {
        if (sl->whole < 0)
            sl->whole = a->devices[i].whole_slot;
        if (sl->share < 0 && a->devices[i].share_slot != SKV_SCHED_NO_SLOT)
            sl->share = a->devices[i].share_slot;
    }
    if (sl->whole < 0)
        sl->whole = slot_index(a, "cuda.device");
    if (sl->share < 0)
        sl->share = slot_index(a, "cuda.shares");
}

static skv_qty pooled_free(const skv_sched_agent_view *a, int slot)
{
    if (slot < 0)
        return 0;
    if (a->capacity[slot] == SKV_QTY_UNLIMITED)
        return SKV_QTY_MAX / 2;
    return a->capacity[slot] - a->used[slot];
}

int skv__frag_view_node(skv__frag_node *out, skv_qty *gpu_buf,
                        const skv__frag_slots *sl, int model,
                        const skv_sched_agent_view *a)
{
    if (a->n_devices > SKV__FRAG_MAX_GPU)
        return SKV_ERANGE;
    out->cpu_free = pooled_free(a, sl->cpu);
    out->mem_free = pooled_free(a, sl->mem);
    out->model = model;
    out->ngpu = (int)a->n_devices;
    out->gpu_free = gpu_buf;
    for (size_t i = 0; i < a->n_devices; i++) {
        const skv_sched_device_view *d = &a->devices[i];
        skv_qty cap = d->share_capacity > 0 ? d->share_capacity : SKV__FRAG_GPU_UNIT;
        skv_qty f = d->whole_taken ? 0 : cap - d->share_used;
        /* the measure works in milli-GPU: rescale other share units */
        gpu_buf[i] = cap == SKV__FRAG_GPU_UNIT ? f : f * SKV__FRAG_GPU_UNIT / cap;
    }
    return 0;
}

void skv__frag_view_shape(skv__frag_shape *out, const skv__frag_slots *sl,
                          const skv_sched_kernel_view *k)
{
    memset(out, 0, sizeof(*out));
    out->any_model = true;
    if (sl->cpu >= 0 && (size_t)sl->cpu < k->n_slots)
        out->cpu = k->request[sl->cpu];
    if (sl->mem >= 0 && (size_t)sl->mem < k->n_slots)
        out->mem = k->request[sl->mem];
    skv_qty whole = sl->whole >= 0 && (size_t)sl->whole < k->n_slots
                        ? k->request[sl->whole] : 0;
    skv_qty share = sl->share >= 0 && (size_t)sl->share < k->n_slots
                        ? k->request[sl->share] : 0;
    if (whole > 0) {
        out->ngpu = (int)((whole + SKV__FRAG_GPU_UNIT - 1) / SKV__FRAG_GPU_UNIT);
        out->gpu = SKV__FRAG_GPU_UNIT;
    } else if (share >= SKV__FRAG_GPU_UNIT) {
        /* a share of one GPU or more behaves like whole GPUs for the measure */
        out->ngpu = (int)(share / SKV__FRAG_GPU_UNIT);
        out->gpu = SKV__FRAG_GPU_UNIT;
    } else if (share > 0) {
        out->ngpu = 1;
        out->gpu = share;
    }
}

/* The device a sharing kernel would get (the map decides, not us). The
 * map drains several devices for a share no single device can hold; a
 * fraction of one GPU spread over GPUs is exactly the fragmentation these
 * selectors exist to avoid (and what the FGD model forbids), so such an
 * agent counts as not fitting. */
int skv__frag_view_trial_gpu(const skv_sched_agent_view *a,
                             const skv_sched_kernel_view *k)
{
    skv_sched_device_share sh[SKV_SCHED_DEVICES_MAX];
    size_t n = 0;
    if (skv_sched_agent_view_trial(sh, &n, a, k) != 0)
        return -2;
    int dev = -1;
    for (size_t i = 0; i < n; i++) {
        if (sh[i].whole)
            continue;
        if (dev >= 0)
            return -2;
        dev = (int)sh[i].device;
    }
    return dev;
}

uint64_t skv__frag_view_fingerprint(const skv_sched_agent_view *a)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ a->n_devices;
    for (size_t i = 0; i < a->n_slots; i++)
        h = (h ^ (uint64_t)a->used[i]) * 0x100000001b3ull;
    for (size_t i = 0; i < a->n_devices; i++) {
        const skv_sched_device_view *d = &a->devices[i];
        h = (h ^ ((uint64_t)d->share_used << 1 | d->whole_taken)) *
            0x100000001b3ull;
    }
    return h ^ (h >> 29);
}
