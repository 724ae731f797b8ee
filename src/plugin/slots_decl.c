/* Slot declarations collected from plugins.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

void skv__plugin_slots_clear(skv_plugin_slots *s)
{
    for (size_t i = 0; s && i < s->n; i++) {
        skv__free((void *)s->items[i].name);
        skv__free((void *)s->items[i].unit);
    }
    if (s) {
        skv__free(s->items);
        s->items = NULL;
        s->n = 0;
    }
}

static int check_slot(const skv_plugin_slots *out, const skv_plugin_slot *s,
                      skv_error *err)
{
    int rc = skv_slot_name_check(s->name, err);
    if (rc)
        return rc;
    if (s->kind != SKV_SLOT_COUNT && s->kind != SKV_SLOT_BYTES &&
        s->kind != SKV_SLOT_UNIQUE)
        return skv__err(err, SKV_EINVAL, "slot '%s': unknown kind %d",
                        s->name, (int)s->kind);
    if (s->mode != SKV_ALLOC_DISCRETE && s->mode != SKV_ALLOC_FRACTIONAL)
        return skv__err(err, SKV_EINVAL, "slot '%s': unknown mode %d",
                        s->name, (int)s->mode);
    if (s->kind == SKV_SLOT_UNIQUE && s->mode == SKV_ALLOC_FRACTIONAL)
        return skv__err(err, SKV_EINVAL, "slot '%s': a unique slot cannot be "
                        "fractional", s->name);
    if (s->quantum < 0)
        return skv__err(err, SKV_EINVAL, "slot '%s': negative quantum",
                        s->name);
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->items[i].name, s->name) == 0)
            return skv__err(err, SKV_EINVAL, "slot '%s' declared twice",
                            s->name);
    return 0;
}

int skv__plugin_slots_declare(skv_plugin_slots *out,
                              const skv_plugin_slot *slot, skv_error *err)
{
    if (!out || !slot)
        return skv__err(err, SKV_EINVAL, "slot_declare: NULL argument");
    int rc = check_slot(out, slot, err);
    if (rc)
        return rc;
    skv_plugin_slot *ni = skv__reallocarray(out->items, out->n + 1,
                                            sizeof(*ni));
    if (!ni)
        return skv__err(err, SKV_ENOMEM, "plugin slots: out of memory");
    out->items = ni;
    skv_plugin_slot copy = *slot;
    copy.name = skv__strdup(slot->name);
    copy.unit = skv__strdup(slot->unit ? slot->unit : "");
    if (!copy.name || !copy.unit) {
        skv__free((void *)copy.name);
        skv__free((void *)copy.unit);
        return skv__err(err, SKV_ENOMEM, "plugin slots: out of memory");
    }
    ni[out->n++] = copy;
    return 0;
}
