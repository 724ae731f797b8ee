/* The sessions' kernel rows kept in memory (kernel_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cache_util.h"
#include "db_impl.h"
#include "kernel_cache.h"
#include "store_int.h"

typedef struct kc_session {
    uint64_t epoch;                      /* 0: empty */
    char sid[SKV__KCACHE_ID];
    size_t n;
    skv__kc_kernel k[SKV__KCACHE_KERNELS];
    skv__kc_fin fin;
} kc_session;

typedef struct kc_index {
    uint64_t epoch;
    uint32_t session;                    /* its slot in sessions[] */
    char kid[SKV__KCACHE_ID];
} kc_index;

struct skv__kernel_cache {
    skv__cache_stats stats;              /* first: cache_util.h */
    kc_session sessions[SKV__KCACHE_SESSIONS];
    kc_index index[SKV__KCACHE_INDEX];
};
_Static_assert(offsetof(struct skv__kernel_cache, stats) == 0,
               "cache_util.h counts through the cache's first member");

static uint32_t session_slot(const char *sid)
{
    return (uint32_t)(skv__mgr_store_cache_hash(sid) % SKV__KCACHE_SESSIONS);
}

static size_t index_slot(const char *kid)
{
    return skv__mgr_store_cache_hash(kid) % SKV__KCACHE_INDEX;
}

static bool fits(const char *id)
{
    return id && *id && skv__mgr_store_cache_fits(id, SKV__KCACHE_ID);
}

/* sid's live entry, or NULL; counts nothing. */
static kc_session *find(skv__db *db, const char *sid)
{
    struct skv__kernel_cache *c = db->kernels;
    if (!c || !fits(sid))
        return NULL;
    kc_session *s = &c->sessions[session_slot(sid)];
    return s->epoch == db->epoch && !strcmp(s->sid, sid) ? s : NULL;
}

/* kid's live kernel (and its session), or NULL. */
static skv__kc_kernel *find_kernel(skv__db *db, const char *kid,
                                   kc_session **out)
{
    struct skv__kernel_cache *c = db->kernels;
    if (!c || !fits(kid))
        return NULL;
    const kc_index *x = &c->index[index_slot(kid)];
    if (x->epoch != db->epoch || strcmp(x->kid, kid))
        return NULL;
    kc_session *s = &c->sessions[x->session];
    for (size_t i = 0; s->epoch == db->epoch && i < s->n; i++)
        if (!strcmp(s->k[i].kid, kid)) {
            *out = s;
            return &s->k[i];
        }
    return NULL;
}

const skv__kc_kernel *skv__mgr_store_kc_session(skv__db *db, const char *sid,
                                                size_t *n)
{
    kc_session *s = find(db, sid);
    skv__mgr_store_cache_count(db->kernels, s != NULL);
    *n = s ? s->n : 0;
    return s ? s->k : NULL;
}

const skv__kc_kernel *skv__mgr_store_kc_kernel(skv__db *db, const char *kid,
                                               const char **sid)
{
    kc_session *s = NULL;
    skv__kc_kernel *k = find_kernel(db, kid, &s);
    skv__mgr_store_cache_count(db->kernels, k != NULL);
    if (k)
        *sid = s->sid;
    return k;
}

bool skv__mgr_store_kc_live(skv__db *db, const char *kid)
{
    kc_session *s = NULL;
    const skv__kc_kernel *k = find_kernel(db, kid, &s);
    return k && strcmp(k->status, "TERMINATED") &&
           strcmp(k->status, "CANCELLED") && strcmp(k->status, "ERROR");
}

/* Every kernel of a live entry keeps its index slot: the session whose
 * kernel held the slot goes. false: two of s's own kernels collide. */
static bool take_slot(struct skv__kernel_cache *c, uint64_t epoch,
                      const kc_session *s, size_t i, uint32_t session)
{
    const char *kid = s->k[i].kid;
    kc_index *x = &c->index[index_slot(kid)];
    if (x->epoch == epoch && strcmp(x->kid, kid)) {
        for (size_t j = 0; j < i; j++)
            if (!strcmp(x->kid, s->k[j].kid))
                return false;
        if (x->session != session)    /* else: the slot's old session */
            c->sessions[x->session].epoch = 0;
    }
    x->epoch = epoch;
    x->session = session;
    memcpy(x->kid, kid, strlen(kid) + 1);
    return true;
}

static bool cacheable(const char *sid, const skv__kc_kernel *k, size_t n)
{
    if (!fits(sid) || n > SKV__KCACHE_KERNELS)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!fits(k[i].kid) || strnlen(k[i].agent, SKV__KCACHE_ID) ==
            SKV__KCACHE_ID || strnlen(k[i].status, 16) == 16)
            return false;
    return true;
}

/* Allocated on first use, as the state cache: a connection that never
 * touches kernels costs nothing. */
void skv__mgr_store_kc_fill(skv__db *db, const char *sid,
                            const skv__kc_kernel *k, size_t n)
{
    if (!cacheable(sid, k, n)) {
        skv__mgr_store_kc_drop(db, sid);
        return;
    }
    db->kernels = skv__mgr_store_cache_new(db, db->kernels,
                                           sizeof *db->kernels);
    if (!db->kernels)
        return;
    uint32_t slot = session_slot(sid);
    kc_session *s = &db->kernels->sessions[slot];
    s->epoch = db->epoch;
    memcpy(s->sid, sid, strlen(sid) + 1);
    s->n = n;
    memcpy(s->k, k, n * sizeof *k);
    memset(&s->fin, 0, sizeof s->fin);     /* a read does not say */
    for (size_t i = 0; i < n; i++)
        if (!take_slot(db->kernels, db->epoch, s, i, slot)) {
            s->epoch = 0;
            return;
        }
}

static void put(skv__kc_kernel *k, const char *status, const char *agent)
{
    if (status)
        skv__strlcpy(k->status, status, sizeof k->status);
    if (agent)
        skv__strlcpy(k->agent, agent, sizeof k->agent);
}

/* A value the entry cannot hold takes the entry away ("" is NULL in an
 * entry, so an agent id "" cannot be told from none). */
static bool storable(const char *status, const char *agent)
{
    return (!status || strlen(status) < 16) &&
           (!agent || (*agent && strlen(agent) < SKV__KCACHE_ID));
}

void skv__mgr_store_kc_set(skv__db *db, const char *kid, const char *status,
                           const char *agent)
{
    kc_session *s = NULL;
    skv__kc_kernel *k = find_kernel(db, kid, &s);
    if (k && storable(status, agent))
        put(k, status, agent);
    else if (k)
        s->epoch = 0;
}

static bool in_set(const char *status, const char *const *v, size_t nv)
{
    for (size_t i = 0; i < nv; i++)
        if (!strcmp(status, v[i]))
            return true;
    return false;
}

void skv__mgr_store_kc_move(skv__db *db, const char *sid,
                            const char *const *v, size_t nv, bool in,
                            const char *agent, const char *to)
{
    kc_session *s = find(db, sid);
    if (!s)
        return;
    if (!storable(to, agent)) {
        s->epoch = 0;
        return;
    }
    for (size_t i = 0; i < s->n; i++)
        if (in_set(s->k[i].status, v, nv) == in &&
            (!agent || !strcmp(s->k[i].agent, agent)))
            put(&s->k[i], to, NULL);
}

void skv__mgr_store_kc_drop(skv__db *db, const char *sid)
{
    kc_session *s = find(db, sid);
    if (s)
        s->epoch = 0;
}

void skv__mgr_store_kc_stats(skv__db *db, uint64_t *hits, uint64_t *misses)
{
    skv__mgr_store_cache_stats(db->kernels, hits, misses);
}

/* ---- the end's row (sessions.c finish_row) ------------------------------ */

void skv__mgr_store_kc_fin_new(skv__db *db, const char *sid)
{
    kc_session *s = find(db, sid);
    if (!s)
        return;
    memset(&s->fin, 0, sizeof s->fin);
    s->fin.known = true;
}

void skv__mgr_store_kc_fin_read(skv__db *db, const char *sid,
                                const skv__kc_fin *f)
{
    kc_session *s = find(db, sid);
    if (s)
        s->fin = *f;
}

void skv__mgr_store_kc_fin_forget(skv__db *db, const char *sid)
{
    kc_session *s = find(db, sid);
    if (s)
        s->fin.known = false;
}

/* The statement's WHERE end_status IS NULL: the first stop decides. */
void skv__mgr_store_kc_fin_end(skv__db *db, const char *sid,
                               const char *status, const char *reason)
{
    kc_session *s = find(db, sid);
    if (!s || !s->fin.known || s->fin.end_set)
        return;
    if (!status) {          /* NULL again: a later stop still decides */
        s->fin.known = false;
        return;
    }
    s->fin.end_set = true;
    skv__strlcpy(s->fin.end_status, status, sizeof s->fin.end_status);
    s->fin.end_reason_set = reason != NULL;
    skv__strlcpy(s->fin.end_reason, reason ? reason : "",
                 sizeof s->fin.end_reason);
}

void skv__mgr_store_kc_fin_exit(skv__db *db, const char *kid, int exit_code,
                                const char *reason)
{
    kc_session *s = NULL;
    skv__kc_kernel *k = find_kernel(db, kid, &s);
    if (!k || k->idx != 0 || !s->fin.known)
        return;
    s->fin.exit_set = true;
    s->fin.exit_code = exit_code;
    s->fin.kreason_set = reason != NULL;
    skv__strlcpy(s->fin.kreason, reason ? reason : "",
                 sizeof s->fin.kreason);
}

static const skv__kc_kernel *main_kernel(const kc_session *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->k[i].idx == 0)
            return &s->k[i];
    return NULL;
}

/* The SELECT's columns as the entry holds them (NULL where the column
 * is), through the builder the SELECT's row goes through. */
bool skv__mgr_store_kc_finish(skv__db *db, const char *sid,
                              skv__mgr_store_finish *out)
{
    const kc_session *s = find(db, sid);
    if (!s || !s->fin.known)
        return false;
    const skv__kc_fin *f = &s->fin;
    const skv__kc_kernel *k = main_kernel(s);
    skv__mgr_store_finish_fill(out, f->end_set ? f->end_status : NULL,
                               f->end_set && f->end_reason_set ?
                               f->end_reason : NULL, k && f->exit_set,
                               f->exit_code, k ? k->status : NULL,
                               k && f->kreason_set ? f->kreason : NULL);
    return true;
}
