/* Once a second: pending sessions past their resource group's
 * pending_timeout_ms are cancelled; running sessions past their owner's
 * max_session_lifetime_ms, or their own max_lifetime_ms (whichever is
 * shorter), are terminated. Limits are looked up once per group / owner
 * per sweep.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

typedef struct limit_cache {
    char **names;
    uint64_t *limits;
    size_t n;
} limit_cache;

typedef uint64_t (*limit_fn)(skv_manager *m, const char *name);

static uint64_t group_timeout(skv_manager *m, const char *group)
{
    skv__mgr_group_info gi;
    return skv__mgr_admin_group(&m->admin, &gi, group, NULL)
               ? 0 : gi.pending_timeout_ms;
}

static uint64_t owner_lifetime(skv_manager *m, const char *owner)
{
    skv__mgr_user_limits l = {0};
    return skv__mgr_admin_user_limits(&m->admin, &l, owner, NULL)
               ? 0 : l.max_session_lifetime_ms;
}

static uint64_t cached(skv_manager *m, limit_cache *c, const char *name,
                       limit_fn fn)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name))
            return c->limits[i];
    uint64_t v = fn(m, name);
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

/* The smaller of two limits where 0 means none. */
static uint64_t tighter(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* What expired: ids and, per id, whether the session's own limit (not the
 * group's or owner's) was the one reached. */
typedef struct expiry {
    char **ids;
    bool *own;
    size_t n;
} expiry;

static void expiry_add(expiry *x, const char *sid, bool own)
{
    char **v = skv__reallocarray(x->ids, x->n + 1, sizeof *v);
    if (v)
        x->ids = v;
    bool *o = v ? skv__reallocarray(x->own, x->n + 1, sizeof *o) : NULL;
    if (o)
        x->own = o;
    if (o && (v[x->n] = skv__strdup(sid)))
        o[x->n++] = own;
}

static void expiry_free(expiry *x)
{
    skv__mgr_ids_free(x->ids, x->n);
    skv__free(x->own);
}

/* Sessions (running: RUNNING by owner, else PENDING by resource group)
 * whose age exceeds the key's limit or their own. */
static void expired(skv_manager *m, bool running, limit_fn fn, int64_t now,
                    expiry *x)
{
    skv__mgr_store_aging *rows = NULL;
    size_t n_rows = 0;
    limit_cache c = {0};
    *x = (expiry){0};
    if (skv__mgr_store_sessions_aging(m->store, running, &rows, &n_rows,
                                      NULL))
        return;
    for (size_t i = 0; i < n_rows; i++) {
        uint64_t key = rows[i].key[0] ? cached(m, &c, rows[i].key, fn) : 0;
        uint64_t own = (uint64_t)rows[i].own_limit_ms;
        uint64_t lim = tighter(key, own);
        if (lim && now - rows[i].since_ms >= (int64_t)lim)
            expiry_add(x, rows[i].sid, lim == own);
    }
    skv__free(rows);
    cache_free(&c);
}

int skv__mgr_sweep(skv_manager *m, int64_t now_ms)
{
    expiry x;
    expired(m, false, group_timeout, now_ms, &x);
    for (size_t i = 0; i < x.n; i++)
        skv__mgr_session_stop(m, x.ids[i], SKV_SESSION_CANCELLED,
                              "pending timeout of its resource group", NULL,
                              now_ms, NULL);
    expiry_free(&x);
    expired(m, true, owner_lifetime, now_ms, &x);
    for (size_t i = 0; i < x.n; i++)
        skv__mgr_session_stop(m, x.ids[i], SKV_SESSION_TERMINATED,
                              x.own[i] ? "its maximum lifetime (--max-lifetime)"
                                         " reached"
                                       : "maximum session lifetime of its "
                                         "resource policy reached",
                              NULL, now_ms, NULL);
    expiry_free(&x);
    return 0;
}
