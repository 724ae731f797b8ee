/*
 * sokovan/slots.h - resource slots, the currency of the whole system.
 *
 * A slot vector maps slot names ("cpu", "mem", "cuda.device", "cuda.shares",
 * any "vendor.kind") to exact fixed-point quantities:
 *   - SKV_SLOT_COUNT and SKV_SLOT_UNIQUE quantities are in milli-units
 *     (1000 == 1 unit; 0.001 is the quantum, so 0.25 and 0.5 are exact);
 *   - SKV_SLOT_BYTES quantities are exact byte counts.
 * No floating point is used for quantities. SKV_QTY_UNLIMITED is a value of
 * its own ("no limit") for policies; arithmetic keeps it unlimited.
 *
 * Entries are kept sorted by name (strcmp order), which is the stable
 * iteration order. A name missing from a vector reads as 0.
 *
 * Thread-safety: a registry or vector may be read from many threads at once;
 * any modification needs exclusive access. Distinct objects are independent.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_SLOTS_H
#define SOKOVAN_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t skv_qty;

#define SKV_QTY_SCALE 1000              /* milli-units per unit (count kinds) */
#define SKV_QTY_UNLIMITED INT64_MAX     /* "no limit" */
#define SKV_QTY_MAX (INT64_MAX - 1)     /* largest finite quantity */
#define SKV_SLOT_NAME_MAX 64            /* including the terminating NUL */
#define SKV_QTY_FORMAT_MAX 32           /* buffer size for skv_qty_format() */

typedef enum skv_slot_kind {
    SKV_SLOT_COUNT = 1,  /* divisible count (cpu, cuda.shares), milli-units */
    SKV_SLOT_BYTES = 2,  /* byte amount (mem), exact integer bytes */
    SKV_SLOT_UNIQUE = 3  /* indivisible device: whole units only (milli-units,
                          * always a multiple of SKV_QTY_SCALE) */
} skv_slot_kind;

/* "count", "bytes", "unique"; "?" for others. */
SKV_EXTERN const char *skv_slot_kind_name(skv_slot_kind kind);

/* ---- quantities -------------------------------------------------------- */

/* Parse one quantity of the given kind (no surrounding spaces).
 * COUNT: "4", "0.5", "0.125" (at most 3 significant decimals); UNIQUE: whole
 * numbers only ("2").
 * BYTES: "1024", "16g", "16G", "16GiB", "512MiB", "1.5T", "1.5tb"; suffixes
 * k/m/g/t/p/e (with optional "i" and/or "b") are powers of 1024; fractions
 * must yield a whole number of bytes.
 * Both: "unlimited" or "inf" give SKV_QTY_UNLIMITED.
 * Errors: SKV_EINVAL (syntax, negative, unit, too precise), SKV_ERANGE. */
SKV_EXTERN int skv_qty_parse(skv_qty *out, const char *text, skv_slot_kind kind,
                             skv_error *err);

/* Format a quantity: counts as "4", "0.5", "0.125"; bytes with the largest
 * binary suffix that is exact ("16g", "1536m", "1000"); "unlimited".
 * Returns the string length (excluding NUL) or a negative error code;
 * SKV_ERANGE when bufsz is too small (SKV_QTY_FORMAT_MAX always suffices). */
SKV_EXTERN int skv_qty_format(char *buf, size_t bufsz, skv_qty qty,
                              skv_slot_kind kind);

/* ---- slot-type registry ------------------------------------------------ */

typedef struct skv_slot_registry skv_slot_registry;

/* An empty registry. */
SKV_EXTERN int skv_slot_registry_new(skv_slot_registry **out, skv_error *err);
/* A registry with the built-in types: cpu (count, "core"), mem (bytes, "B"),
 * cuda.device (count, "GPU"), cuda.shares (count, "fGPU"). */
SKV_EXTERN int skv_slot_registry_new_default(skv_slot_registry **out,
                                             skv_error *err);
SKV_EXTERN void skv_slot_registry_free(skv_slot_registry *reg);

/* Register a slot type. name: [a-z][a-z0-9_-]* optionally followed by one
 * ".[a-z][a-z0-9_-]*" part, shorter than SKV_SLOT_NAME_MAX. unit may be NULL
 * (empty). Registering an existing name with the same kind and unit is a
 * no-op; with a different kind or unit it is SKV_EEXIST. */
SKV_EXTERN int skv_slot_registry_add(skv_slot_registry *reg, const char *name,
                                     skv_slot_kind kind, const char *unit,
                                     skv_error *err);

/* SKV_ENOENT when the name is not registered. Out-params may be NULL. The
 * unit string stays valid while the registry lives and is not modified. */
SKV_EXTERN int skv_slot_registry_lookup(const skv_slot_registry *reg,
                                        const char *name, skv_slot_kind *kind,
                                        const char **unit);

SKV_EXTERN size_t skv_slot_registry_count(const skv_slot_registry *reg);
/* Entries in name order. SKV_ERANGE when index is past the end. */
SKV_EXTERN int skv_slot_registry_at(const skv_slot_registry *reg, size_t index,
                                    const char **name, skv_slot_kind *kind,
                                    const char **unit);

/* Validate a slot name (syntax only). */
SKV_EXTERN int skv_slot_name_check(const char *name, skv_error *err);

/* ---- slot vectors ------------------------------------------------------ */

typedef struct skv_slots skv_slots;

SKV_EXTERN int skv_slots_new(skv_slots **out, skv_error *err);
SKV_EXTERN int skv_slots_dup(skv_slots **out, const skv_slots *src,
                             skv_error *err);
SKV_EXTERN void skv_slots_free(skv_slots *slots);
/* Remove all entries. */
SKV_EXTERN void skv_slots_clear(skv_slots *slots);
/* Make dst an exact copy of src. */
SKV_EXTERN int skv_slots_copy(skv_slots *dst, const skv_slots *src,
                              skv_error *err);

/* Set an entry (insert or replace). qty must be >= 0 (or UNLIMITED). A name
 * already present with another kind is SKV_EINVAL. UNIQUE entries must be
 * whole units (a multiple of 1000) or UNLIMITED. */
SKV_EXTERN int skv_slots_set(skv_slots *slots, const char *name,
                             skv_slot_kind kind, skv_qty qty, skv_error *err);
/* Remove an entry if present. */
SKV_EXTERN void skv_slots_remove(skv_slots *slots, const char *name);
/* Quantity of name; 0 when missing. */
SKV_EXTERN skv_qty skv_slots_get(const skv_slots *slots, const char *name);
/* Like get, but also tells whether the entry exists and its kind.
 * SKV_ENOENT when missing (out-params untouched). Out-params may be NULL. */
SKV_EXTERN int skv_slots_lookup(const skv_slots *slots, const char *name,
                                skv_slot_kind *kind, skv_qty *qty);

SKV_EXTERN size_t skv_slots_count(const skv_slots *slots);
/* Entries in name order; name valid until the vector is modified. */
SKV_EXTERN int skv_slots_at(const skv_slots *slots, size_t index,
                            const char **name, skv_slot_kind *kind,
                            skv_qty *qty);

/* Parse "cpu=4,mem=16g,cuda.shares=0.5" (spaces around tokens allowed; ""
 * is the empty vector). With a registry, unknown names are rejected and the
 * registry decides each kind; with reg NULL any valid name is accepted and
 * the kind is BYTES for "mem" and names ending in ".mem", COUNT otherwise.
 * Duplicate keys, bad names, bad quantities: SKV_EINVAL naming the culprit. */
SKV_EXTERN int skv_slots_parse(skv_slots **out, const char *text,
                               const skv_slot_registry *reg, skv_error *err);
/* Canonical text form, "cpu=4,mem=16g" in name order (caller frees with
 * skv_free). Parsing the result (with the registry that decided the kinds,
 * or none when the kinds follow the default rule above) gives an equal
 * vector. */
SKV_EXTERN int skv_slots_format(char **out, const skv_slots *slots,
                                skv_error *err);

/* ---- arithmetic (dst is unchanged when an error is returned) ----------- */

#define SKV_SLOTS_CLAMP 0x1u /* sub: clamp at 0 instead of failing */

/* dst += src. Kind mismatch: SKV_EINVAL. Overflow: SKV_ERANGE.
 * UNLIMITED + x = UNLIMITED. Keys of src missing in dst are added.
 * No allocation when dst already has every key of src; dst == src is fine. */
SKV_EXTERN int skv_slots_add(skv_slots *dst, const skv_slots *src,
                             skv_error *err);
/* dst -= src. Going below 0 is SKV_ERANGE unless SKV_SLOTS_CLAMP (then 0).
 * Entries that become 0 stay present; keys of src missing in dst are added
 * (as 0, which is only possible for 0 or with SKV_SLOTS_CLAMP).
 * UNLIMITED - x = UNLIMITED (also for x UNLIMITED); finite - UNLIMITED is
 * below zero. */
SKV_EXTERN int skv_slots_sub(skv_slots *dst, const skv_slots *src,
                             unsigned flags, skv_error *err);
/* dst = min(dst, other) per key (missing = 0, so the result has the keys of
 * both, and the min over a key missing in one is 0). */
SKV_EXTERN int skv_slots_min(skv_slots *dst, const skv_slots *other,
                             skv_error *err);
/* dst = max(dst, other) per key. */
SKV_EXTERN int skv_slots_max(skv_slots *dst, const skv_slots *other,
                             skv_error *err);
/* dst *= factor (factor >= 0). Overflow: SKV_ERANGE. UNLIMITED stays
 * UNLIMITED for factor > 0; factor 0 makes every entry 0. */
SKV_EXTERN int skv_slots_scale(skv_slots *dst, int64_t factor, skv_error *err);

/* ---- comparison --------------------------------------------------------- */
/* These never allocate and never fail; a NULL vector reads as empty.
 * They compare quantities per name and ignore kinds. */

/* 1 when every quantity of a is <= the same key of b (missing = 0,
 * UNLIMITED >= everything), else 0. skv_slots_fits(req, avail) reads as
 * "req fits into avail"; both are the same relation. */
SKV_EXTERN int skv_slots_le(const skv_slots *a, const skv_slots *b);
SKV_EXTERN int skv_slots_fits(const skv_slots *request,
                              const skv_slots *available);
/* 1 when every key has the same quantity in both (missing = 0). */
SKV_EXTERN int skv_slots_eq(const skv_slots *a, const skv_slots *b);
/* 1 when every quantity is 0 (or the vector is empty). */
SKV_EXTERN int skv_slots_is_zero(const skv_slots *slots);
/* When request does not fit available: the first (in name order) slot that
 * is short, and by how much (request - available; UNLIMITED when an
 * UNLIMITED request meets a finite supply). Returns 1 when a short slot was
 * found, 0 when it fits. Out-params may be NULL. */
SKV_EXTERN int skv_slots_first_short(const skv_slots *request,
                                     const skv_slots *available,
                                     const char **name, skv_qty *shortfall);

/* Dominant share (DRF): max over keys of v[k] / capacity[k] for keys with a
 * finite, non-zero capacity. Keys of v with zero or missing capacity and a
 * non-zero quantity, or an UNLIMITED quantity against a finite capacity,
 * make the share infinite (returned as +HUGE_VAL); keys with an UNLIMITED
 * capacity are skipped. slot_out (may be NULL) receives the dominant slot
 * name (the first in name order on ties) or NULL when the share is 0. */
SKV_EXTERN int skv_slots_dominant_share(double *share_out, const char **slot_out,
                                        const skv_slots *v,
                                        const skv_slots *capacity,
                                        skv_error *err);

/* ---- msgpack ------------------------------------------------------------ */

/* Encode as a msgpack map { name: [kind, qty], ... } in name order
 * (qty as a signed 64-bit integer, UNLIMITED as INT64_MAX). The buffer is
 * the caller's: free with skv_free. */
SKV_EXTERN int skv_slots_encode(void **out_buf, size_t *out_len,
                                const skv_slots *slots, skv_error *err);
/* Decode untrusted bytes. Entries may come in any order. Truncated data,
 * trailing bytes, wrong types, invalid names, negative or out-of-range
 * quantities, unknown names (when a registry is given) or kinds that
 * disagree with the registry, duplicate keys, more than
 * SKV_SLOTS_DECODE_MAX entries, and input longer than any valid encoding
 * of that many entries: SKV_EPROTO. Memory use is bounded by len. */
#define SKV_SLOTS_DECODE_MAX 1024
SKV_EXTERN int skv_slots_decode(skv_slots **out, const void *buf, size_t len,
                                const skv_slot_registry *reg, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_SLOTS_H */
