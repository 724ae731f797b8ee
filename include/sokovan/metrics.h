/*
 * sokovan/metrics.h - a registry of Prometheus metrics and its text
 * exposition (format 0.0.4).
 *
 * A registry holds metric families: counters, gauges and histograms, each
 * with a name, a HELP text and a fixed list of label names. A family holds
 * one series per distinct tuple of label values; series are created on
 * first use. skv_metrics_render() writes the whole registry in the
 * Prometheus text format: "# HELP" and "# TYPE" lines per family, then one
 * "name{label="value",...} value" line per sample; histograms expose
 * cumulative "_bucket" samples (with an "le" label, the last one "+Inf"),
 * "_sum" and "_count". The output is deterministic: families sorted by
 * name, series by their label values (byte order).
 *
 * Validation (SKV_EINVAL, naming the culprit):
 *   metric names   [a-zA-Z_:][a-zA-Z0-9_:]*, at most SKV_METRICS_NAME_MAX
 *   label names    [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", unique
 *                  within the family, "le" reserved for histograms
 *   label values   any valid UTF-8 up to SKV_METRICS_VALUE_MAX bytes; escaped
 *                  on output (\\, \" and \n)
 *   HELP text      valid UTF-8 up to SKV_METRICS_HELP_MAX bytes; escaped on
 *                  output (\\ and \n)
 *   buckets        finite, strictly increasing upper bounds; a final +Inf
 *                  may be given and is implied otherwise
 * Registering a name again with the same type, labels, buckets and HELP
 * returns the existing family; any difference is SKV_EEXIST. So is a name
 * that collides with a histogram's derived series ("h" and "h_count").
 *
 * Values are IEEE doubles, as in Prometheus. Counters only grow through
 * skv_metrics_add() (delta >= 0); skv_metrics_set() on a counter mirrors a
 * counter kept elsewhere (e.g. a cgroup's CPU time) and takes any finite
 * value >= 0. Gauges take any value, NaN and infinities included.
 *
 * Ownership: the registry owns its families; skv_metric handles stay valid
 * until skv_metrics_free(). Rendered text is freed with skv_free().
 *
 * Thread-safety: a registry (with its families) is one object under the
 * default rule: updates need exclusive access, rendering and getters may
 * run concurrently with each other but not with updates. The intended use
 * is one thread (a daemon's event loop) that updates and renders; to serve
 * the text from another thread (an HTTP server), render on the owning
 * thread and hand over the finished buffer (see daemons/common/metrics_http.h)
 * or guard the registry with a lock.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_METRICS_H
#define SOKOVAN_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SKV_METRICS_NAME_MAX 200      /* metric and label names, bytes */
#define SKV_METRICS_LABELS_MAX 16     /* label names per family */
#define SKV_METRICS_VALUE_MAX 1024    /* bytes per label value */
#define SKV_METRICS_HELP_MAX 1024     /* bytes of HELP text */
#define SKV_METRICS_BUCKETS_MAX 64    /* finite histogram bounds */
#define SKV_METRICS_SERIES_MAX 100000 /* series per family (SKV_ENOSPC) */

/* The content type of skv_metrics_render()'s output, for HTTP servers. */
#define SKV_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef enum skv_metric_type {
    SKV_METRIC_COUNTER = 1,
    SKV_METRIC_GAUGE = 2,
    SKV_METRIC_HISTOGRAM = 3
} skv_metric_type;

typedef struct skv_metrics skv_metrics; /* a registry */
typedef struct skv_metric skv_metric;   /* one family, owned by a registry */

#define SKV_METRIC_OPTIONS_VERSION 1

/* Describes a family to register. Everything is copied. */
typedef struct skv_metric_options {
    unsigned version;            /* SKV_METRIC_OPTIONS_VERSION */
    skv_metric_type type;
    const char *name;
    const char *help;            /* NULL or "": no HELP line */
    const char *const *labels;   /* label names; NULL when n_labels is 0 */
    size_t n_labels;
    /* Histograms only (must be NULL/0 otherwise): upper bounds; NULL and 0
     * mean the Prometheus defaults .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10. */
    const double *buckets;
    size_t n_buckets;
} skv_metric_options;

#define SKV_METRIC_OPTIONS_INIT \
    {SKV_METRIC_OPTIONS_VERSION, SKV_METRIC_GAUGE, NULL, NULL, NULL, 0, NULL, 0}

/* "counter", "gauge", "histogram"; "?" for others. */
SKV_EXTERN const char *skv_metrics_type_name(skv_metric_type type);
/* Syntax checks of names (see above); 0 or SKV_EINVAL. */
SKV_EXTERN int skv_metrics_name_check(const char *name, skv_error *err);
SKV_EXTERN int skv_metrics_label_name_check(const char *name, skv_error *err);

/* An empty registry. */
SKV_EXTERN int skv_metrics_new(skv_metrics **out, skv_error *err);
/* Frees the registry and all its families. Accepts NULL. */
SKV_EXTERN void skv_metrics_free(skv_metrics *reg);

/* Register a family (or get the identical one registered before). A family
 * without labels has its one series from the start (value 0), so it is
 * exposed before the first update. */
SKV_EXTERN int skv_metrics_register(skv_metric **out, skv_metrics *reg,
                                    const skv_metric_options *opts,
                                    skv_error *err);
/* The family of that name, or NULL. */
SKV_EXTERN skv_metric *skv_metrics_find(const skv_metrics *reg,
                                        const char *name);
SKV_EXTERN size_t skv_metrics_family_count(const skv_metrics *reg);
/* Series currently held by a family. */
SKV_EXTERN size_t skv_metrics_series_count(const skv_metric *m);

/* ---- updates: values has n_values entries, one per label name, in the
 * family's label order (NULL and 0 for a family without labels). The
 * series is created on first use. SKV_EINVAL for a wrong count, a bad value
 * or an operation the type does not have; SKV_ENOSPC past
 * SKV_METRICS_SERIES_MAX series. ----------------------------------------- */

/* Counter: delta finite and >= 0. Gauge: any finite delta. */
SKV_EXTERN int skv_metrics_add(skv_metric *m, const char *const *values,
                               size_t n_values, double delta, skv_error *err);
/* Gauge: any value. Counter: finite, >= 0 (mirrors an external counter). */
SKV_EXTERN int skv_metrics_set(skv_metric *m, const char *const *values,
                               size_t n_values, double value, skv_error *err);
/* Histogram: one observation (not NaN). */
SKV_EXTERN int skv_metrics_observe(skv_metric *m, const char *const *values,
                                   size_t n_values, double value,
                                   skv_error *err);

/* Counter or gauge value of an existing series; SKV_ENOENT when the series
 * does not exist, SKV_EINVAL for histograms. */
SKV_EXTERN int skv_metrics_get(double *out, const skv_metric *m,
                               const char *const *values, size_t n_values,
                               skv_error *err);
/* Histogram observation count and sum of an existing series. */
SKV_EXTERN int skv_metrics_get_histogram(uint64_t *count, double *sum,
                                         const skv_metric *m,
                                         const char *const *values,
                                         size_t n_values, skv_error *err);
/* Drop one series (e.g. a kernel that ended). SKV_ENOENT when absent; for a
 * family without labels the series is reset to zero instead. */
SKV_EXTERN int skv_metrics_remove(skv_metric *m, const char *const *values,
                                  size_t n_values, skv_error *err);
/* Drop every series of a family (a family without labels goes back to 0),
 * e.g. before re-publishing "sessions by state". Accepts NULL. */
SKV_EXTERN void skv_metrics_reset(skv_metric *m);

/* The registry in the text exposition format 0.0.4: a NUL-terminated
 * buffer (free with skv_free) of *len bytes (NUL not counted; len may be
 * NULL). An empty registry gives "". */
SKV_EXTERN int skv_metrics_render(char **out, size_t *len,
                                  const skv_metrics *reg, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_METRICS_H */
