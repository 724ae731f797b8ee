/* Fixed-point quantity -> text (the inverse of qty_parse.c), and the check of
 * which quantities a vector may store.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>

#include "slots_internal.h"

/* Decimal digits of v into tmp (backwards); returns the start pointer. */
static char *u64_digits(char tmp[24], uint64_t v)
{
    char *p = tmp + 23;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

static int emit(char *buf, size_t bufsz, const char *text, size_t len)
{
    if (len + 1 > bufsz)
        return SKV_ERANGE;
    memcpy(buf, text, len + 1);
    return (int)len;
}

static int format_count(char *buf, size_t bufsz, skv_qty qty)
{
    char tmp[24], out[SKV_QTY_FORMAT_MAX];
    const char *whole = u64_digits(tmp, (uint64_t)qty / SKV_QTY_SCALE);
    size_t len = strlen(whole);
    memcpy(out, whole, len);
    unsigned frac = (unsigned)(qty % SKV_QTY_SCALE);
    if (frac) {
        /* Three digits, then drop trailing zeros: 500 -> ".5". */
        char d[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                     (char)('0' + frac % 10)};
        size_t nd = 3;
        while (d[nd - 1] == '0')
            nd--;
        out[len++] = '.';
        memcpy(out + len, d, nd);
        len += nd;
    }
    out[len] = '\0';
    return emit(buf, bufsz, out, len);
}

static int format_bytes(char *buf, size_t bufsz, skv_qty qty)
{
    static const char suffix[] = "kmgtpe";
    char tmp[24], out[SKV_QTY_FORMAT_MAX];
    uint64_t v = (uint64_t)qty;
    int s = 0;
    /* The largest binary suffix that keeps the value exact. */
    while (v && s < 6 && (v & 1023u) == 0) {
        v >>= 10;
        s++;
    }
    const char *digits = u64_digits(tmp, v);
    size_t len = strlen(digits);
    memcpy(out, digits, len);
    if (s)
        out[len++] = suffix[s - 1];
    out[len] = '\0';
    return emit(buf, bufsz, out, len);
}

int skv_qty_format(char *buf, size_t bufsz, skv_qty qty, skv_slot_kind kind)
{
    if (!buf || !skv__slot_kind_valid((int)kind) || qty < 0)
        return SKV_EINVAL;
    if (qty == SKV_QTY_UNLIMITED)
        return emit(buf, bufsz, "unlimited", 9);
    if (kind == SKV_SLOT_BYTES)
        return format_bytes(buf, bufsz, qty);
    return format_count(buf, bufsz, qty);
}

int skv__qty_check(skv_qty qty, skv_slot_kind kind, const char *name,
                   int code, skv_error *err)
{
    if (!skv__slot_kind_valid((int)kind))
        return skv__err(err, code, "slot '%s': invalid kind %d", name,
                        (int)kind);
    if (qty < 0)
        return skv__err(err, code, "slot '%s': negative quantity %lld", name,
                        (long long)qty);
    if (kind == SKV_SLOT_UNIQUE && qty != SKV_QTY_UNLIMITED &&
        qty % SKV_QTY_SCALE != 0)
        return skv__err(err, code,
                        "slot '%s': unique quantity %lld milli-units is not a "
                        "whole number", name, (long long)qty);
    return 0;
}
