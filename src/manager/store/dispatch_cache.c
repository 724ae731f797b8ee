/* What kernel.create is built from, kept in memory (dispatch_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>
#include <string.h>

#include "cache_util.h"
#include "db_impl.h"
#include "dispatch_cache.h"

typedef struct dc_agent {
    uint64_t epoch;                      /* 0: empty */
    bool has;
    char id[SKV__DCACHE_ID];
    char addr[SKV__DCACHE_ADDR];
} dc_agent;

typedef struct dc_spec {
    uint64_t epoch;
    int idx;
    bool has_image;
    size_t len;
    char sid[SKV__DCACHE_ID];
    char image[SKV__DCACHE_IMAGE];
    unsigned char slots[SKV__DCACHE_SLOTS];
} dc_spec;

struct skv__dispatch_cache {
    skv__cache_stats stats;              /* first: cache_util.h */
    unsigned victim;                     /* the next way a full set gives */
    dc_agent agents[SKV__DCACHE_AGENTS / SKV__DCACHE_WAYS][SKV__DCACHE_WAYS];
    dc_spec specs[SKV__DCACHE_SPECS];
};
_Static_assert(offsetof(struct skv__dispatch_cache, stats) == 0,
               "cache_util.h counts through the cache's first member");

static bool id_fits(const char *s)
{
    return skv__mgr_store_cache_fits(s, SKV__DCACHE_ID);
}

/* Allocated on first use, as the other caches (cache_util.h): a
 * connection that never dispatches (the lease's, a CLI's) costs nothing. */
static struct skv__dispatch_cache *cache(skv__db *db)
{
    return db->dispatch = skv__mgr_store_cache_new(db, db->dispatch,
                                                   sizeof *db->dispatch);
}

static dc_agent *agent_set(struct skv__dispatch_cache *c, const char *id)
{
    uint64_t h = skv__mgr_store_cache_hash(id);
    return c->agents[h % (SKV__DCACHE_AGENTS / SKV__DCACHE_WAYS)];
}

/* The way holding agent (any epoch), or NULL. An agent has at most one
 * way: a note reuses it before taking another. */
static dc_agent *agent_way(dc_agent *set, const char *agent)
{
    for (int i = 0; i < SKV__DCACHE_WAYS; i++)
        if (set[i].epoch && !strcmp(set[i].id, agent))
            return &set[i];
    return NULL;
}

bool skv__mgr_store_dc_agent(skv__db *db, const char *agent, bool *has,
                             char *addr)
{
    if (!db->dispatch || !*agent || !id_fits(agent))
        return false;
    const dc_agent *a = agent_way(agent_set(db->dispatch, agent), agent);
    bool hit = a && a->epoch == db->epoch;
    skv__mgr_store_cache_count(db->dispatch, hit);
    if (hit) {
        *has = a->has;
        memcpy(addr, a->addr, sizeof a->addr);
    }
    return hit;
}

/* agent's own way, else one empty or of an older epoch, else the next
 * victim (a rotation: five agents of one set all get their turn). */
static dc_agent *agent_take(skv__db *db, struct skv__dispatch_cache *c,
                            const char *agent)
{
    dc_agent *set = agent_set(c, agent), *a = agent_way(set, agent);
    for (int i = 0; !a && i < SKV__DCACHE_WAYS; i++)
        if (set[i].epoch != db->epoch)
            a = &set[i];
    return a ? a : &set[c->victim++ % SKV__DCACHE_WAYS];
}

void skv__mgr_store_dc_agent_note(skv__db *db, const char *agent,
                                  const char *addr)
{
    if (!agent || !*agent || !id_fits(agent))
        return;
    /* An address too long to hold: the agent's way is forgotten. */
    if (addr && !skv__mgr_store_cache_fits(addr, SKV__DCACHE_ADDR)) {
        dc_agent *a = db->dispatch ? agent_way(agent_set(db->dispatch,
                                                         agent), agent)
                                   : NULL;
        if (a)
            a->epoch = 0;
        return;
    }
    struct skv__dispatch_cache *c = cache(db);
    if (!c)
        return;
    dc_agent *a = agent_take(db, c, agent);
    a->epoch = db->epoch;
    a->has = addr != NULL;
    memcpy(a->id, agent, strlen(agent) + 1);
    memcpy(a->addr, addr ? addr : "", strlen(addr ? addr : "") + 1);
}

static dc_spec *spec_slot(struct skv__dispatch_cache *c, const char *sid,
                          int idx)
{
    uint64_t h = skv__mgr_store_cache_hash(sid);
    h = (h ^ (uint64_t)(uint32_t)idx) * SKV__CACHE_FNV_PRIME;
    return &c->specs[h % SKV__DCACHE_SPECS];
}

bool skv__mgr_store_dc_spec(skv__db *db, const char *sid, int idx,
                            const char **image, const void **slots,
                            size_t *len)
{
    if (!db->dispatch || !id_fits(sid))
        return false;
    const dc_spec *s = spec_slot(db->dispatch, sid, idx);
    bool hit = s->epoch == db->epoch && s->idx == idx && !strcmp(s->sid, sid);
    skv__mgr_store_cache_count(db->dispatch, hit);
    if (hit) {
        *image = s->has_image ? s->image : NULL;
        *slots = s->slots;
        *len = s->len;
    }
    return hit;
}

void skv__mgr_store_dc_spec_note(skv__db *db, const char *sid, int idx,
                                 const char *image, const void *slots,
                                 size_t len)
{
    struct skv__dispatch_cache *c = id_fits(sid) ? cache(db) : NULL;
    if (!c)
        return;
    dc_spec *s = spec_slot(c, sid, idx);
    if ((image && !skv__mgr_store_cache_fits(image, SKV__DCACHE_IMAGE)) ||
        len > SKV__DCACHE_SLOTS) {
        s->epoch = 0;    /* the slot may hold an older (sid, idx) */
        return;
    }
    s->epoch = db->epoch;
    s->idx = idx;
    s->has_image = image != NULL;
    s->len = len;
    memcpy(s->sid, sid, strlen(sid) + 1);
    memcpy(s->image, image ? image : "", strlen(image ? image : "") + 1);
    if (len)
        memcpy(s->slots, slots, len);
}

void skv__mgr_store_dc_stats(skv__db *db, uint64_t *hits, uint64_t *misses)
{
    skv__mgr_store_cache_stats(db->dispatch, hits, misses);
}
