/* Updates and reads of series values.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>

#include "metrics_internal.h"
#include "skv_internal.h"

static int want_type(const skv_metric *m, const char *op, bool counter,
                     bool gauge, bool histogram, skv_error *err)
{
    if (!m)
        return skv__err(err, SKV_EINVAL, "metrics: %s: NULL metric", op);
    bool ok = (m->type == SKV_METRIC_COUNTER && counter) ||
              (m->type == SKV_METRIC_GAUGE && gauge) ||
              (m->type == SKV_METRIC_HISTOGRAM && histogram);
    if (!ok)
        return skv__err(err, SKV_EINVAL, "metrics: %s is not possible on %s '%s'",
                        op, skv_metrics_type_name(m->type), m->name);
    return 0;
}

int skv_metrics_add(skv_metric *m, const char *const *values, size_t n_values,
                    double delta, skv_error *err)
{
    int rc = want_type(m, "add", true, true, false, err);
    if (rc)
        return rc;
    if (!isfinite(delta) || (m->type == SKV_METRIC_COUNTER && delta < 0))
        return skv__err(err, SKV_EINVAL, "metrics: '%s': cannot add %g to a %s",
                        m->name, delta, skv_metrics_type_name(m->type));
    skv__series *s;
    if ((rc = skv__metrics_series(&s, m, values, n_values, true, err)))
        return rc;
    s->value += delta;
    return 0;
}

int skv_metrics_set(skv_metric *m, const char *const *values, size_t n_values,
                    double value, skv_error *err)
{
    int rc = want_type(m, "set", true, true, false, err);
    if (rc)
        return rc;
    if (m->type == SKV_METRIC_COUNTER && !(isfinite(value) && value >= 0))
        return skv__err(err, SKV_EINVAL, "metrics: counter '%s' cannot be set "
                        "to %g", m->name, value);
    skv__series *s;
    if ((rc = skv__metrics_series(&s, m, values, n_values, true, err)))
        return rc;
    s->value = value;
    return 0;
}

int skv_metrics_observe(skv_metric *m, const char *const *values,
                        size_t n_values, double value, skv_error *err)
{
    int rc = want_type(m, "observe", false, false, true, err);
    if (rc)
        return rc;
    if (isnan(value))
        return skv__err(err, SKV_EINVAL, "metrics: '%s': cannot observe NaN",
                        m->name);
    skv__series *s;
    if ((rc = skv__metrics_series(&s, m, values, n_values, true, err)))
        return rc;
    /* Stored per bound; the renderer accumulates. Values above the last
     * finite bound only count in +Inf, i.e. in count. */
    for (size_t i = 0; i < m->n_bounds; i++) {
        if (value <= m->bounds[i]) {
            s->buckets[i]++;
            break;
        }
    }
    s->count++;
    s->value += value;
    return 0;
}

int skv_metrics_get(double *out, const skv_metric *m, const char *const *values,
                    size_t n_values, skv_error *err)
{
    int rc = want_type(m, "get", true, true, false, err);
    if (rc)
        return rc;
    if (!out)
        return skv__err(err, SKV_EINVAL, "metrics: get: NULL out pointer");
    skv__series *s;
    /* Lookup without create does not modify the family. */
    if ((rc = skv__metrics_series(&s, (skv_metric *)m, values, n_values, false, err)))
        return rc;
    *out = s->value;
    return 0;
}

int skv_metrics_get_histogram(uint64_t *count, double *sum, const skv_metric *m,
                              const char *const *values, size_t n_values,
                              skv_error *err)
{
    int rc = want_type(m, "get_histogram", false, false, true, err);
    if (rc)
        return rc;
    if (!count || !sum)
        return skv__err(err, SKV_EINVAL, "metrics: get_histogram: NULL out pointer");
    skv__series *s;
    if ((rc = skv__metrics_series(&s, (skv_metric *)m, values, n_values, false, err)))
        return rc;
    *count = s->count;
    *sum = s->value;
    return 0;
}

int skv_metrics_remove(skv_metric *m, const char *const *values, size_t n_values,
                       skv_error *err)
{
    int rc = want_type(m, "remove", true, true, true, err);
    skv__series *s;
    if (rc || (rc = skv__metrics_series(&s, m, values, n_values, false, err)))
        return rc;
    if (m->n_labels == 0) {
        skv__metrics_series_zero(m, s);
        return 0;
    }
    bool found;
    skv__metrics_series_drop(m, skv__metrics_series_index(m, values, &found));
    return 0;
}

void skv_metrics_reset(skv_metric *m)
{
    if (!m)
        return;
    if (m->n_labels == 0) {
        if (m->n_series)
            skv__metrics_series_zero(m, m->series[0]);
        return;
    }
    while (m->n_series)
        skv__metrics_series_drop(m, m->n_series - 1);
}
