/* Internal to src/metrics: registry, family and series layout, and the
 * text buffer used by the renderer.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_METRICS_INTERNAL_H
#define SKV_METRICS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/metrics.h"

/* One series: a tuple of label values and its numbers. */
typedef struct skv__series {
    char **values;     /* n_labels strings, owned */
    double value;      /* counter/gauge value; histogram: sum */
    uint64_t count;    /* histogram: observations */
    uint64_t *buckets; /* histogram: per-bound counts (not cumulative) */
} skv__series;

struct skv_metric {
    skv_metric_type type;
    char *name;
    char *help;          /* "" when none */
    char **labels;
    size_t n_labels;
    double *bounds;      /* histogram finite upper bounds, increasing */
    size_t n_bounds;
    skv__series **series; /* sorted by values (byte order, label by label) */
    size_t n_series, cap_series;
};

struct skv_metrics {
    skv_metric **fams;   /* sorted by name */
    size_t n, cap;
};

/* names.c */
int skv__metrics_utf8_check(const char *s, size_t max, const char *what,
                            skv_error *err);

/* family.c: a new family from validated options; free. */
int skv__metrics_family_new(skv_metric **out, const skv_metric_options *o,
                            skv_error *err);
void skv__metrics_family_free(skv_metric *m);
/* Whether a family matches the options exactly (for re-registration);
 * when not, *why names the difference. */
bool skv__metrics_family_same(const skv_metric *m, const skv_metric_options *o,
                              const char **why);

/* series.c: find (create=false) or find-or-create a series. With
 * create=false a missing series is SKV_ENOENT. Values are validated. */
int skv__metrics_series(skv__series **out, skv_metric *m,
                        const char *const *values, size_t n_values,
                        bool create, skv_error *err);
/* Remove the series at index i. */
void skv__metrics_series_drop(skv_metric *m, size_t i);
/* Index of the series with these values or where it would go; *found. */
size_t skv__metrics_series_index(const skv_metric *m, const char *const *values,
                                 bool *found);
void skv__metrics_series_zero(skv_metric *m, skv__series *s);

/* textbuf.c: a growing NUL-terminated string; failures are sticky. */
typedef struct skv__mbuf {
    char *p;
    size_t len, cap;
    bool failed;
} skv__mbuf;

void skv__mbuf_put(skv__mbuf *b, const char *s, size_t n);
void skv__mbuf_puts(skv__mbuf *b, const char *s);
/* Shortest decimal that reads back as the same double; NaN, +Inf, -Inf. */
#define SKV__METRICS_DOUBLE_MAX 40
size_t skv__metrics_format_double(char buf[SKV__METRICS_DOUBLE_MAX], double v);
void skv__mbuf_double(skv__mbuf *b, double v);
void skv__mbuf_u64(skv__mbuf *b, uint64_t v);
/* Label value escaping (\\ \" \n) or HELP escaping (\\ \n). */
void skv__mbuf_escaped(skv__mbuf *b, const char *s, bool quote);

#endif
