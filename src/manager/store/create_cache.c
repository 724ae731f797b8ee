/* Submit bodies and allocation rows kept in memory (create_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cache_util.h"
#include "create_cache.h"
#include "db_impl.h"
#include "skv_internal.h"

typedef struct cc_submit {
    uint64_t epoch;                      /* 0: empty */
    char sid[SKV__CCACHE_ID];
    char domain[SKV__CCACHE_ID], project[SKV__CCACHE_ID];
    char owner[SKV__CCACHE_ID];
    size_t len, cap;
    unsigned char *body;                 /* owned, cap bytes */
} cc_submit;

typedef struct cc_row {
    char dev[SKV__CCACHE_ID];
    char slot[SKV__CCACHE_SLOT];
    int64_t amount;
    bool whole;
} cc_row;

typedef struct cc_alloc {
    uint64_t epoch, gen;                 /* epoch 0: empty */
    char kid[SKV__CCACHE_ID];
    size_t n;
    cc_row row[SKV__CCACHE_ROWS];        /* (dev, slot) byte order */
} cc_alloc;

struct skv__create_cache {
    skv__cache_stats stats;              /* first: cache_util.h */
    uint64_t gen;                        /* bumped by alloc_forget */
    cc_submit submits[SKV__CCACHE_SUBMITS];
    cc_alloc allocs[SKV__CCACHE_ALLOCS];
};
_Static_assert(offsetof(struct skv__create_cache, stats) == 0,
               "cache_util.h counts through the cache's first member");

static bool id_fits(const char *s)
{
    return skv__mgr_store_cache_fits(s, SKV__CCACHE_ID);
}

/* Allocated on first use, as the other caches (cache_util.h). */
static struct skv__create_cache *cache(skv__db *db)
{
    return db->create = skv__mgr_store_cache_new(db, db->create,
                                                 sizeof *db->create);
}

/* ---- submit bodies ------------------------------------------------- */

static cc_submit *submit_slot(struct skv__create_cache *c, const char *sid)
{
    return &c->submits[skv__mgr_store_cache_hash(sid) % SKV__CCACHE_SUBMITS];
}

bool skv__mgr_store_cc_submit(skv__db *db, const char *sid,
                              const void **body, size_t *len, char *domain,
                              char *project, char *owner)
{
    if (!db->create || !id_fits(sid))
        return false;
    const cc_submit *s = submit_slot(db->create, sid);
    bool hit = s->epoch == db->epoch && !strcmp(s->sid, sid);
    skv__mgr_store_cache_count(db->create, hit);
    if (hit) {
        *body = s->body;
        *len = s->len;
        skv__strlcpy(domain, s->domain, SKV__STORE_ID_MAX);
        skv__strlcpy(project, s->project, SKV__STORE_ID_MAX);
        skv__strlcpy(owner, s->owner, SKV__STORE_ID_MAX);
    }
    return hit;
}

static bool submit_fits(const char *sid, size_t len, const char *domain,
                        const char *project, const char *owner)
{
    return id_fits(sid) && len <= SKV__CCACHE_BODY && id_fits(domain) &&
           id_fits(project) && id_fits(owner);
}

/* Room for len bytes in s's body; false out of memory. */
static bool body_room(cc_submit *s, size_t len)
{
    if (len <= s->cap && s->body)
        return true;
    unsigned char *b = skv__realloc(s->body, len ? len : 1);
    if (!b)
        return false;
    s->body = b;
    s->cap = len ? len : 1;
    return true;
}

void skv__mgr_store_cc_submit_note(skv__db *db, const char *sid,
                                   const void *body, size_t len,
                                   const char *domain, const char *project,
                                   const char *owner)
{
    struct skv__create_cache *c = id_fits(sid) ? cache(db) : NULL;
    if (!c)
        return;
    cc_submit *s = submit_slot(c, sid);
    s->epoch = 0;    /* the slot may hold another session's */
    if (!submit_fits(sid, len, domain, project, owner) || !body_room(s, len))
        return;
    memcpy(s->sid, sid, strlen(sid) + 1);
    memcpy(s->domain, domain, strlen(domain) + 1);
    memcpy(s->project, project, strlen(project) + 1);
    memcpy(s->owner, owner, strlen(owner) + 1);
    if (len)
        memcpy(s->body, body, len);
    s->len = len;
    s->epoch = db->epoch;
}

/* ---- allocation rows ----------------------------------------------- */

static cc_alloc *alloc_slot(struct skv__create_cache *c, const char *kid)
{
    return &c->allocs[skv__mgr_store_cache_hash(kid) % SKV__CCACHE_ALLOCS];
}

/* kid's entry, valid now, or NULL. */
static cc_alloc *alloc_entry(skv__db *db, const char *kid)
{
    if (!db->create || !id_fits(kid))
        return NULL;
    cc_alloc *a = alloc_slot(db->create, kid);
    return a->epoch == db->epoch && a->gen == db->create->gen &&
           !strcmp(a->kid, kid) ? a : NULL;
}

void skv__mgr_store_cc_alloc_start(skv__db *db, const char *kid)
{
    struct skv__create_cache *c = id_fits(kid) ? cache(db) : NULL;
    if (!c)
        return;
    cc_alloc *a = alloc_slot(c, kid);
    a->epoch = db->epoch;
    a->gen = c->gen;
    a->n = 0;
    memcpy(a->kid, kid, strlen(kid) + 1);
}

static int row_cmp(const char *dev, const char *slot, const cc_row *r)
{
    int d = strcmp(dev, r->dev);
    return d ? d : strcmp(slot, r->slot);
}

void skv__mgr_store_cc_alloc_note(skv__db *db, const skv__mgr_store_alloc *r)
{
    cc_alloc *a = alloc_entry(db, r->kernel_id);
    if (!a)
        return;
    if (a->n == SKV__CCACHE_ROWS || !id_fits(r->device_id) ||
        !skv__mgr_store_cache_fits(r->slot, SKV__CCACHE_SLOT)) {
        a->epoch = 0;    /* it would no longer hold all the rows */
        return;
    }
    size_t i = a->n;
    for (; i > 0 && row_cmp(r->device_id, r->slot, &a->row[i - 1]) < 0; i--)
        a->row[i] = a->row[i - 1];
    cc_row *w = &a->row[i];
    memcpy(w->dev, r->device_id, strlen(r->device_id) + 1);
    memcpy(w->slot, r->slot, strlen(r->slot) + 1);
    w->amount = r->amount;
    w->whole = r->whole;
    a->n++;
}

void skv__mgr_store_cc_alloc_forget(skv__db *db)
{
    if (db->create)
        db->create->gen++;
}

int skv__mgr_store_cc_alloc(skv__db *db, const char *kid,
                            skv__mgr_store_alloc **out, size_t *n,
                            skv_error *err)
{
    const cc_alloc *a = alloc_entry(db, kid);
    skv__mgr_store_cache_count(db->create, a != NULL);
    if (!a)
        return 0;
    *n = 0;
    *out = a->n ? skv__calloc(a->n, sizeof **out) : NULL;
    if (a->n && !*out)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->n; i++) {
        skv__mgr_store_alloc *v = &(*out)[i];
        snprintf(v->dev_buf, sizeof v->dev_buf, "%s", a->row[i].dev);
        snprintf(v->slot_buf, sizeof v->slot_buf, "%s", a->row[i].slot);
        v->device_id = v->dev_buf;
        v->slot = v->slot_buf;
        v->amount = a->row[i].amount;
        v->whole = a->row[i].whole;
    }
    *n = a->n;
    return 1;
}

void skv__mgr_store_cc_stats(skv__db *db, uint64_t *hits, uint64_t *misses)
{
    skv__mgr_store_cache_stats(db->create, hits, misses);
}

void skv__mgr_store_cc_free(skv__db *db)
{
    if (!db->create)
        return;
    for (size_t i = 0; i < SKV__CCACHE_SUBMITS; i++)
        skv__free(db->create->submits[i].body);
    skv__free(db->create);
    db->create = NULL;
}
