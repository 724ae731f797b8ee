/* Once a second: pending sessions past their resource group's
 * pending_timeout_ms are cancelled (looked up once per group per sweep);
 * running sessions past a lifetime or idle limit are terminated
 * (mgr_reclaim.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_idle.h"

typedef struct limit_cache {
    char **names;
    uint64_t *limits;
    size_t n;
} limit_cache;

static uint64_t group_timeout(skv_manager *m, const char *group)
{
    skv__mgr_group_info gi;
    return skv__mgr_admin_group(&m->admin, &gi, group, NULL)
               ? 0 : gi.pending_timeout_ms;
}

static uint64_t cached(skv_manager *m, limit_cache *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name))
            return c->limits[i];
    uint64_t v = group_timeout(m, name);
    char **n = skv__reallocarray(c->names, c->n + 1, sizeof *n);
    if (n)
        c->names = n;
    uint64_t *l = n ? skv__reallocarray(c->limits, c->n + 1, sizeof *l) : NULL;
    if (l)
        c->limits = l;
    if (l && (n[c->n] = skv__strdup(name)))
        l[c->n++] = v;
    return v;
}

static void cache_free(limit_cache *c)
{
    skv__mgr_ids_free(c->names, c->n);
    skv__free(c->limits);
}

/* Pending sessions waiting longer than their group allows. */
static void expired(skv_manager *m, int64_t now, char ***ids, size_t *n_ids)
{
    skv__mgr_store_aging *rows = NULL;
    size_t n_rows = 0;
    limit_cache c = {0};
    *ids = NULL;
    *n_ids = 0;
    if (skv__mgr_store_sessions_aging(m->store, false, &rows, &n_rows,
                                      NULL))
        return;
    for (size_t i = 0; i < n_rows; i++) {
        uint64_t lim = rows[i].key[0] ? cached(m, &c, rows[i].key) : 0;
        if (!lim || now - rows[i].since_ms < (int64_t)lim)
            continue;
        char **v = skv__reallocarray(*ids, *n_ids + 1, sizeof *v);
        if (v)
            *ids = v;
        if (v && (v[*n_ids] = skv__strdup(rows[i].sid)))
            (*n_ids)++;
    }
    skv__free(rows);
    cache_free(&c);
}

int skv__mgr_sweep(skv_manager *m, int64_t now_ms)
{
    char **ids;
    size_t n;
    expired(m, now_ms, &ids, &n);
    for (size_t i = 0; i < n; i++)
        skv__mgr_session_stop(m, ids[i], SKV_SESSION_CANCELLED,
                              "pending timeout of its resource group", NULL,
                              now_ms, NULL);
    skv__mgr_ids_free(ids, n);
    skv__mgr_reclaim(m, now_ms);
    return 0;
}
