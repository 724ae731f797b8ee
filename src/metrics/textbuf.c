/* A growing string for the renderer, with the number and escaping rules of
 * the text exposition format.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

static bool reserve(skv__mbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n + 1 <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = skv__realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void skv__mbuf_put(skv__mbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void skv__mbuf_puts(skv__mbuf *b, const char *s)
{
    skv__mbuf_put(b, s, strlen(s));
}

void skv__mbuf_u64(skv__mbuf *b, uint64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    skv__mbuf_put(b, tmp, (size_t)n);
}

/* Prometheus parses values with Go's ParseFloat: %g output is fine. The
 * shortest of 15..17 significant digits that reads back exactly keeps
 * "0.1" as "0.1" and still round-trips every double. */
size_t skv__metrics_format_double(char buf[SKV__METRICS_DOUBLE_MAX], double v)
{
    if (isnan(v))
        return (size_t)snprintf(buf, SKV__METRICS_DOUBLE_MAX, "NaN");
    if (isinf(v))
        return (size_t)snprintf(buf, SKV__METRICS_DOUBLE_MAX, v > 0 ? "+Inf" : "-Inf");
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, SKV__METRICS_DOUBLE_MAX, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return (size_t)n;
}

void skv__mbuf_double(skv__mbuf *b, double v)
{
    char tmp[SKV__METRICS_DOUBLE_MAX];
    size_t n = skv__metrics_format_double(tmp, v);
    skv__mbuf_put(b, tmp, n);
}

/* Label values escape backslash, double quote and newline; HELP text only
 * backslash and newline (quote=false). Runs without escapes are copied in
 * one piece. */
void skv__mbuf_escaped(skv__mbuf *b, const char *s, bool quote)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n"
                        : (quote && *s == '"') ? "\\\"" : NULL;
        if (!esc)
            continue;
        skv__mbuf_put(b, run, (size_t)(s - run));
        skv__mbuf_puts(b, esc);
        run = s + 1;
    }
    skv__mbuf_put(b, run, (size_t)(s - run));
}
