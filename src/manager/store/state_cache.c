/* The sessions' states kept in memory (state_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>
#include <string.h>

#include "cache_util.h"
#include "db_impl.h"
#include "state_cache.h"

typedef struct state_slot {
    uint64_t epoch;                      /* 0: empty */
    skv_manager_session_state state;
    char sid[SKV__STATE_CACHE_ID];
} state_slot;

struct skv__state_cache {
    skv__cache_stats stats;              /* first: cache_util.h */
    state_slot slot[SKV__STATE_CACHE_SLOTS];
};
_Static_assert(offsetof(struct skv__state_cache, stats) == 0,
               "cache_util.h counts through the cache's first member");

static size_t slot_of(const char *sid)
{
    return (size_t)(skv__mgr_store_cache_hash(sid) % SKV__STATE_CACHE_SLOTS);
}

static bool cacheable(const char *sid)
{
    return sid && *sid && skv__mgr_store_cache_fits(sid, SKV__STATE_CACHE_ID);
}

bool skv__mgr_store_state_cached(skv__db *db, const char *sid,
                                 skv_manager_session_state *out)
{
    struct skv__state_cache *c = db->states;
    if (!c || !cacheable(sid))
        return false;
    const state_slot *s = &c->slot[slot_of(sid)];
    bool hit = s->epoch == db->epoch && !strcmp(s->sid, sid);
    skv__mgr_store_cache_count(c, hit);
    if (hit)
        *out = s->state;
    return hit;
}

/* The same lookup without counting it: a check, not a read the cache
 * saved (the statistics stay about reads). */
bool skv__mgr_store_state_known(skv__db *db, const char *sid)
{
    const struct skv__state_cache *c = db->states;
    if (!c || !cacheable(sid))
        return false;
    const state_slot *s = &c->slot[slot_of(sid)];
    return s->epoch == db->epoch && !strcmp(s->sid, sid);
}

/* Allocated on first use: a connection that never touches sessions (the
 * lease's, a CLI's) costs nothing. */
void skv__mgr_store_state_note(skv__db *db, const char *sid,
                               skv_manager_session_state st)
{
    if (!cacheable(sid))
        return;
    db->states = skv__mgr_store_cache_new(db, db->states, sizeof *db->states);
    if (!db->states)
        return;
    state_slot *s = &db->states->slot[slot_of(sid)];
    s->epoch = db->epoch;
    s->state = st;
    memcpy(s->sid, sid, strlen(sid) + 1);
}

/* The slot of sid at this epoch, or NULL. */
static state_slot *current(skv__db *db, const char *sid)
{
    if (!db->states || !cacheable(sid))
        return NULL;
    state_slot *s = &db->states->slot[slot_of(sid)];
    return s->epoch == db->epoch && !strcmp(s->sid, sid) ? s : NULL;
}

bool skv__mgr_store_state_live(skv__db *db, const char *sid)
{
    const state_slot *s = current(db, sid);
    return s && s->state < SKV_SESSION_TERMINATED;
}

void skv__mgr_store_state_forget(skv__db *db)
{
    db->epoch++;
}

void skv__mgr_store_state_stats(skv__db *db, uint64_t *hits,
                                uint64_t *misses)
{
    skv__mgr_store_cache_stats(db->states, hits, misses);
}
