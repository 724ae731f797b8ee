/* The slot-type registry: which names exist, their kind and display unit.
 * SPDX-License-Identifier: Apache-2.0 */
#include "slots_internal.h"

#define UNIT_MAX 32 /* display units are short labels ("core", "fGPU") */

int skv_slot_registry_new(skv_slot_registry **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "skv_slot_registry_new: out is NULL");
    skv_slot_registry *r = skv__calloc(1, sizeof(*r));
    if (!r)
        return skv__err(err, SKV_ENOMEM, "slot registry: out of memory");
    *out = r;
    return 0;
}

int skv_slot_registry_new_default(skv_slot_registry **out, skv_error *err)
{
    static const struct {
        const char *name;
        skv_slot_kind kind;
        const char *unit;
    } builtin[] = {
        {"cpu", SKV_SLOT_COUNT, "core"},
        {"mem", SKV_SLOT_BYTES, "B"},
        {"cuda.device", SKV_SLOT_COUNT, "GPU"},
        {"cuda.shares", SKV_SLOT_COUNT, "fGPU"},
    };
    skv_slot_registry *r = NULL;
    int rc = skv_slot_registry_new(&r, err);
    for (size_t i = 0; rc == 0 && i < SKV__ARRAY_LEN(builtin); i++)
        rc = skv_slot_registry_add(r, builtin[i].name, builtin[i].kind,
                                   builtin[i].unit, err);
    if (rc) {
        skv_slot_registry_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void skv_slot_registry_free(skv_slot_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->len; i++)
        skv__free(reg->t[i].unit);
    skv__free(reg->t);
    skv__free(reg);
}

/* Index of name, or -(insertion point) - 1. */
static ptrdiff_t reg_find(const skv_slot_registry *reg, const char *name)
{
    size_t lo = 0, hi = reg->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(reg->t[mid].name, name);
        if (c == 0)
            return (ptrdiff_t)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(ptrdiff_t)lo - 1;
}

static int check_unit(const char *unit, skv_error *err)
{
    size_t len = strlen(unit);
    char shown[SKV__SLOT_DISPLAY_MAX];
    skv__slots_name_display(shown, unit, len);
    if (len >= UNIT_MAX)
        return skv__err(err, SKV_EINVAL, "unit '%s' is longer than %d "
                        "characters", shown, UNIT_MAX - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)unit[i] < 0x20 || unit[i] == 0x7f)
            return skv__err(err, SKV_EINVAL,
                            "unit '%s' contains a control character", shown);
    return 0;
}

static int reg_insert(skv_slot_registry *reg, size_t pos, const char *name,
                      skv_slot_kind kind, const char *unit, skv_error *err)
{
    if (reg->len == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 8;
        skv__slot_type *t = skv__reallocarray(reg->t, cap, sizeof(*t));
        if (!t)
            return skv__err(err, SKV_ENOMEM, "slot registry: out of memory");
        reg->t = t;
        reg->cap = cap;
    }
    char *u = skv__strdup(unit);
    if (!u)
        return skv__err(err, SKV_ENOMEM, "slot registry: out of memory");
    memmove(reg->t + pos + 1, reg->t + pos, (reg->len - pos) * sizeof(*reg->t));
    skv__slot_type *t = &reg->t[pos];
    memset(t->name, 0, sizeof(t->name));
    strcpy(t->name, name);
    t->kind = kind;
    t->unit = u;
    reg->len++;
    return 0;
}

int skv_slot_registry_add(skv_slot_registry *reg, const char *name,
                          skv_slot_kind kind, const char *unit, skv_error *err)
{
    if (!reg)
        return skv__err(err, SKV_EINVAL, "skv_slot_registry_add: reg is NULL");
    int rc = skv_slot_name_check(name, err);
    if (rc)
        return rc;
    if (!skv__slot_kind_valid((int)kind))
        return skv__err(err, SKV_EINVAL, "slot type '%s': invalid kind %d",
                        name, (int)kind);
    if (!unit)
        unit = "";
    if ((rc = check_unit(unit, err)) != 0) {
        skv__err_prefix(err, "slot type '%s'", name);
        return rc;
    }
    ptrdiff_t at = reg_find(reg, name);
    if (at >= 0) {
        const skv__slot_type *t = &reg->t[at];
        if (t->kind == kind && strcmp(t->unit, unit) == 0)
            return 0;
        return skv__err(err, SKV_EEXIST,
                        "slot type '%s' is already registered as %s '%s'",
                        name, skv_slot_kind_name(t->kind), t->unit);
    }
    return reg_insert(reg, (size_t)(-at - 1), name, kind, unit, err);
}

int skv_slot_registry_lookup(const skv_slot_registry *reg, const char *name,
                             skv_slot_kind *kind, const char **unit)
{
    if (!reg || !name)
        return SKV_EINVAL;
    ptrdiff_t at = reg_find(reg, name);
    if (at < 0)
        return SKV_ENOENT;
    if (kind)
        *kind = reg->t[at].kind;
    if (unit)
        *unit = reg->t[at].unit;
    return 0;
}

size_t skv_slot_registry_count(const skv_slot_registry *reg)
{
    return reg ? reg->len : 0;
}

int skv_slot_registry_at(const skv_slot_registry *reg, size_t index,
                         const char **name, skv_slot_kind *kind,
                         const char **unit)
{
    if (!reg || index >= reg->len)
        return SKV_ERANGE;
    if (name)
        *name = reg->t[index].name;
    if (kind)
        *kind = reg->t[index].kind;
    if (unit)
        *unit = reg->t[index].unit;
    return 0;
}
