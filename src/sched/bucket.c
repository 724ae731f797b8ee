/* The free-device index: each group keeps its agents in buckets by the
 * number of entirely free devices, so hinted selectors (pack / spread) find
 * a fitting agent without scoring the whole group, and requests for k whole
 * devices never look at agents with fewer than k free.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sched_int.h"
#include "selector_frag_index.h"

uint8_t skv__sched_free_devices(const skv__agent *a)
{
    uint8_t n = 0;
    for (uint32_t i = 0; i < a->d.ndev; i++)
        n += !a->d.dev[i].whole_taken && a->d.dev[i].share_used == 0;
    return n;
}

uint8_t skv__sched_bucket_key(const skv__agent *a)
{
    uint8_t n = skv__sched_free_devices(a);
    if (n || a->d.ndev == 0)
        return n;
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        const skv_sched_device_view *v = &a->d.dev[i];
        if (!v->whole_taken && v->share_slot != SKV_SCHED_NO_SLOT &&
            v->share_used < v->share_capacity)
            return 0;
    }
    return SKV__BUCKET_FULL;
}

bool skv__sched_room_skip = true;

skv_qty skv__sched_share_room(const skv__agent *a)
{
    skv_qty room = 0;
    for (uint32_t i = 0; i < a->d.ndev; i++) {
        const skv_sched_device_view *v = &a->d.dev[i];
        if (!v->whole_taken && v->share_slot != SKV_SCHED_NO_SLOT &&
            v->share_used < v->share_capacity)
            room += v->share_capacity - v->share_used;
    }
    return room;
}

static uint32_t index_of(const skv_sched *s, const skv__agent *a)
{
    return s->groups[a->group]->agents[a->gpos];
}

/* Every bucket of the group gets room for all its agents up front, so
 * moving an agent between buckets during a pass never allocates. */
int skv__sched_bucket_add(skv_sched *s, uint32_t ai, skv_error *err)
{
    skv__agent *a = s->agents[ai];
    skv__group *g = s->groups[a->group];
    for (int i = 0; i < SKV__NBUCKETS; i++) {
        skv__bucket *b = &g->bucket[i];
        if (b->cap > g->nagents)
            continue;
        uint32_t nc = b->cap ? b->cap * 2 : 16;
        while (nc <= g->nagents)
            nc *= 2;
        uint32_t *na = skv__reallocarray(b->ag, nc, sizeof(uint32_t));
        if (!na)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        b->ag = na;
        skv_qty *nr = skv__reallocarray(b->room, nc, sizeof(skv_qty));
        if (!nr)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        b->room = nr;
        b->cap = nc;
    }
    a->bkey = skv__sched_bucket_key(a);
    skv__bucket *b = &g->bucket[a->bkey];
    a->bpos = b->n;
    b->room[b->n] = skv__sched_share_room(a);
    b->ag[b->n++] = ai;
    return 0;
}

void skv__sched_bucket_del(skv_sched *s, uint32_t ai)
{
    skv__agent *a = s->agents[ai];
    skv__bucket *b = &s->groups[a->group]->bucket[a->bkey];
    uint32_t last = b->ag[--b->n];
    if (last != ai) {
        b->ag[a->bpos] = last;
        b->room[a->bpos] = b->room[b->n];
        s->agents[last]->bpos = a->bpos;
    }
}

/* Move a to the bucket of its current free count (room is reserved) and
 * note its shared room there. */
void skv__sched_rebucket(skv_sched *s, skv__agent *a)
{
    uint8_t k = skv__sched_bucket_key(a);
    skv_qty room = skv__sched_share_room(a);
    if (k == a->bkey) {
        s->groups[a->group]->bucket[k].room[a->bpos] = room;
        return;
    }
    uint32_t ai = index_of(s, a);
    skv__bucket *to = &s->groups[a->group]->bucket[k];
    skv__sched_bucket_del(s, ai);
    to->room[to->n] = room;
    to->ag[to->n] = ai;
    a->bkey = k;
    a->bpos = to->n++;
}

void skv__sched_agent_apply(skv_sched *s, skv__agent *a, const skv_qty *req,
                            const skv_sched_device_share *sh, size_t n)
{
    skv__dmap_apply(&a->d, req, sh, n);
    skv__fidx_touch(s, a);
    if (n)
        skv__sched_rebucket(s, a);
}

void skv__sched_agent_release(skv_sched *s, skv__agent *a, const skv_qty *req,
                              const skv_sched_device_share *sh, size_t n)
{
    skv__dmap_release(&a->d, req, sh, n);
    skv__fidx_touch(s, a);
    if (n)
        skv__sched_rebucket(s, a);
    if (n && a->health)     /* a down device its last user just left */
        skv__sched_health_sync(s, a);
}
