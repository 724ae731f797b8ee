/* Name syntax, UTF-8 checks and type names.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

const char *skv_metrics_type_name(skv_metric_type type)
{
    switch (type) {
    case SKV_METRIC_COUNTER: return "counter";
    case SKV_METRIC_GAUGE: return "gauge";
    case SKV_METRIC_HISTOGRAM: return "histogram";
    }
    return "?";
}

static bool is_alpha_(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* colon: whether ':' is allowed (metric names yes, label names no). */
static int check_ident(const char *name, bool colon, const char *what,
                       skv_error *err)
{
    if (!name || !name[0])
        return skv__err(err, SKV_EINVAL, "metrics: empty %s", what);
    size_t n = strnlen(name, SKV_METRICS_NAME_MAX + 1);
    if (n > SKV_METRICS_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "metrics: %s '%.40s...' longer than %d",
                        what, name, SKV_METRICS_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = is_alpha_(c) || (colon && c == ':') || (i > 0 && is_digit(c));
        if (!ok)
            return skv__err(err, SKV_EINVAL,
                            "metrics: %s '%.64s': character %zu is not allowed",
                            what, name, i + 1);
    }
    return 0;
}

int skv_metrics_name_check(const char *name, skv_error *err)
{
    return check_ident(name, true, "metric name", err);
}

int skv_metrics_label_name_check(const char *name, skv_error *err)
{
    int rc = check_ident(name, false, "label name", err);
    if (!rc && name[0] == '_' && name[1] == '_')
        return skv__err(err, SKV_EINVAL,
                        "metrics: label name '%.64s' is reserved (starts with __)",
                        name);
    return rc;
}

/* Length of the UTF-8 sequence starting at s (0 if invalid): shortest
 * form only, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
        (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

int skv__metrics_utf8_check(const char *s, size_t max, const char *what,
                            skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "metrics: NULL %s", what);
    size_t n = strnlen(s, max + 1);
    if (n > max)
        return skv__err(err, SKV_EINVAL, "metrics: %s longer than %zu bytes",
                        what, max);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq((const unsigned char *)s + i);
        if (k == 0)
            return skv__err(err, SKV_EINVAL,
                            "metrics: %s is not valid UTF-8 (byte %zu)", what,
                            i + 1);
        i += k;
    }
    return 0;
}
