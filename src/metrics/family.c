/* Families: option validation, construction, comparison, destruction.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

static const double default_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                        0.5,   1,    2.5,   5,    10};

/* The finite bounds a histogram will use (a trailing +Inf is implied). */
static void effective_bounds(const skv_metric_options *o, const double **b,
                             size_t *n)
{
    if (o->type != SKV_METRIC_HISTOGRAM) {
        *b = NULL;
        *n = 0;
    } else if (!o->buckets || o->n_buckets == 0) {
        *b = default_bounds;
        *n = SKV__ARRAY_LEN(default_bounds);
    } else {
        *b = o->buckets;
        *n = o->n_buckets;
        if (isinf(o->buckets[*n - 1]) && o->buckets[*n - 1] > 0)
            (*n)--;
    }
}

static int check_buckets(const skv_metric_options *o, skv_error *err)
{
    if (o->type != SKV_METRIC_HISTOGRAM) {
        if (o->buckets || o->n_buckets)
            return skv__err(err, SKV_EINVAL, "metrics: '%s': buckets given for a %s",
                            o->name, skv_metrics_type_name(o->type));
        return 0;
    }
    if (!o->buckets != !o->n_buckets)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': buckets and n_buckets "
                        "disagree", o->name);
    const double *b;
    size_t n;
    effective_bounds(o, &b, &n);
    if (n > SKV_METRICS_BUCKETS_MAX)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': more than %d buckets",
                        o->name, SKV_METRICS_BUCKETS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(b[i]))
            return skv__err(err, SKV_EINVAL, "metrics: '%s': bucket %zu is not "
                            "finite (only the last may be +Inf)", o->name, i + 1);
        if (i > 0 && !(b[i] > b[i - 1]))
            return skv__err(err, SKV_EINVAL, "metrics: '%s': bucket bounds must "
                            "increase strictly (bucket %zu)", o->name, i + 1);
    }
    return 0;
}

static int check_labels(const skv_metric_options *o, skv_error *err)
{
    if (o->n_labels > SKV_METRICS_LABELS_MAX)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': more than %d labels",
                        o->name, SKV_METRICS_LABELS_MAX);
    if (o->n_labels && !o->labels)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': NULL label names", o->name);
    for (size_t i = 0; i < o->n_labels; i++) {
        int rc = skv_metrics_label_name_check(o->labels[i], err);
        if (rc) {
            skv__err_prefix(err, "metric '%s'", o->name);
            return rc;
        }
        if (o->type == SKV_METRIC_HISTOGRAM && strcmp(o->labels[i], "le") == 0)
            return skv__err(err, SKV_EINVAL, "metrics: '%s': label 'le' is "
                            "reserved for histogram buckets", o->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(o->labels[i], o->labels[j]) == 0)
                return skv__err(err, SKV_EINVAL, "metrics: '%s': label '%s' "
                                "given twice", o->name, o->labels[i]);
    }
    return 0;
}

static int check_options(const skv_metric_options *o, skv_error *err)
{
    if (!o)
        return skv__err(err, SKV_EINVAL, "metrics: NULL options");
    if (o->version != SKV_METRIC_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "metrics: options version %u, "
                        "expected %u", o->version, SKV_METRIC_OPTIONS_VERSION);
    int rc = skv_metrics_name_check(o->name, err);
    if (rc)
        return rc;
    if (strcmp(skv_metrics_type_name(o->type), "?") == 0)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': unknown type %d",
                        o->name, (int)o->type);
    if (o->help && (rc = skv__metrics_utf8_check(o->help, SKV_METRICS_HELP_MAX,
                                                 "HELP text", err)))
        return rc;
    rc = check_labels(o, err);
    return rc ? rc : check_buckets(o, err);
}

void skv__metrics_family_free(skv_metric *m)
{
    if (!m)
        return;
    while (m->n_series)
        skv__metrics_series_drop(m, m->n_series - 1);
    skv__free(m->series);
    for (size_t i = 0; i < m->n_labels; i++)
        skv__free(m->labels[i]);
    skv__free(m->labels);
    skv__free(m->bounds);
    skv__free(m->help);
    skv__free(m->name);
    skv__free(m);
}

static int copy_strings(skv_metric *m, const skv_metric_options *o)
{
    m->name = skv__strdup(o->name);
    m->help = skv__strdup(o->help ? o->help : "");
    m->labels = o->n_labels ? skv__calloc(o->n_labels, sizeof *m->labels) : NULL;
    if (!m->name || !m->help || (o->n_labels && !m->labels))
        return -1;
    for (; m->n_labels < o->n_labels; m->n_labels++)
        if (!(m->labels[m->n_labels] = skv__strdup(o->labels[m->n_labels])))
            return -1;
    return 0;
}

int skv__metrics_family_new(skv_metric **out, const skv_metric_options *o,
                            skv_error *err)
{
    int rc = check_options(o, err);
    if (rc)
        return rc;
    skv_metric *m = skv__calloc(1, sizeof *m);
    if (!m)
        return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
    m->type = o->type;
    const double *b;
    effective_bounds(o, &b, &m->n_bounds);
    if (copy_strings(m, o) != 0 ||
        (m->n_bounds && !(m->bounds = skv__calloc(m->n_bounds, sizeof *b)))) {
        skv__metrics_family_free(m);
        return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
    }
    if (m->n_bounds)
        memcpy(m->bounds, b, m->n_bounds * sizeof *b);
    *out = m;
    return 0;
}

bool skv__metrics_family_same(const skv_metric *m, const skv_metric_options *o,
                              const char **why)
{
    const double *b;
    size_t nb;
    effective_bounds(o, &b, &nb);
    *why = NULL;
    if (m->type != o->type)
        *why = "type";
    else if (m->n_labels != o->n_labels)
        *why = "label names";
    for (size_t i = 0; !*why && i < m->n_labels; i++)
        if (strcmp(m->labels[i], o->labels[i]) != 0)
            *why = "label names";
    if (!*why && (m->n_bounds != nb ||
                  (nb && memcmp(m->bounds, b, nb * sizeof *b) != 0)))
        *why = "buckets";
    if (!*why && strcmp(m->help, o->help ? o->help : "") != 0)
        *why = "HELP text";
    return *why == NULL;
}
