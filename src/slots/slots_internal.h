/* Private to src/slots/: the layout of slot vectors and registries, and the
 * helpers the module's files share.
 *
 * A vector is one sorted array of entries with the name stored inline, so the
 * hot comparisons (fits/le/eq) walk two arrays in step without chasing
 * pointers or allocating.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SLOTS_INTERNAL_H
#define SKV_SLOTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/slots.h"

typedef struct skv__slot_entry {
    char name[SKV_SLOT_NAME_MAX];
    skv_qty qty;
    skv_slot_kind kind;
} skv__slot_entry;

struct skv_slots {
    skv__slot_entry *e; /* sorted by name (strcmp), no duplicates */
    size_t len;
    size_t cap;
};

typedef struct skv__slot_type {
    char name[SKV_SLOT_NAME_MAX];
    skv_slot_kind kind;
    char *unit; /* own allocation: stays put when the array grows */
} skv__slot_type;

struct skv_slot_registry {
    skv__slot_type *t; /* sorted by name */
    size_t len;
    size_t cap;
};

/* Longest display form of a name in messages (sanitised, maybe shortened). */
#define SKV__SLOT_DISPLAY_MAX 80

static inline bool skv__slot_kind_valid(int kind)
{
    return kind == SKV_SLOT_COUNT || kind == SKV_SLOT_BYTES ||
           kind == SKV_SLOT_UNIQUE;
}

/* ---- names (name.c) ---- */
/* Validate name[0..len) (it need not be NUL-terminated); on failure return
 * `code` with a message naming the culprit. */
int skv__slots_name_check_n(const char *name, size_t len, int code,
                            skv_error *err);
/* Printable copy of untrusted bytes for messages (non-printables -> '?'). */
void skv__slots_name_display(char out[SKV__SLOT_DISPLAY_MAX], const char *s,
                             size_t len);
/* The kind a name gets when no registry is given: BYTES for "mem" and
 * "*.mem", COUNT otherwise. */
skv_slot_kind skv__slots_default_kind(const char *name, size_t len);

/* ---- quantities (qty_parse.c, qty_check.c) ---- */
/* skv_qty_parse on text[0..len). */
int skv__qty_parse_n(skv_qty *out, const char *text, size_t len,
                     skv_slot_kind kind, skv_error *err);
/* Whether qty is storable for kind: 0..SKV_QTY_MAX or UNLIMITED, and whole
 * units for UNIQUE. On failure return `code` naming the slot. */
int skv__qty_check(skv_qty qty, skv_slot_kind kind, const char *name,
                   int code, skv_error *err);

/* ---- vectors (vector.c) ---- */
/* Index of name, or -(insertion point) - 1 when missing. */
ptrdiff_t skv__slots_find(const skv_slots *s, const char *name);
/* Make room for `need` entries in total (amortised doubling). */
int skv__slots_reserve(skv_slots *s, size_t need, skv_error *err);
/* Insert at position pos (caller checked order and capacity). */
void skv__slots_insert_at(skv_slots *s, size_t pos, const char *name,
                          skv_slot_kind kind, skv_qty qty);

#endif
