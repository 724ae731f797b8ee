/* Running sessions past a limit (mgr_idle.h): the maximum lifetime (the
 * session's own --max-lifetime, its resource group's max_lifetime, its
 * owner's resource policy's; the shortest wins) or the idle timeout (its
 * group's or its owner's policy's idle_timeout; the shortest). Each is
 * decided here, once a second, from the store's rows and what mgr_idle.c
 * saw; the session is then stopped like a terminate request, the reason
 * saying which limit and how long, which show prints and the history
 * keeps. Limits are looked up once per group / owner per sweep.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_idle.h"

/* A limit and who set it ("resource group 'g'"). */
typedef struct limit {
    uint64_t ms;
    char by[160];
} limit;

/* The limits of one group or one owner, looked up once per sweep. */
typedef struct lookup {
    char name[SKV__MGR_ID_MAX];
    limit life, idle;
} lookup;

typedef struct cache {
    lookup *v;
    size_t n;
} cache;

static void group_limits(skv_manager *m, const char *g, lookup *l)
{
    skv__mgr_group_info gi;
    if (skv__mgr_admin_group(&m->admin, &gi, g, NULL))
        return;
    l->life.ms = gi.max_lifetime_ms;
    l->idle.ms = gi.idle_timeout_ms;
    snprintf(l->life.by, sizeof l->life.by, "resource group '%s'", g);
    snprintf(l->idle.by, sizeof l->idle.by, "resource group '%s'", g);
}

static void owner_limits(skv_manager *m, const char *owner, lookup *l)
{
    skv__mgr_user_limits u;
    if (skv__mgr_admin_user_limits(&m->admin, &u, owner, NULL) || !u.policy[0])
        return;
    l->life.ms = u.max_session_lifetime_ms;
    l->idle.ms = u.idle_timeout_ms;
    snprintf(l->life.by, sizeof l->life.by, "resource policy '%s'",
             u.policy);
    snprintf(l->idle.by, sizeof l->idle.by, "resource policy '%s'",
             u.policy);
}

typedef void (*lookup_fn)(skv_manager *m, const char *name, lookup *l);

/* The limits of name; none (zeros) when they cannot be looked up. */
static lookup cached(skv_manager *m, cache *c, const char *name,
                     lookup_fn fn)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].name, name))
            return c->v[i];
    lookup l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", name);
    if (name[0])
        fn(m, name, &l);
    lookup *v = skv__reallocarray(c->v, c->n + 1, sizeof *v);
    if (v) {
        c->v = v;
        v[c->n++] = l;
    }
    return l;
}

/* The smaller of two limits where 0 means none. */
static const limit *tighter(const limit *a, const limit *b)
{
    return !a->ms ? b : !b->ms ? a : a->ms <= b->ms ? a : b;
}

/* A decision: which session, why, and which counter it goes to. */
typedef struct verdict {
    char sid[SKV__MGR_ID_MAX];
    char why[400];
    bool idle;
} verdict;

typedef struct verdicts {
    verdict *v;
    size_t n;
} verdicts;

static verdict *add(verdicts *x, const char *sid, bool idle)
{
    verdict *v = skv__reallocarray(x->v, x->n + 1, sizeof *v);
    if (!v)
        return NULL;
    x->v = v;
    v = &v[x->n++];
    snprintf(v->sid, sizeof v->sid, "%s", sid);
    v->idle = idle;
    return v;
}

/* Past the maximum lifetime? The session's own limit keeps the reason
 * run --max-lifetime has always given. */
static bool over_life(const skv__mgr_store_aging *r, const lookup *grp,
                      const lookup *own, int64_t now_ms, verdicts *x)
{
    limit self = {(uint64_t)(r->own_limit_ms > 0 ? r->own_limit_ms : 0),
                  "--max-lifetime"};
    const limit *l = tighter(tighter(&self, &grp->life), &own->life);
    int64_t age = now_ms - r->since_ms;
    if (!l->ms || age < (int64_t)l->ms)
        return false;
    verdict *v = add(x, r->sid, false);
    char d[32];
    skv__mgr_idle_dur(d, sizeof d, l->ms);
    if (v && l == &self)
        snprintf(v->why, sizeof v->why, "its maximum lifetime "
                 "(--max-lifetime %s) reached", d);
    else if (v)
        snprintf(v->why, sizeof v->why, "maximum lifetime reached: running "
                 "for %s (%s max_lifetime)", d, l->by);
    return true;
}

static void over_idle(skv_manager *m, const skv__mgr_store_aging *r,
                      const lookup *grp, const lookup *own, int64_t now_ms,
                      verdicts *x)
{
    int64_t last = skv__mgr_idle_last(m, r->sid, r->since_ms, now_ms);
    const limit *l = tighter(&grp->idle, &own->idle);
    if (!l->ms || now_ms - last < (int64_t)l->ms)
        return;
    verdict *v = add(x, r->sid, true);
    char d[32];
    skv__mgr_idle_dur(d, sizeof d, (uint64_t)(now_ms - last));
    if (v)
        snprintf(v->why, sizeof v->why, "idle for %s (%s idle_timeout: no "
                 "app proxy traffic, no exec and CPU below %u%%)", d, l->by,
                 m->idle_cpu_percent);
}

static void decide(skv_manager *m, int64_t now_ms, verdicts *x)
{
    skv__mgr_store_aging *rows = NULL;
    size_t n = 0;
    cache groups = {0}, owners = {0};
    if (skv__mgr_store_sessions_aging(m->store, true, &rows, &n, NULL))
        return;
    for (size_t i = 0; i < n; i++) {
        const skv__mgr_store_aging *r = &rows[i];
        lookup g = cached(m, &groups, r->group, group_limits);
        lookup o = cached(m, &owners, r->key, owner_limits);
        if (!over_life(r, &g, &o, now_ms, x))
            over_idle(m, r, &g, &o, now_ms, x);
        else   /* still running until stopped: keep what was seen */
            skv__mgr_idle_last(m, r->sid, r->since_ms, now_ms);
    }
    skv__mgr_idle_prune(m);
    skv__free(rows);
    skv__free(groups.v);
    skv__free(owners.v);
}

void skv__mgr_reclaim(skv_manager *m, int64_t now_ms)
{
    verdicts x = {0};
    decide(m, now_ms, &x);
    for (size_t i = 0; i < x.n; i++) {
        const verdict *v = &x.v[i];
        if (skv__mgr_session_stop(m, v->sid, SKV_SESSION_TERMINATED, v->why,
                                  NULL, now_ms, NULL))
            continue;   /* the next sweep tries again */
        skv__log(SKV_LOG_INFO, "manager", "session %s: %s", v->sid, v->why);
        if (v->idle)
            m->st.reclaimed_idle++;
        else
            m->st.reclaimed_lifetime++;
    }
    skv__free(x.v);
}
