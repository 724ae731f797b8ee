/* Slot-vector arithmetic: add, sub, min, max, scale.
 *
 * Every binary operation is a merge of two name-sorted arrays, done twice:
 * a validation walk that detects kind mismatches and overflow and counts the
 * keys dst lacks, then an apply walk. So a failed call leaves dst untouched,
 * and when dst already has every key of src (the scheduler's common case)
 * nothing is allocated; otherwise dst grows once and the walk runs backwards
 * so the merge happens in place.
 * SPDX-License-Identifier: Apache-2.0 */
#include "slots_internal.h"

enum op { OP_ADD, OP_SUB, OP_SUB_CLAMP, OP_MIN, OP_MAX };

/* r = a op b for one key; a is dst's value, b is src's (0 when missing).
 * Returns false when the result is out of range. */
static inline bool combine(skv_qty *r, skv_qty a, skv_qty b, enum op op)
{
    switch (op) {
    case OP_ADD:
        if (a == SKV_QTY_UNLIMITED || b == SKV_QTY_UNLIMITED)
            *r = SKV_QTY_UNLIMITED;
        else if (a > SKV_QTY_MAX - b)
            return false;
        else
            *r = a + b;
        return true;
    case OP_SUB:
    case OP_SUB_CLAMP:
        if (a == SKV_QTY_UNLIMITED)
            *r = SKV_QTY_UNLIMITED;
        else if (b > a) /* also b UNLIMITED against a finite a */
            return op == OP_SUB_CLAMP ? (*r = 0, true) : false;
        else
            *r = a - b;
        return true;
    case OP_MIN:
        *r = a < b ? a : b;
        return true;
    case OP_MAX:
        *r = a > b ? a : b;
        return true;
    }
    return false;
}

static int range_error(skv_error *err, enum op op, const skv__slot_entry *b,
                       skv_qty a)
{
    char as[SKV_QTY_FORMAT_MAX], bs[SKV_QTY_FORMAT_MAX];
    skv_qty_format(as, sizeof(as), a, b->kind);
    skv_qty_format(bs, sizeof(bs), b->qty, b->kind);
    if (op == OP_ADD)
        return skv__err(err, SKV_ERANGE, "slot '%s': %s + %s overflows",
                        b->name, as, bs);
    return skv__err(err, SKV_ERANGE, "slot '%s': %s - %s goes below zero",
                    b->name, as, bs);
}

/* The validation walk: fails without touching dst, or counts src's keys
 * that dst lacks. Keys only in dst cannot fail (x op 0 is in range). */
static int validate(size_t *nnew_out, const skv_slots *d, const skv_slots *s,
                    enum op op, skv_error *err)
{
    size_t i = 0, nnew = 0;
    for (size_t j = 0; j < s->len; j++) {
        const skv__slot_entry *b = &s->e[j];
        int c = 1;
        while (i < d->len && (c = strcmp(d->e[i].name, b->name)) < 0)
            i++;
        if (i == d->len)
            c = 1;
        skv_qty a = 0, r;
        if (c == 0) {
            if (d->e[i].kind != b->kind)
                return skv__err(err, SKV_EINVAL,
                                "slot '%s': cannot combine a %s slot with a "
                                "%s slot", b->name,
                                skv_slot_kind_name(d->e[i].kind),
                                skv_slot_kind_name(b->kind));
            a = d->e[i++].qty;
        } else {
            nnew++;
        }
        if (!combine(&r, a, b->qty, op))
            return range_error(err, op, b, a);
    }
    *nnew_out = nnew;
    return 0;
}

/* dst has every key of src: one forward walk, no allocation. */
static void apply_in_place(skv_slots *d, const skv_slots *s, enum op op)
{
    size_t j = 0;
    for (size_t i = 0; i < d->len; i++) {
        skv__slot_entry *a = &d->e[i];
        skv_qty b = 0;
        if (j < s->len && strcmp(a->name, s->e[j].name) == 0)
            b = s->e[j++].qty;
        (void)combine(&a->qty, a->qty, b, op);
    }
}

/* dst lacks nnew keys of src and has room for them: merge from the back so
 * each entry moves at most once and nothing is overwritten before use. */
static void apply_merge_back(skv_slots *d, const skv_slots *s, size_t nnew,
                             enum op op)
{
    size_t i = d->len, j = s->len, k = d->len + nnew;
    while (j > 0) {
        const skv__slot_entry *b = &s->e[j - 1];
        int c = i > 0 ? strcmp(d->e[i - 1].name, b->name) : -1;
        skv__slot_entry *out = &d->e[--k];
        if (c > 0) {
            *out = d->e[--i];
            (void)combine(&out->qty, out->qty, 0, op);
        } else if (c == 0) {
            *out = d->e[--i];
            (void)combine(&out->qty, out->qty, b->qty, op);
            j--;
        } else {
            *out = *b;
            (void)combine(&out->qty, 0, b->qty, op);
            j--;
        }
    }
    while (i > 0) { /* the rest is already in place (k == i) */
        i--;
        (void)combine(&d->e[i].qty, d->e[i].qty, 0, op);
    }
    d->len += nnew;
}

static int run(skv_slots *dst, const skv_slots *src, enum op op,
               const char *fn, skv_error *err)
{
    if (!dst || !src)
        return skv__err(err, SKV_EINVAL, "%s: %s is NULL", fn,
                        dst ? "src" : "dst");
    size_t nnew = 0;
    int rc = validate(&nnew, dst, src, op, err);
    if (rc)
        return rc;
    if (nnew == 0) {
        apply_in_place(dst, src, op);
        return 0;
    }
    if ((rc = skv__slots_reserve(dst, dst->len + nnew, err)) != 0)
        return rc;
    apply_merge_back(dst, src, nnew, op);
    return 0;
}

int skv_slots_add(skv_slots *dst, const skv_slots *src, skv_error *err)
{
    return run(dst, src, OP_ADD, "skv_slots_add", err);
}

int skv_slots_sub(skv_slots *dst, const skv_slots *src, unsigned flags,
                  skv_error *err)
{
    if (flags & ~SKV_SLOTS_CLAMP)
        return skv__err(err, SKV_EINVAL, "skv_slots_sub: unknown flags 0x%x",
                        flags & ~SKV_SLOTS_CLAMP);
    return run(dst, src, (flags & SKV_SLOTS_CLAMP) ? OP_SUB_CLAMP : OP_SUB,
               "skv_slots_sub", err);
}

int skv_slots_min(skv_slots *dst, const skv_slots *other, skv_error *err)
{
    return run(dst, other, OP_MIN, "skv_slots_min", err);
}

int skv_slots_max(skv_slots *dst, const skv_slots *other, skv_error *err)
{
    return run(dst, other, OP_MAX, "skv_slots_max", err);
}

int skv_slots_scale(skv_slots *dst, int64_t factor, skv_error *err)
{
    if (!dst)
        return skv__err(err, SKV_EINVAL, "skv_slots_scale: dst is NULL");
    if (factor < 0)
        return skv__err(err, SKV_EINVAL, "skv_slots_scale: negative factor "
                        "%lld", (long long)factor);
    for (size_t i = 0; i < dst->len; i++) { /* validate before changing */
        const skv__slot_entry *e = &dst->e[i];
        skv_qty r;
        if (e->qty != SKV_QTY_UNLIMITED &&
            (skv__mul_overflow_i64(e->qty, factor, &r) || r > SKV_QTY_MAX)) {
            char q[SKV_QTY_FORMAT_MAX];
            skv_qty_format(q, sizeof(q), e->qty, e->kind);
            return skv__err(err, SKV_ERANGE, "slot '%s': %s * %lld overflows",
                            e->name, q, (long long)factor);
        }
    }
    for (size_t i = 0; i < dst->len; i++) {
        skv__slot_entry *e = &dst->e[i];
        if (factor == 0)
            e->qty = 0;
        else if (e->qty != SKV_QTY_UNLIMITED)
            e->qty *= factor;
    }
    return 0;
}
