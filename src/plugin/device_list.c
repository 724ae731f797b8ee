/* Device lists: what a plugin offers, copied so plugins may describe their
 * devices from stack buffers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

#define DEVICE_ID_MAX 128 /* same limit as allocation-map device ids */

struct skv_device_list {
    skv_device *items;
    size_t n, cap;
};

int skv_device_list_new(skv_device_list **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "device_list_new: out is NULL");
    *out = skv__calloc(1, sizeof(**out));
    return *out ? 0 : skv__err(err, SKV_ENOMEM, "device list: out of memory");
}

static void device_clear(skv_device *d)
{
    for (size_t i = 0; d->slots && i < d->nslots; i++)
        skv__free((void *)d->slots[i].slot);
    skv__free((void *)d->slots);
    skv__free((void *)d->id);
    skv__free((void *)d->pci_bus_id);
    skv__free((void *)d->model);
}

void skv_device_list_free(skv_device_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        device_clear(&list->items[i]);
    skv__free(list->items);
    skv__free(list);
}

static int check_id(const char *id, skv_error *err)
{
    size_t len = id ? strlen(id) : 0;
    if (len == 0 || len >= DEVICE_ID_MAX)
        return skv__err(err, SKV_EINVAL, "device id '%s': must be 1..%d "
                        "characters", id ? id : "(null)", DEVICE_ID_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if (id[i] <= ' ' || id[i] > '~')
            return skv__err(err, SKV_EINVAL, "device id '%s': only printable "
                            "ASCII without spaces is allowed", id);
    return 0;
}

static int check_device(const skv_device_list *list, const skv_device *dev,
                        skv_error *err)
{
    int rc = check_id(dev->id, err);
    if (rc)
        return rc;
    if (skv_device_list_find(list, dev->id))
        return skv__err(err, SKV_EINVAL, "device '%s' is listed twice", dev->id);
    if (dev->numa_node < -1)
        return skv__err(err, SKV_EINVAL, "device '%s': NUMA node %d",
                        dev->id, dev->numa_node);
    if (dev->nslots && !dev->slots)
        return skv__err(err, SKV_EINVAL, "device '%s': slots is NULL", dev->id);
    for (size_t i = 0; i < dev->nslots; i++) {
        const skv_device_slot *s = &dev->slots[i];
        if ((rc = skv_slot_name_check(s->slot, err))) {
            skv__err_prefix(err, "device '%s'", dev->id);
            return rc;
        }
        if (s->qty < 0 || s->qty > SKV_QTY_MAX)
            return skv__err(err, SKV_EINVAL, "device '%s': capacity of slot "
                            "'%s' must be finite and >= 0", dev->id, s->slot);
        for (size_t j = 0; j < i; j++)
            if (strcmp(dev->slots[j].slot, s->slot) == 0)
                return skv__err(err, SKV_EINVAL, "device '%s': slot '%s' "
                                "given twice", dev->id, s->slot);
    }
    return 0;
}

static char *dup_opt(const char *s) { return skv__strdup(s ? s : ""); }

static int copy_device(skv_device *d, const skv_device *src)
{
    memset(d, 0, sizeof(*d));
    d->numa_node = src->numa_node;
    d->memory_bytes = src->memory_bytes;
    d->processing_units = src->processing_units;
    d->id = skv__strdup(src->id);
    d->pci_bus_id = dup_opt(src->pci_bus_id);
    d->model = dup_opt(src->model);
    skv_device_slot *slots = skv__calloc(src->nslots ? src->nslots : 1,
                                         sizeof(*slots));
    d->slots = slots;
    if (!d->id || !d->pci_bus_id || !d->model || !slots)
        return SKV_ENOMEM;
    for (size_t i = 0; i < src->nslots; i++) {
        slots[i].qty = src->slots[i].qty;
        if (!(slots[i].slot = skv__strdup(src->slots[i].slot)))
            return SKV_ENOMEM;
        d->nslots++;
    }
    return 0;
}

int skv_device_list_add(skv_device_list *list, const skv_device *dev,
                        skv_error *err)
{
    if (!list || !dev)
        return skv__err(err, SKV_EINVAL, "device_list_add: NULL argument");
    int rc = check_device(list, dev, err);
    if (rc)
        return rc;
    if (list->n == list->cap) {
        size_t nc = list->cap ? list->cap * 2 : 8;
        skv_device *ni = skv__reallocarray(list->items, nc, sizeof(*ni));
        if (!ni)
            return skv__err(err, SKV_ENOMEM, "device list: out of memory");
        list->items = ni;
        list->cap = nc;
    }
    if (copy_device(&list->items[list->n], dev)) {
        device_clear(&list->items[list->n]);
        return skv__err(err, SKV_ENOMEM, "device list: out of memory");
    }
    list->n++;
    return 0;
}

size_t skv_device_list_count(const skv_device_list *list)
{
    return list ? list->n : 0;
}

const skv_device *skv_device_list_at(const skv_device_list *list, size_t i)
{
    return list && i < list->n ? &list->items[i] : NULL;
}

const skv_device *skv_device_list_find(const skv_device_list *list,
                                       const char *id)
{
    if (!list || !id)
        return NULL;
    /* Most plugins number their devices by position ("0", "1", ...); ids
     * are unique, so a hit there is the answer the scan would give. */
    char *end;
    unsigned long guess = strtoul(id, &end, 10);
    if (end != id && !*end && guess < list->n &&
        strcmp(list->items[guess].id, id) == 0)
        return &list->items[guess];
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->items[i].id, id) == 0)
            return &list->items[i];
    return NULL;
}

skv_qty skv_device_capacity(const skv_device *dev, const char *slot)
{
    for (size_t i = 0; dev && slot && i < dev->nslots; i++)
        if (strcmp(dev->slots[i].slot, slot) == 0)
            return dev->slots[i].qty;
    return 0;
}
