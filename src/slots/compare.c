/* Slot-vector comparisons and the DRF dominant share. These are the
 * scheduler's inner loop: merge walks over the two sorted arrays, no
 * allocation, no error objects.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>

#include "slots_internal.h"

static const skv_slots empty_slots = {NULL, 0, 0};

/* NULL reads as the empty vector in the read-only functions below. */
static inline const skv_slots *or_empty(const skv_slots *s)
{
    return s ? s : &empty_slots;
}

/* Index of the first entry of a that exceeds b (missing = 0), or a->len. */
static size_t first_exceeding(const skv_slots *a, const skv_slots *b)
{
    size_t j = 0;
    for (size_t i = 0; i < a->len; i++) {
        const skv__slot_entry *x = &a->e[i];
        if (x->qty == 0)
            continue;
        int c = 1;
        while (j < b->len && (c = strcmp(b->e[j].name, x->name)) < 0)
            j++;
        if (j == b->len)
            return i; /* b has no more keys: x > 0 exceeds the missing 0 */
        if (c != 0 || x->qty > b->e[j].qty)
            return i;
    }
    return a->len;
}

int skv_slots_le(const skv_slots *a, const skv_slots *b)
{
    a = or_empty(a);
    return first_exceeding(a, or_empty(b)) == a->len;
}

int skv_slots_fits(const skv_slots *request, const skv_slots *available)
{
    return skv_slots_le(request, available);
}

int skv_slots_eq(const skv_slots *a, const skv_slots *b)
{
    a = or_empty(a);
    b = or_empty(b);
    size_t i = 0, j = 0;
    while (i < a->len || j < b->len) {
        int c = i == a->len ? 1 : j == b->len ? -1
                                              : strcmp(a->e[i].name, b->e[j].name);
        if (c < 0) {
            if (a->e[i++].qty != 0)
                return 0;
        } else if (c > 0) {
            if (b->e[j++].qty != 0)
                return 0;
        } else if (a->e[i++].qty != b->e[j++].qty) {
            return 0;
        }
    }
    return 1;
}

int skv_slots_is_zero(const skv_slots *slots)
{
    slots = or_empty(slots);
    for (size_t i = 0; i < slots->len; i++)
        if (slots->e[i].qty != 0)
            return 0;
    return 1;
}

int skv_slots_first_short(const skv_slots *request, const skv_slots *available,
                          const char **name, skv_qty *shortfall)
{
    request = or_empty(request);
    available = or_empty(available);
    size_t i = first_exceeding(request, available);
    if (i == request->len)
        return 0;
    const skv__slot_entry *x = &request->e[i];
    skv_qty have = skv_slots_get(available, x->name);
    if (name)
        *name = x->name;
    if (shortfall) /* UNLIMITED asked of a finite supply: short by UNLIMITED */
        *shortfall = x->qty == SKV_QTY_UNLIMITED ? SKV_QTY_UNLIMITED
                                                 : x->qty - have;
    return 1;
}

int skv_slots_dominant_share(double *share_out, const char **slot_out,
                             const skv_slots *v, const skv_slots *capacity,
                             skv_error *err)
{
    if (!share_out || !v || !capacity)
        return skv__err(err, SKV_EINVAL, "skv_slots_dominant_share: %s is "
                        "NULL", !share_out ? "share_out" : !v ? "v" : "capacity");
    double best = 0.0;
    const char *best_name = NULL;
    size_t j = 0;
    for (size_t i = 0; i < v->len; i++) {
        const skv__slot_entry *x = &v->e[i];
        int c = 1;
        while (j < capacity->len &&
               (c = strcmp(capacity->e[j].name, x->name)) < 0)
            j++;
        skv_qty cap = (j < capacity->len && c == 0) ? capacity->e[j].qty : 0;
        if (x->qty == 0 || cap == SKV_QTY_UNLIMITED)
            continue; /* nothing used, or no limit: no share */
        double share = (cap == 0 || x->qty == SKV_QTY_UNLIMITED)
                           ? HUGE_VAL
                           : (double)x->qty / (double)cap;
        if (share > best) { /* strict: ties keep the first name */
            best = share;
            best_name = x->name;
        }
    }
    *share_out = best;
    if (slot_out)
        *slot_out = best_name;
    return 0;
}
