/* What kernel.create is built from, kept in memory (dispatch_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "db_impl.h"
#include "dispatch_cache.h"
#include "skv_internal.h"

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
    uint64_t hits, misses;
    unsigned victim;                     /* the next way a full set gives */
    dc_agent agents[SKV__DCACHE_AGENTS / SKV__DCACHE_WAYS][SKV__DCACHE_WAYS];
    dc_spec specs[SKV__DCACHE_SPECS];
};

static uint64_t hash(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool fits(const char *s, size_t room)
{
    return s && strnlen(s, room) < room;
}

static void count(skv__db *db, bool hit)
{
    if (db->dispatch)
        *(hit ? &db->dispatch->hits : &db->dispatch->misses) += 1;
}

/* Allocated on first use, as the other caches: a connection that never
 * dispatches (the lease's, a CLI's) costs nothing. NULL: out of memory,
 * which only makes later lookups misses. */
static struct skv__dispatch_cache *cache(skv__db *db)
{
    if (!db->dispatch && !(db->dispatch = skv__calloc(1, sizeof *db->dispatch)))
        return NULL;
    if (!db->epoch)
        db->epoch = 1;    /* 0 marks an empty slot */
    return db->dispatch;
}

static dc_agent *agent_set(struct skv__dispatch_cache *c, const char *id)
{
    uint64_t h = hash(id, 1469598103934665603u);
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
    if (!db->dispatch || !*agent || !fits(agent, SKV__DCACHE_ID))
        return false;
    const dc_agent *a = agent_way(agent_set(db->dispatch, agent), agent);
    bool hit = a && a->epoch == db->epoch;
    count(db, hit);
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
    if (!agent || !*agent || !fits(agent, SKV__DCACHE_ID))
        return;
    if (addr && !fits(addr, SKV__DCACHE_ADDR)) {   /* too long: forget */
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
    uint64_t h = hash(sid, 1469598103934665603u);
    h = (h ^ (uint64_t)(uint32_t)idx) * 1099511628211u;
    return &c->specs[h % SKV__DCACHE_SPECS];
}

bool skv__mgr_store_dc_spec(skv__db *db, const char *sid, int idx,
                            const char **image, const void **slots,
                            size_t *len)
{
    if (!db->dispatch || !fits(sid, SKV__DCACHE_ID))
        return false;
    const dc_spec *s = spec_slot(db->dispatch, sid, idx);
    bool hit = s->epoch == db->epoch && s->idx == idx && !strcmp(s->sid, sid);
    count(db, hit);
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
    struct skv__dispatch_cache *c = fits(sid, SKV__DCACHE_ID) ? cache(db)
                                                              : NULL;
    if (!c)
        return;
    dc_spec *s = spec_slot(c, sid, idx);
    if ((image && !fits(image, SKV__DCACHE_IMAGE)) ||
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
    *hits = db->dispatch ? db->dispatch->hits : 0;
    *misses = db->dispatch ? db->dispatch->misses : 0;
}
