/* Text exposition format 0.0.4: HELP and TYPE per family, one line per
 * sample, histograms as cumulative _bucket{le=...}, _sum and _count.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

/* {a="x",b="y"} plus an optional extra label (histogram "le"); nothing at
 * all when there are no labels. */
static void put_labels(skv__mbuf *b, const skv_metric *m, const skv__series *s,
                       const char *extra_name, const char *extra_value)
{
    if (m->n_labels == 0 && !extra_name)
        return;
    skv__mbuf_put(b, "{", 1);
    for (size_t i = 0; i < m->n_labels; i++) {
        if (i)
            skv__mbuf_put(b, ",", 1);
        skv__mbuf_puts(b, m->labels[i]);
        skv__mbuf_put(b, "=\"", 2);
        skv__mbuf_escaped(b, s->values[i], true);
        skv__mbuf_put(b, "\"", 1);
    }
    if (extra_name) {
        if (m->n_labels)
            skv__mbuf_put(b, ",", 1);
        skv__mbuf_puts(b, extra_name);
        skv__mbuf_put(b, "=\"", 2);
        skv__mbuf_puts(b, extra_value); /* a number: nothing to escape */
        skv__mbuf_put(b, "\"", 1);
    }
    skv__mbuf_put(b, "}", 1);
}

static void put_name(skv__mbuf *b, const skv_metric *m, const char *suffix)
{
    skv__mbuf_puts(b, m->name);
    skv__mbuf_puts(b, suffix);
}

static void put_histogram(skv__mbuf *b, const skv_metric *m, const skv__series *s)
{
    uint64_t cum = 0;
    for (size_t i = 0; i <= m->n_bounds; i++) {
        char le[SKV__METRICS_DOUBLE_MAX] = "+Inf";
        if (i < m->n_bounds) {
            skv__metrics_format_double(le, m->bounds[i]);
            cum += s->buckets[i];
        } else {
            cum = s->count;
        }
        put_name(b, m, "_bucket");
        put_labels(b, m, s, "le", le);
        skv__mbuf_put(b, " ", 1);
        skv__mbuf_u64(b, cum);
        skv__mbuf_put(b, "\n", 1);
    }
    put_name(b, m, "_sum");
    put_labels(b, m, s, NULL, NULL);
    skv__mbuf_put(b, " ", 1);
    skv__mbuf_double(b, s->value);
    skv__mbuf_put(b, "\n", 1);
    put_name(b, m, "_count");
    put_labels(b, m, s, NULL, NULL);
    skv__mbuf_put(b, " ", 1);
    skv__mbuf_u64(b, s->count);
    skv__mbuf_put(b, "\n", 1);
}

static void put_family(skv__mbuf *b, const skv_metric *m)
{
    if (m->help[0]) {
        skv__mbuf_puts(b, "# HELP ");
        skv__mbuf_puts(b, m->name);
        skv__mbuf_put(b, " ", 1);
        skv__mbuf_escaped(b, m->help, false);
        skv__mbuf_put(b, "\n", 1);
    }
    skv__mbuf_puts(b, "# TYPE ");
    skv__mbuf_puts(b, m->name);
    skv__mbuf_put(b, " ", 1);
    skv__mbuf_puts(b, skv_metrics_type_name(m->type));
    skv__mbuf_put(b, "\n", 1);
    for (size_t i = 0; i < m->n_series; i++) {
        const skv__series *s = m->series[i];
        if (m->type == SKV_METRIC_HISTOGRAM) {
            put_histogram(b, m, s);
            continue;
        }
        skv__mbuf_puts(b, m->name);
        put_labels(b, m, s, NULL, NULL);
        skv__mbuf_put(b, " ", 1);
        skv__mbuf_double(b, s->value);
        skv__mbuf_put(b, "\n", 1);
    }
}

int skv_metrics_render(char **out, size_t *len, const skv_metrics *reg,
                       skv_error *err)
{
    if (!out || !reg)
        return skv__err(err, SKV_EINVAL, "metrics: render: NULL registry or out "
                        "pointer");
    skv__mbuf b = {NULL, 0, 0, false};
    skv__mbuf_put(&b, "", 0); /* an empty registry still gives "" */
    for (size_t i = 0; i < reg->n; i++)
        put_family(&b, reg->fams[i]);
    if (b.failed) {
        skv__free(b.p);
        return skv__err(err, SKV_ENOMEM, "metrics: render: out of memory");
    }
    *out = b.p;
    if (len)
        *len = b.len;
    return 0;
}
