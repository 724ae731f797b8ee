/* Series of a family: sorted by label values for lookups by binary search
 * and a deterministic rendering order.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

static int compare(const skv__series *s, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(s->values[i], values[i]);
        if (c)
            return c;
    }
    return 0;
}

size_t skv__metrics_series_index(const skv_metric *m, const char *const *values,
                                 bool *found)
{
    size_t lo = 0, hi = m->n_series;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare(m->series[mid], values, m->n_labels);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int check_values(const skv_metric *m, const char *const *values,
                        size_t n_values, skv_error *err)
{
    if (n_values != m->n_labels)
        return skv__err(err, SKV_EINVAL, "metrics: '%s' has %zu labels, %zu "
                        "values given", m->name, m->n_labels, n_values);
    if (n_values && !values)
        return skv__err(err, SKV_EINVAL, "metrics: '%s': NULL label values",
                        m->name);
    for (size_t i = 0; i < n_values; i++) {
        int rc = skv__metrics_utf8_check(values[i], SKV_METRICS_VALUE_MAX,
                                         "label value", err);
        if (rc) {
            skv__err_prefix(err, "metric '%s', label '%s'", m->name, m->labels[i]);
            return rc;
        }
    }
    return 0;
}

static void series_free(const skv_metric *m, skv__series *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->values && i < m->n_labels; i++)
        skv__free(s->values[i]);
    skv__free(s->values);
    skv__free(s->buckets);
    skv__free(s);
}

static skv__series *series_new(const skv_metric *m, const char *const *values)
{
    skv__series *s = skv__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    bool ok = true;
    if (m->n_labels) {
        s->values = skv__calloc(m->n_labels, sizeof *s->values);
        ok = s->values != NULL;
        for (size_t i = 0; ok && i < m->n_labels; i++)
            ok = (s->values[i] = skv__strdup(values[i])) != NULL;
    }
    if (ok && m->n_bounds)
        ok = (s->buckets = skv__calloc(m->n_bounds, sizeof *s->buckets)) != NULL;
    if (!ok) {
        series_free(m, s);
        return NULL;
    }
    return s;
}

static int insert(skv_metric *m, size_t at, skv__series *s, skv_error *err)
{
    if (m->n_series >= SKV_METRICS_SERIES_MAX)
        return skv__err(err, SKV_ENOSPC, "metrics: '%s' already has %d series",
                        m->name, SKV_METRICS_SERIES_MAX);
    if (m->n_series == m->cap_series) {
        size_t cap = m->cap_series ? m->cap_series * 2 : 4;
        skv__series **a = skv__reallocarray(m->series, cap, sizeof *a);
        if (!a)
            return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
        m->series = a;
        m->cap_series = cap;
    }
    memmove(m->series + at + 1, m->series + at,
            (m->n_series - at) * sizeof *m->series);
    m->series[at] = s;
    m->n_series++;
    return 0;
}

int skv__metrics_series(skv__series **out, skv_metric *m,
                        const char *const *values, size_t n_values,
                        bool create, skv_error *err)
{
    int rc = check_values(m, values, n_values, err);
    if (rc)
        return rc;
    bool found;
    size_t at = skv__metrics_series_index(m, values, &found);
    if (found) {
        *out = m->series[at];
        return 0;
    }
    if (!create)
        return skv__err(err, SKV_ENOENT, "metrics: '%s': no such series", m->name);
    skv__series *s = series_new(m, values);
    if (!s)
        return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
    if ((rc = insert(m, at, s, err))) {
        series_free(m, s);
        return rc;
    }
    *out = s;
    return 0;
}

void skv__metrics_series_drop(skv_metric *m, size_t i)
{
    series_free(m, m->series[i]);
    memmove(m->series + i, m->series + i + 1,
            (m->n_series - i - 1) * sizeof *m->series);
    m->n_series--;
}

void skv__metrics_series_zero(skv_metric *m, skv__series *s)
{
    s->value = 0;
    s->count = 0;
    if (m->n_bounds)
        memset(s->buckets, 0, m->n_bounds * sizeof *s->buckets);
}

size_t skv_metrics_series_count(const skv_metric *m)
{
    return m ? m->n_series : 0;
}
