/* The registry: families sorted by name, registration rules.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "metrics_internal.h"
#include "skv_internal.h"

static const char *const hist_suffixes[] = {"_bucket", "_sum", "_count"};

int skv_metrics_new(skv_metrics **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "metrics: NULL out pointer");
    skv_metrics *r = skv__calloc(1, sizeof *r);
    if (!r)
        return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
    *out = r;
    return 0;
}

void skv_metrics_free(skv_metrics *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        skv__metrics_family_free(reg->fams[i]);
    skv__free(reg->fams);
    skv__free(reg);
}

/* Binary search by name: the index of name or where it would go. */
static size_t find_index(const skv_metrics *reg, const char *name, bool *found)
{
    size_t lo = 0, hi = reg->n;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(reg->fams[mid]->name, name);
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

skv_metric *skv_metrics_find(const skv_metrics *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    bool found;
    size_t i = find_index(reg, name, &found);
    return found ? reg->fams[i] : NULL;
}

size_t skv_metrics_family_count(const skv_metrics *reg)
{
    return reg ? reg->n : 0;
}

/* A histogram "h" exposes h_bucket, h_sum and h_count: no other family may
 * use those names, and a histogram may not be registered over them. */
static int check_clash(const skv_metrics *reg, const skv_metric_options *o,
                       skv_error *err)
{
    char buf[SKV_METRICS_NAME_MAX + 16];
    size_t n = strlen(o->name);
    for (size_t i = 0; i < SKV__ARRAY_LEN(hist_suffixes); i++) {
        size_t sl = strlen(hist_suffixes[i]);
        if (o->type == SKV_METRIC_HISTOGRAM) {
            snprintf(buf, sizeof buf, "%s%s", o->name, hist_suffixes[i]);
            if (skv_metrics_find(reg, buf))
                return skv__err(err, SKV_EEXIST, "metrics: histogram '%s' "
                                "would expose '%s', already registered",
                                o->name, buf);
        }
        if (n > sl && strcmp(o->name + n - sl, hist_suffixes[i]) == 0) {
            snprintf(buf, sizeof buf, "%.*s", (int)(n - sl), o->name);
            const skv_metric *h = skv_metrics_find(reg, buf);
            if (h && h->type == SKV_METRIC_HISTOGRAM)
                return skv__err(err, SKV_EEXIST, "metrics: '%s' is a series "
                                "of histogram '%s'", o->name, buf);
        }
    }
    return 0;
}

static int insert(skv_metrics *reg, size_t at, skv_metric *m, skv_error *err)
{
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 8;
        skv_metric **f = skv__reallocarray(reg->fams, cap, sizeof *f);
        if (!f)
            return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
        reg->fams = f;
        reg->cap = cap;
    }
    memmove(reg->fams + at + 1, reg->fams + at, (reg->n - at) * sizeof *reg->fams);
    reg->fams[at] = m;
    reg->n++;
    return 0;
}

int skv_metrics_register(skv_metric **out, skv_metrics *reg,
                         const skv_metric_options *opts, skv_error *err)
{
    if (!out || !reg)
        return skv__err(err, SKV_EINVAL, "metrics: NULL registry or out pointer");
    skv_metric *m = NULL;
    int rc = skv__metrics_family_new(&m, opts, err); /* validates opts */
    if (rc)
        return rc;
    bool found;
    size_t at = find_index(reg, opts->name, &found);
    const char *why;
    if (found) {
        skv__metrics_family_free(m);
        if (!skv__metrics_family_same(reg->fams[at], opts, &why))
            return skv__err(err, SKV_EEXIST, "metrics: '%s' already registered "
                            "with a different %s", opts->name, why);
        *out = reg->fams[at];
        return 0;
    }
    skv__series *s;
    if ((rc = check_clash(reg, opts, err)) ||
        (m->n_labels == 0 && (rc = skv__metrics_series(&s, m, NULL, 0, true, err))) ||
        (rc = insert(reg, at, m, err))) {
        skv__metrics_family_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
