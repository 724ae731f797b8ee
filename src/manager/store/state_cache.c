/* The sessions' states kept in memory (state_cache.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "db_impl.h"
#include "skv_internal.h"
#include "state_cache.h"

typedef struct state_slot {
    uint64_t epoch;                      /* 0: empty */
    skv_manager_session_state state;
    bool no_end;                         /* end_status, end_reason NULL */
    char sid[SKV__STATE_CACHE_ID];
} state_slot;

struct skv__state_cache {
    uint64_t hits, misses;
    state_slot slot[SKV__STATE_CACHE_SLOTS];
};

static size_t slot_of(const char *sid)
{
    uint64_t h = 1469598103934665603u;
    for (; *sid; sid++)
        h = (h ^ (unsigned char)*sid) * 1099511628211u;
    return (size_t)(h % SKV__STATE_CACHE_SLOTS);
}

static bool cacheable(const char *sid)
{
    return sid && *sid && strnlen(sid, SKV__STATE_CACHE_ID) < SKV__STATE_CACHE_ID;
}

bool skv__mgr_store_state_cached(skv__db *db, const char *sid,
                                 skv_manager_session_state *out)
{
    struct skv__state_cache *c = db->states;
    if (!c || !cacheable(sid))
        return false;
    const state_slot *s = &c->slot[slot_of(sid)];
    if (s->epoch != db->epoch || strcmp(s->sid, sid)) {
        c->misses++;
        return false;
    }
    c->hits++;
    *out = s->state;
    return true;
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
    if (!db->states && !(db->states = skv__calloc(1, sizeof *db->states)))
        return;
    if (!db->epoch)
        db->epoch = 1;    /* 0 marks an empty slot */
    state_slot *s = &db->states->slot[slot_of(sid)];
    bool same = s->epoch == db->epoch && !strcmp(s->sid, sid);
    s->no_end = same && s->no_end;    /* a status write keeps the end */
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

void skv__mgr_store_state_note_end(skv__db *db, const char *sid,
                                   bool none)
{
    state_slot *s = current(db, sid);
    if (s)
        s->no_end = none;
}

bool skv__mgr_store_state_no_end(skv__db *db, const char *sid)
{
    const state_slot *s = current(db, sid);
    return s && s->no_end;
}

void skv__mgr_store_state_forget(skv__db *db)
{
    db->epoch++;
}

void skv__mgr_store_state_stats(skv__db *db, uint64_t *hits,
                                uint64_t *misses)
{
    *hits = db->states ? db->states->hits : 0;
    *misses = db->states ? db->states->misses : 0;
}
