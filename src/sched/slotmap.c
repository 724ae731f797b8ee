/* The scheduler's slot table: slot names interned to small indexes so that
 * requests, capacities and usage are dense arrays.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

uint8_t skv__sched_slot_find(const skv_sched *s, const char *name)
{
    for (uint8_t i = 0; i < s->nslots; i++)
        if (strcmp(s->slot_name[i], name) == 0)
            return i;
    return SKV_SCHED_NO_SLOT;
}

int skv__sched_slot(skv_sched *s, uint8_t *out, const char *name,
                    skv_slot_kind kind, skv_error *err)
{
    uint8_t i = skv__sched_slot_find(s, name);
    if (i != SKV_SCHED_NO_SLOT) {
        if (s->slot_kind[i] != kind)
            return skv__err(err, SKV_EINVAL,
                            "slot '%s' is used as %s here but as %s before",
                            name, skv_slot_kind_name(kind),
                            skv_slot_kind_name(s->slot_kind[i]));
        *out = i;
        return 0;
    }
    int rc = skv_slot_name_check(name, err);
    if (rc)
        return rc;
    if (s->nslots >= NSL)
        return skv__err(err, SKV_ERANGE,
                        "slot '%s': a scheduler holds at most %d slot names",
                        name, NSL);
    char *copy = skv__strdup(name);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    s->slot_name[s->nslots] = copy;
    s->slot_kind[s->nslots] = kind;
    *out = s->nslots++;
    return 0;
}

int skv__sched_dense(skv_sched *s, skv_qty *out, const skv_slots *v,
                     const char *what, skv_error *err)
{
    memset(out, 0, sizeof(skv_qty) * NSL);
    size_t n = v ? skv_slots_count(v) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        skv_slot_kind kind;
        skv_qty q;
        skv_slots_at(v, i, &name, &kind, &q);
        uint8_t ix;
        int rc = skv__sched_slot(s, &ix, name, kind, err);
        if (rc) {
            skv__err_prefix(err, "%s", what);
            return rc;
        }
        out[ix] = q;
    }
    return 0;
}

int skv__sched_to_slots(skv_slots **out, const skv_sched *s,
                        const skv_qty *v, skv_error *err)
{
    skv_slots *r;
    int rc = skv_slots_new(&r, err);
    if (rc)
        return rc;
    for (uint8_t i = 0; i < s->nslots; i++) {
        rc = skv_slots_set(r, s->slot_name[i], s->slot_kind[i], v[i], err);
        if (rc) {
            skv_slots_free(r);
            return rc;
        }
    }
    *out = r;
    return 0;
}
