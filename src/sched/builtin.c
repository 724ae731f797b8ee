/* Built-in selectors and sequencers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

/* Free capacity left on the agent after the kernel, as a fraction of its
 * capacity in ppm, summed over the slots the kernel asks for. Device slots
 * count whole free devices so the score reflects fragmentation too. */
static int64_t left_after(const skv_sched_agent_view *a,
                          const skv_sched_kernel_view *k)
{
    int64_t sum = 0;
    for (size_t j = 0; j < k->n_slots; j++) {
        if (k->request[j] == 0 || a->capacity[j] <= 0 ||
            a->capacity[j] == SKV_QTY_UNLIMITED)
            continue;
        skv_qty left = a->capacity[j] - a->used[j] - k->request[j];
        if (left < 0)
            left = 0;
        sum += (int64_t)((unsigned __int128)left * 1000000u / (uint64_t)a->capacity[j]);
    }
    return sum;
}

/* concentrated: bin-packing, the fullest agent that fits */
static int64_t conc_score(void *st, const skv_sched_agent_view *a,
                          const skv_sched_kernel_view *k)
{
    (void)st;
    return -left_after(a, k);
}

/* dispersed: spread, the emptiest agent */
static int64_t disp_score(void *st, const skv_sched_agent_view *a,
                          const skv_sched_kernel_view *k)
{
    (void)st;
    return left_after(a, k);
}

const skv_sched_selector skv__sel_concentrated = {
    SKV_SCHED_SELECTOR_ABI, "concentrated", NULL, NULL, conc_score, NULL, NULL,
    SKV_SCHED_SEL_HINT_PACK};
const skv_sched_selector skv__sel_dispersed = {
    SKV_SCHED_SELECTOR_ABI, "dispersed", NULL, NULL, disp_score, NULL, NULL,
    SKV_SCHED_SEL_HINT_SPREAD};

/* round-robin: the first agent at or after a cursor that moves past each
 * agent used */
typedef struct rr_state {
    uint32_t cursor;
} rr_state;

static int rr_create(void **st, const char *config, skv_error *err)
{
    (void)config;
    rr_state *r = skv__calloc(1, sizeof(*r));
    if (!r)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *st = r;
    return 0;
}

static void rr_destroy(void *st) { skv__free(st); }

static int64_t rr_score(void *st, const skv_sched_agent_view *a,
                        const skv_sched_kernel_view *k)
{
    const rr_state *r = st;
    (void)k;
    uint32_t n = a->group_size ? a->group_size : 1;
    uint32_t dist = (a->index + n - r->cursor % n) % n;
    return -(int64_t)dist;
}

static void rr_placed(void *st, const skv_sched_agent_view *a,
                      const skv_sched_kernel_view *k)
{
    rr_state *r = st;
    (void)k;
    r->cursor = a->index + 1;
}

const skv_sched_selector skv__sel_roundrobin = {
    SKV_SCHED_SELECTOR_ABI, "roundrobin", rr_create, rr_destroy, rr_score,
    rr_placed, NULL, 0};

/* The cursor of a group whose selector is this roundrobin: place.c walks
 * the group from it and stops at the first agent that fits, which is the
 * agent of the best rr_score (distances after the cursor are distinct). */
bool skv__sel_rr_cursor(const skv__group *g, uint32_t *cursor)
{
    if (g->sel != &skv__sel_roundrobin || !g->sel_state)
        return false;
    *cursor = ((const rr_state *)g->sel_state)->cursor;
    return true;
}

/* ---- sequencers ---- */

static int64_t fifo_rank(void *st, const skv_sched_session_view *s,
                         const skv_sched_owner_view *o, int64_t now)
{
    (void)st; (void)o; (void)now;
    return s->submitted_ms; /* ties: submit order */
}

static int64_t lifo_rank(void *st, const skv_sched_session_view *s,
                         const skv_sched_owner_view *o, int64_t now)
{
    (void)st; (void)o; (void)now;
    return -(int64_t)s->seq;
}

static int64_t prio_rank(void *st, const skv_sched_session_view *s,
                         const skv_sched_owner_view *o, int64_t now)
{
    (void)st; (void)o; (void)now;
    return -(int64_t)s->aged_priority; /* FIFO within a band */
}

static int64_t drf_rank(void *st, const skv_sched_session_view *s,
                        const skv_sched_owner_view *o, int64_t now)
{
    (void)st; (void)s; (void)now;
    return (int64_t)o->dominant_share_ppm;
}

/* fair-share: decayed history plus the current share weighted as if held
 * for `now_weight_ms` (config "now_weight_ms=N", default one minute), so
 * placements within one pass interleave owners too */
typedef struct fs_state {
    int64_t now_weight_ms;
} fs_state;

static int fs_create(void **st, const char *config, skv_error *err)
{
    fs_state *f = skv__calloc(1, sizeof(*f));
    if (!f)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    f->now_weight_ms = 60000;
    if (config && *config) {
        char *end;
        if (strncmp(config, "now_weight_ms=", 14) != 0 ||
            (f->now_weight_ms = strtoll(config + 14, &end, 10)) < 0 || *end) {
            skv__free(f);
            return skv__err(err, SKV_EINVAL, "fairshare config '%s': expected "
                            "now_weight_ms=<non-negative integer>", config);
        }
    }
    *st = f;
    return 0;
}

static int64_t fs_rank(void *st, const skv_sched_session_view *s,
                       const skv_sched_owner_view *o, int64_t now)
{
    const fs_state *f = st;
    (void)s; (void)now;
    unsigned __int128 v = (unsigned __int128)o->decayed_usage +
                          (unsigned __int128)o->dominant_share_ppm *
                              (uint64_t)f->now_weight_ms;
    v /= 1000;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

const skv_sched_sequencer skv__seq_fifo = {
    SKV_SCHED_SEQUENCER_ABI, "fifo", 0, SKV_SCHED_SCOPE_USER, NULL, NULL, fifo_rank};
const skv_sched_sequencer skv__seq_lifo = {
    SKV_SCHED_SEQUENCER_ABI, "lifo", 0, SKV_SCHED_SCOPE_USER, NULL, NULL, lifo_rank};
const skv_sched_sequencer skv__seq_priority = {
    SKV_SCHED_SEQUENCER_ABI, "priority", 0, SKV_SCHED_SCOPE_USER, NULL, NULL,
    prio_rank};
const skv_sched_sequencer skv__seq_drf = {
    SKV_SCHED_SEQUENCER_ABI, "drf", SKV_SCHED_SEQ_PER_OWNER, SKV_SCHED_SCOPE_USER,
    NULL, NULL, drf_rank};
const skv_sched_sequencer skv__seq_fairshare = {
    SKV_SCHED_SEQUENCER_ABI, "fairshare", SKV_SCHED_SEQ_PER_OWNER,
    SKV_SCHED_SCOPE_USER, fs_create, skv__free, fs_rank};
