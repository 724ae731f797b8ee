/* Plugin statistics: a flat list of (device, metric, value).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

struct skv_stats {
    skv_stat *items;            /* strings owned */
    size_t n, cap;
};

int skv_stats_new(skv_stats **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "stats_new: out is NULL");
    *out = skv__calloc(1, sizeof(**out));
    return *out ? 0 : skv__err(err, SKV_ENOMEM, "stats: out of memory");
}

void skv_stats_free(skv_stats *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++) {
        skv__free((void *)st->items[i].device_id);
        skv__free((void *)st->items[i].metric);
    }
    skv__free(st->items);
    skv__free(st);
}

int skv_stats_add(skv_stats *st, const char *device_id, const char *metric,
                  int64_t value, skv_error *err)
{
    if (!st || !metric || !*metric)
        return skv__err(err, SKV_EINVAL, "stats_add: NULL stats or empty "
                        "metric");
    if (st->n == st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 16;
        skv_stat *ni = skv__reallocarray(st->items, nc, sizeof(*ni));
        if (!ni)
            return skv__err(err, SKV_ENOMEM, "stats: out of memory");
        st->items = ni;
        st->cap = nc;
    }
    char *d = skv__strdup(device_id ? device_id : "");
    char *m = skv__strdup(metric);
    if (!d || !m) {
        skv__free(d);
        skv__free(m);
        return skv__err(err, SKV_ENOMEM, "stats: out of memory");
    }
    st->items[st->n].device_id = d;
    st->items[st->n].metric = m;
    st->items[st->n].value = value;
    st->n++;
    return 0;
}

size_t skv_stats_count(const skv_stats *st) { return st ? st->n : 0; }

const skv_stat *skv_stats_at(const skv_stats *st, size_t i)
{
    return st && i < st->n ? &st->items[i] : NULL;
}

int skv_stats_get(const skv_stats *st, const char *device_id,
                  const char *metric, int64_t *value)
{
    for (size_t i = 0; st && metric && i < st->n; i++)
        if (strcmp(st->items[i].device_id, device_id ? device_id : "") == 0 &&
            strcmp(st->items[i].metric, metric) == 0) {
            if (value)
                *value = st->items[i].value;
            return 0;
        }
    return SKV_ENOENT;
}

void skv__stats_truncate(skv_stats *st, size_t n)
{
    while (st && st->n > n) {
        st->n--;
        skv__free((void *)st->items[st->n].device_id);
        skv__free((void *)st->items[st->n].metric);
    }
}
