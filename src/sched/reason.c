/* Pending reasons: computing the resource detail, reading and formatting.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "pass_int.h"
#include "selector_frag_index.h"

static const char *const reason_names[] = {
    "none", "not-before", "dependency", "dependency-failed",
    "dependency-unknown", "quota", "concurrency", "no-agent", "resources",
    "reserved", "preempting", "has-reservation", "pass-limit"};

SKV_EXTERN const char *skv_sched_reason_name(skv_sched_reason_code c)
{
    return (unsigned)c < SKV__ARRAY_LEN(reason_names) ? reason_names[c] : "?";
}

static void tally(skv__reason *r, const skv_qty *shortv)
{
    for (int j = 0; j < NSL; j++) {
        if (!shortv[j])
            continue;
        int at = -1;
        for (int i = 0; i < r->nshort; i++)
            if (r->short_slot[i] == j)
                at = i;
        if (at < 0) {
            if (r->nshort >= SKV_SCHED_REASON_SLOTS_MAX)
                continue;
            at = r->nshort++;
            r->short_slot[at] = (uint8_t)j;
            r->short_agents[at] = 0;
            r->short_min[at] = shortv[j];
        }
        r->short_agents[at]++;
        if (shortv[j] < r->short_min[at])
            r->short_min[at] = shortv[j];
    }
}

static void sort_short(skv__reason *r, const skv_sched *s)
{
    /* name order, as promised in the header (few entries: insertion sort) */
    for (int i = 1; i < r->nshort; i++)
        for (int j = i; j > 0 && strcmp(s->slot_name[r->short_slot[j - 1]],
                                        s->slot_name[r->short_slot[j]]) > 0; j--) {
            uint8_t t8 = r->short_slot[j];
            r->short_slot[j] = r->short_slot[j - 1];
            r->short_slot[j - 1] = t8;
            uint32_t t32 = r->short_agents[j];
            r->short_agents[j] = r->short_agents[j - 1];
            r->short_agents[j - 1] = t32;
            skv_qty tq = r->short_min[j];
            r->short_min[j] = r->short_min[j - 1];
            r->short_min[j - 1] = tq;
        }
}

void skv__pass_reason_resources(skv__pass *P, uint32_t si,
                                const skv__miss *miss)
{
    skv_sched *s = P->s;
    skv__session *x = s->sess[si];
    skv__reason *r = &x->reason;
    skv__sched_reason_reset(r);
    r->evaluated_ms = P->now;
    const skv_qty *req = x->mode == SKV_SCHED_SINGLE_NODE
                             ? x->total : x->k[miss->kernel].req;
    skv_qty shortv[NSL];
    bool by_class = skv__fidx_reason(P, x, req, r);
    for (uint32_t i = 0; !by_class && i < P->g->nagents; i++) {
        const skv__agent *a = s->agents[P->g->agents[i]];
        if (!skv__pass_agent_ok(x, a))
            continue;
        r->agents_candidate++;
        skv__dmap_shortfall(&a->d, req, shortv);
        tally(r, shortv);
    }
    sort_short(r, s);
    if (r->agents_candidate == 0) {
        r->code = SKV_SCHED_REASON_NO_AGENT;
    } else if (r->nshort == 0 && miss->resv_blocked) {
        r->code = SKV_SCHED_REASON_RESERVED;
        r->detail_owned = skv__strdup(s->sess[miss->resv_holder]->id);
        r->detail = r->detail_owned ? r->detail_owned : "";
    } else {
        r->code = SKV_SCHED_REASON_RESOURCES;
    }
}

/* Some agent that would fit req but was reserved for another session by
 * the group's last pass: that session's id, or NULL. */
static const char *holder(const skv_sched *s, const skv__group *g,
                          const skv__session *x, const skv__agent *a,
                          const skv_qty *shortv)
{
    for (int j = 0; j < NSL; j++)
        if (shortv[j])
            return NULL;
    if (!g->last_epoch || a->resv_epoch != g->last_epoch ||
        a->resv_sess >= s->nsess_tab || !s->sess[a->resv_sess] ||
        s->sess[a->resv_sess] == x)
        return NULL;
    return s->sess[a->resv_sess]->id;
}

/* A session an incremental pass skipped (pass_inc.c) because its shape
 * could not start: what is short is computed now, against the agents'
 * present free state, as the pass would have computed it. */
static void deferred_fill(skv_sched_reason *out, const skv_sched *s,
                          const skv__session *x)
{
    const skv__group *g = s->groups[x->group];
    skv__reason r;
    memset(&r, 0, sizeof(r));
    skv_qty shortv[NSL];
    const char *held = NULL;
    /* what the pass reports: the gang's first kernel (pass_inc.c) */
    const skv_qty *req = x->mode == SKV_SCHED_SINGLE_NODE ? x->total : x->k[0].req;
    for (uint32_t i = 0; i < g->nagents; i++) {
        const skv__agent *a = s->agents[g->agents[i]];
        if (!skv__pass_agent_ok(x, a))
            continue;
        r.agents_candidate++;
        skv__dmap_shortfall(&a->d, req, shortv);
        tally(&r, shortv);
        if (!held)
            held = holder(s, g, x, a, shortv);
    }
    sort_short(&r, s);
    out->evaluated_ms = g->last_pass_ms;
    out->code = r.agents_candidate == 0 ? SKV_SCHED_REASON_NO_AGENT
                : r.nshort == 0 && held ? SKV_SCHED_REASON_RESERVED
                                        : SKV_SCHED_REASON_RESOURCES;
    out->detail = out->code == SKV_SCHED_REASON_RESERVED ? held : NULL;
    out->agents_candidate = r.agents_candidate;
    out->n_slots = r.nshort;
    for (int i = 0; i < r.nshort; i++) {
        out->slots[i].slot = s->slot_name[r.short_slot[i]];
        out->slots[i].agents_short = r.short_agents[i];
        out->slots[i].min_shortfall = r.short_min[i];
    }
}

SKV_EXTERN int skv_sched_session_reason(skv_sched_reason *out,
                                        const skv_sched *s, const char *id,
                                        skv_error *err)
{
    if (!out || !s)
        return skv__err(err, SKV_EINVAL, "session_reason: NULL argument");
    skv__session *x = skv__sched_session(s, id, NULL, err);
    if (!x)
        return SKV_ENOENT;
    if (x->state != SKV_SCHED_PENDING)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s, not pending", id,
                        skv_sched_state_name(x->state));
    const skv__reason *r = &x->reason;
    memset(out, 0, sizeof(*out));
    out->code = r->code;
    out->resource_group = s->groups[x->group]->name;
    out->evaluated_ms = r->evaluated_ms;
    out->detail = r->detail;
    out->scope = r->scope;
    out->slot = r->code == SKV_SCHED_REASON_QUOTA ? s->slot_name[r->slot] : NULL;
    out->shortfall = r->shortfall;
    out->agents_candidate = r->agents_candidate;
    out->n_slots = r->nshort;
    for (int i = 0; i < r->nshort; i++) {
        out->slots[i].slot = s->slot_name[r->short_slot[i]];
        out->slots[i].agents_short = r->short_agents[i];
        out->slots[i].min_shortfall = r->short_min[i];
    }
    out->reserved_at_ms = r->reserved_at;
    if (r->deferred)
        deferred_fill(out, s, x);
    return 0;
}

static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
    SKV_PRINTF(4, 5);
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len += (size_t)w;
}

static void fmt_qty(char *b, const skv_sched_reason *r, const char *slot,
                    skv_qty q)
{
    /* kind is unknown here: bytes for mem-like names, count otherwise */
    size_t n = strlen(slot);
    bool bytes = strcmp(slot, "mem") == 0 ||
                 (n > 4 && strcmp(slot + n - 4, ".mem") == 0);
    (void)r;
    if (skv_qty_format(b, SKV_QTY_FORMAT_MAX, q,
                       bytes ? SKV_SLOT_BYTES : SKV_SLOT_COUNT) < 0)
        snprintf(b, SKV_QTY_FORMAT_MAX, "%lld", (long long)q);
}

static void fmt_body(char *buf, size_t n, size_t *len, const skv_sched_reason *r)
{
    char q[SKV_QTY_FORMAT_MAX];
    const char *d = r->detail ? r->detail : "";
    switch (r->code) {
    case SKV_SCHED_REASON_QUOTA:
        fmt_qty(q, r, r->slot ? r->slot : "", r->shortfall);
        append(buf, n, len, ": %s '%s' limit on %s exceeded by %s",
               skv__sched_scope_name(r->scope), d, r->slot ? r->slot : "?", q);
        break;
    case SKV_SCHED_REASON_CONCURRENCY:
        append(buf, n, len, ": %s '%s' runs its maximum of sessions",
               skv__sched_scope_name(r->scope), d);
        break;
    case SKV_SCHED_REASON_HAS_RESERVATION:
        if (r->reserved_at_ms >= 0)
            append(buf, n, len, ": holds a reservation from t=%lld ms",
                   (long long)r->reserved_at_ms);
        else
            append(buf, n, len, ": holds a reservation (start unknown)");
        /* fall through - what is short now */
    case SKV_SCHED_REASON_RESOURCES:
        for (size_t i = 0; i < r->n_slots; i++) {
            fmt_qty(q, r, r->slots[i].slot, r->slots[i].min_shortfall);
            append(buf, n, len, "%s %s short on %u of %u candidate agents (by >= %s)",
                   i ? ";" : ":", r->slots[i].slot, r->slots[i].agents_short,
                   r->agents_candidate, q);
        }
        if (r->n_slots == 0 && r->code == SKV_SCHED_REASON_RESOURCES)
            append(buf, n, len, ": no candidate agent accepted it (%u candidates)",
                   r->agents_candidate);
        break;
    default:
        if (*d)
            append(buf, n, len, ": '%s'", d);
        break;
    }
}

SKV_EXTERN int skv_sched_reason_format(char **out, const skv_sched_reason *r,
                                       skv_error *err)
{
    if (!out || !r)
        return skv__err(err, SKV_EINVAL, "reason_format: NULL argument");
    char buf[2048];
    size_t len = 0;
    append(buf, sizeof(buf), &len, "%s in group '%s'",
           skv_sched_reason_name(r->code),
           r->resource_group ? r->resource_group : "?");
    fmt_body(buf, sizeof(buf), &len, r);
    char *c = skv__strdup(buf);
    if (!c)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *out = c;
    return 0;
}
