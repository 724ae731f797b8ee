/* Slot vectors: lifetime, single-entry access and iteration.
 * SPDX-License-Identifier: Apache-2.0 */
#include "slots_internal.h"

int skv_slots_new(skv_slots **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "skv_slots_new: out is NULL");
    skv_slots *s = skv__calloc(1, sizeof(*s));
    if (!s)
        return skv__err(err, SKV_ENOMEM, "slot vector: out of memory");
    *out = s;
    return 0;
}

void skv_slots_free(skv_slots *slots)
{
    if (!slots)
        return;
    skv__free(slots->e);
    skv__free(slots);
}

void skv_slots_clear(skv_slots *slots)
{
    if (slots)
        slots->len = 0;
}

int skv__slots_reserve(skv_slots *s, size_t need, skv_error *err)
{
    if (need <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 4;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    skv__slot_entry *e = skv__reallocarray(s->e, cap, sizeof(*e));
    if (!e)
        return skv__err(err, SKV_ENOMEM, "slot vector: out of memory "
                        "growing to %zu entries", cap);
    s->e = e;
    s->cap = cap;
    return 0;
}

int skv_slots_copy(skv_slots *dst, const skv_slots *src, skv_error *err)
{
    if (!dst || !src)
        return skv__err(err, SKV_EINVAL, "skv_slots_copy: %s is NULL",
                        dst ? "src" : "dst");
    if (dst == src)
        return 0;
    int rc = skv__slots_reserve(dst, src->len, err);
    if (rc)
        return rc;
    if (src->len)
        memcpy(dst->e, src->e, src->len * sizeof(*src->e));
    dst->len = src->len;
    return 0;
}

int skv_slots_dup(skv_slots **out, const skv_slots *src, skv_error *err)
{
    if (!out || !src)
        return skv__err(err, SKV_EINVAL, "skv_slots_dup: %s is NULL",
                        out ? "src" : "out");
    skv_slots *s = NULL;
    int rc = skv_slots_new(&s, err);
    if (rc == 0 && (rc = skv_slots_copy(s, src, err)) != 0) {
        skv_slots_free(s);
        return rc;
    }
    if (rc == 0)
        *out = s;
    return rc;
}

ptrdiff_t skv__slots_find(const skv_slots *s, const char *name)
{
    size_t lo = 0, hi = s->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->e[mid].name, name);
        if (c == 0)
            return (ptrdiff_t)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(ptrdiff_t)lo - 1;
}

void skv__slots_insert_at(skv_slots *s, size_t pos, const char *name,
                          skv_slot_kind kind, skv_qty qty)
{
    skv__slot_entry *e = &s->e[pos];
    memmove(e + 1, e, (s->len - pos) * sizeof(*e));
    /* Zero the whole name so copies and encodings never carry stale bytes. */
    memset(e->name, 0, sizeof(e->name));
    strcpy(e->name, name);
    e->kind = kind;
    e->qty = qty;
    s->len++;
}

int skv_slots_set(skv_slots *slots, const char *name, skv_slot_kind kind,
                  skv_qty qty, skv_error *err)
{
    if (!slots)
        return skv__err(err, SKV_EINVAL, "skv_slots_set: slots is NULL");
    int rc = skv_slot_name_check(name, err);
    if (rc || (rc = skv__qty_check(qty, kind, name, SKV_EINVAL, err)) != 0)
        return rc;
    ptrdiff_t at = skv__slots_find(slots, name);
    if (at >= 0) {
        skv__slot_entry *e = &slots->e[at];
        if (e->kind != kind)
            return skv__err(err, SKV_EINVAL,
                            "slot '%s' is a %s slot, not %s", name,
                            skv_slot_kind_name(e->kind),
                            skv_slot_kind_name(kind));
        e->qty = qty;
        return 0;
    }
    if ((rc = skv__slots_reserve(slots, slots->len + 1, err)) != 0)
        return rc;
    skv__slots_insert_at(slots, (size_t)(-at - 1), name, kind, qty);
    return 0;
}

void skv_slots_remove(skv_slots *slots, const char *name)
{
    if (!slots || !name)
        return;
    ptrdiff_t at = skv__slots_find(slots, name);
    if (at < 0)
        return;
    skv__slot_entry *e = &slots->e[at];
    memmove(e, e + 1, (slots->len - (size_t)at - 1) * sizeof(*e));
    slots->len--;
}

skv_qty skv_slots_get(const skv_slots *slots, const char *name)
{
    if (!slots || !name)
        return 0;
    ptrdiff_t at = skv__slots_find(slots, name);
    return at >= 0 ? slots->e[at].qty : 0;
}

int skv_slots_lookup(const skv_slots *slots, const char *name,
                     skv_slot_kind *kind, skv_qty *qty)
{
    if (!slots || !name)
        return SKV_EINVAL;
    ptrdiff_t at = skv__slots_find(slots, name);
    if (at < 0)
        return SKV_ENOENT;
    if (kind)
        *kind = slots->e[at].kind;
    if (qty)
        *qty = slots->e[at].qty;
    return 0;
}

size_t skv_slots_count(const skv_slots *slots)
{
    return slots ? slots->len : 0;
}

int skv_slots_at(const skv_slots *slots, size_t index, const char **name,
                 skv_slot_kind *kind, skv_qty *qty)
{
    if (!slots || index >= slots->len)
        return SKV_ERANGE;
    const skv__slot_entry *e = &slots->e[index];
    if (name)
        *name = e->name;
    if (kind)
        *kind = e->kind;
    if (qty)
        *qty = e->qty;
    return 0;
}
