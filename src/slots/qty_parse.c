/* Text -> fixed-point quantity. Integer arithmetic only: a value such as
 * "0.1" must become exactly 100 milli-units, which binary floating point
 * cannot promise.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>

#include "slots_internal.h"

__extension__ typedef unsigned __int128 u128;

/* A number split into its parts: int_part digits, optional fraction (with
 * trailing zeros dropped, since they add no precision) and the unit text. */
struct number {
    uint64_t int_part;
    bool int_overflow;
    uint64_t frac;        /* fraction digits as an integer */
    unsigned frac_digits; /* significant fraction digits (<= 19 kept) */
    bool frac_too_long;
    const char *unit;
    size_t unit_len;
};

static bool lit_ieq(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return false;
    }
    return true;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Returns false on a syntax error (no digits, lone '.'). */
static bool split_number(struct number *n, const char *s, size_t len)
{
    size_t i = 0;
    memset(n, 0, sizeof(*n));
    if (i == len || !is_digit(s[i]))
        return false;
    for (; i < len && is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (n->int_part > (UINT64_MAX - d) / 10)
            n->int_overflow = true;
        else
            n->int_part = n->int_part * 10 + d;
    }
    if (i < len && s[i] == '.') {
        size_t start = ++i, last_nonzero = start;
        for (; i < len && is_digit(s[i]); i++)
            if (s[i] != '0')
                last_nonzero = i + 1;
        if (i == start)
            return false;
        if (last_nonzero - start > 19)
            n->frac_too_long = true;
        else
            for (size_t k = start; k < last_nonzero; k++)
                n->frac = n->frac * 10 + (uint64_t)(s[k] - '0');
        n->frac_digits = (unsigned)(last_nonzero - start);
    }
    n->unit = s + i;
    n->unit_len = len - i;
    return true;
}

static uint64_t pow10_u64(unsigned e)
{
    uint64_t p = 1;
    while (e--)
        p *= 10;
    return p;
}

static int parse_count(skv_qty *out, const struct number *n, const char *shown,
                       skv_slot_kind kind, skv_error *err)
{
    if (n->unit_len)
        return skv__err(err, SKV_EINVAL,
                        "'%s' has a unit, but %s quantities are plain numbers",
                        shown, skv_slot_kind_name(kind));
    if (n->frac_too_long || n->frac_digits > 3)
        return skv__err(err, SKV_EINVAL,
                        "'%s' has more decimals than the 0.001 quantum", shown);
    uint64_t milli = n->frac * pow10_u64(3 - n->frac_digits);
    if (n->int_overflow ||
        n->int_part > ((uint64_t)SKV_QTY_MAX - milli) / SKV_QTY_SCALE)
        return skv__err(err, SKV_ERANGE, "'%s' is too large", shown);
    skv_qty q = (skv_qty)(n->int_part * SKV_QTY_SCALE + milli);
    if (kind == SKV_SLOT_UNIQUE && q % SKV_QTY_SCALE != 0)
        return skv__err(err, SKV_EINVAL,
                        "'%s' is not a whole number (unique slots are "
                        "indivisible)", shown);
    *out = q;
    return 0;
}

/* k/m/g/t/p/e, each optionally followed by 'i' and/or 'b'; or a lone 'b'.
 * Returns the power-of-two shift, or -1 for an unknown unit. */
static int unit_shift(const char *u, size_t len)
{
    static const char letters[] = "kmgtpe";
    size_t i = 0;
    int shift = 0;
    if (len == 0)
        return 0;
    char c = (char)(u[0] | 0x20); /* ASCII lower case */
    const char *p = strchr(letters, c);
    if (p && c != '\0') {
        shift = 10 * (int)(p - letters + 1);
        i++;
        if (i < len && (u[i] | 0x20) == 'i')
            i++;
    }
    if (i < len && (u[i] | 0x20) == 'b')
        i++;
    return i == len ? shift : -1;
}

static int parse_bytes(skv_qty *out, const struct number *n, const char *shown,
                       skv_error *err)
{
    int shift = unit_shift(n->unit, n->unit_len);
    if (shift < 0)
        return skv__err(err, SKV_EINVAL,
                        "'%s' has an unknown unit (use k, m, g, t, p, e with "
                        "optional i/b, e.g. 512MiB)", shown);
    if (n->int_overflow || n->int_part > ((uint64_t)SKV_QTY_MAX >> shift))
        return skv__err(err, SKV_ERANGE, "'%s' is too large", shown);
    u128 total = (u128)n->int_part << shift;
    if (n->frac_digits) {
        /* At most 19 significant decimals and 60 bits of shift: fits. */
        u128 scaled = (u128)n->frac << shift, div = pow10_u64(n->frac_digits);
        if (n->frac_too_long || scaled % div != 0)
            return skv__err(err, SKV_EINVAL,
                            "'%s' is not a whole number of bytes", shown);
        total += scaled / div;
    }
    if (total > (u128)SKV_QTY_MAX)
        return skv__err(err, SKV_ERANGE, "'%s' is too large", shown);
    *out = (skv_qty)total;
    return 0;
}

int skv__qty_parse_n(skv_qty *out, const char *text, size_t len,
                     skv_slot_kind kind, skv_error *err)
{
    char shown[SKV__SLOT_DISPLAY_MAX];
    struct number n;
    if (!skv__slot_kind_valid((int)kind))
        return skv__err(err, SKV_EINVAL, "invalid slot kind %d", (int)kind);
    if (len == 0)
        return skv__err(err, SKV_EINVAL, "empty quantity");
    skv__slots_name_display(shown, text, len);
    if (lit_ieq(text, len, "unlimited") || lit_ieq(text, len, "inf")) {
        *out = SKV_QTY_UNLIMITED;
        return 0;
    }
    if (text[0] == '-')
        return skv__err(err, SKV_EINVAL, "'%s' is negative", shown);
    if (!split_number(&n, text, len))
        return skv__err(err, SKV_EINVAL, "'%s' is not a number", shown);
    if (kind == SKV_SLOT_BYTES)
        return parse_bytes(out, &n, shown, err);
    return parse_count(out, &n, shown, kind, err);
}

int skv_qty_parse(skv_qty *out, const char *text, skv_slot_kind kind,
                  skv_error *err)
{
    if (!out || !text)
        return skv__err(err, SKV_EINVAL, "skv_qty_parse: %s is NULL",
                        out ? "text" : "out");
    skv_qty q = 0;
    int rc = skv__qty_parse_n(&q, text, strlen(text), kind, err);
    if (rc == 0)
        *out = q;
    return rc;
}
