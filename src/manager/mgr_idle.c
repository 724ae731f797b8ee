/* What the manager last saw of running sessions' activity (mgr_idle.h):
 * two arrays sorted by id (session, kernel) with binary search, as the
 * proxy's and agents' reports and the once-a-second sweep look ids up
 * far more often than sessions come and go.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_exec.h"
#include "mgr_idle.h"

typedef struct seen {            /* a session */
    char id[SKV__MGR_ID_MAX];
    int64_t last_ms;             /* last reported active */
    bool alive;                  /* _last saw it since the last _prune */
} seen;

typedef struct cpu {             /* a kernel */
    char id[SKV__MGR_ID_MAX];
    char sid[SKV__MGR_ID_MAX];
    uint64_t usec;               /* cumulative CPU at at_ms */
    int64_t at_ms;
} cpu;

typedef struct vec {
    void *v;
    size_t n, cap, size;
} vec;

struct skv__mgr_idle {
    int64_t born_ms;             /* the first report or sweep */
    vec seen, cpu;
};

/* The index of id, or where it would go (*found false). Records start
 * with their id. */
static size_t lower(const vec *v, const char *id, bool *found)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp((const char *)v->v + mid * v->size, id);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < v->n && !strcmp((const char *)v->v + lo * v->size, id);
    return lo;
}

/* The record of id, added (zeroed, id set) when missing; NULL: out of
 * memory or an id too long to be one of ours. */
static void *get(vec *v, const char *id, bool add)
{
    bool found;
    size_t i = lower(v, id, &found);
    if (found || !add)
        return found ? (char *)v->v + i * v->size : NULL;
    if (strlen(id) >= SKV__MGR_ID_MAX)
        return NULL;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *nv = skv__reallocarray(v->v, cap, v->size);
        if (!nv)
            return NULL;
        v->v = nv;
        v->cap = cap;
    }
    char *at = (char *)v->v + i * v->size;
    memmove(at + v->size, at, (v->n - i) * v->size);
    memset(at, 0, v->size);
    memcpy(at, id, strlen(id) + 1);
    v->n++;
    return at;
}

static struct skv__mgr_idle *state(skv_manager *m, int64_t now_ms)
{
    if (!m->idle && (m->idle = skv__calloc(1, sizeof *m->idle))) {
        m->idle->born_ms = now_ms;
        m->idle->seen.size = sizeof(seen);
        m->idle->cpu.size = sizeof(cpu);
    }
    return m->idle;
}

void skv__mgr_idle_touch(skv_manager *m, const char *sid, int64_t now_ms)
{
    struct skv__mgr_idle *x = state(m, now_ms);
    seen *s = x ? get(&x->seen, sid, true) : NULL;
    if (s && now_ms > s->last_ms)
        s->last_ms = now_ms;
}

void skv__mgr_idle_cpu(skv_manager *m, const char *sid, const char *kid,
                       uint64_t cpu_usec, int64_t now_ms)
{
    struct skv__mgr_idle *x = state(m, now_ms);
    cpu *k = x && sid ? get(&x->cpu, kid, true) : NULL;
    if (!k)
        return;
    bool had = k->at_ms > 0 && !strcmp(k->sid, sid);
    /* percent of one CPU over dt: usec / (dt_ms * 1000) * 100 */
    if (had && now_ms > k->at_ms && cpu_usec >= k->usec &&
        (cpu_usec - k->usec) * 100 >=
            (uint64_t)m->idle_cpu_percent * (uint64_t)(now_ms - k->at_ms) *
                1000)
        skv__mgr_idle_touch(m, sid, now_ms);
    snprintf(k->sid, sizeof k->sid, "%s", sid);
    k->usec = cpu_usec;
    k->at_ms = now_ms;
}

int64_t skv__mgr_idle_last(skv_manager *m, const char *sid, int64_t since_ms,
                           int64_t now_ms)
{
    struct skv__mgr_idle *x = state(m, now_ms);
    if (!x || skv__mgr_exec_count_session(m, sid) > 0)
        return now_ms;   /* out of memory: never reclaim for idleness */
    seen *s = get(&x->seen, sid, true);
    if (!s)
        return now_ms;
    s->alive = true;
    int64_t last = since_ms > x->born_ms ? since_ms : x->born_ms;
    return s->last_ms > last ? s->last_ms : last;
}

void skv__mgr_idle_prune(skv_manager *m)
{
    struct skv__mgr_idle *x = m->idle;
    if (!x)
        return;
    seen *s = x->seen.v;
    size_t n = 0;
    for (size_t i = 0; i < x->seen.n; i++)
        if (s[i].alive) {
            s[i].alive = false;
            s[n++] = s[i];
        }
    x->seen.n = n;
    cpu *k = x->cpu.v;
    n = 0;
    for (size_t i = 0; i < x->cpu.n; i++) {
        bool found;
        lower(&x->seen, k[i].sid, &found);
        if (found)
            k[n++] = k[i];
    }
    x->cpu.n = n;
}

void skv__mgr_idle_free(skv_manager *m)
{
    if (!m->idle)
        return;
    skv__free(m->idle->seen.v);
    skv__free(m->idle->cpu.v);
    skv__free(m->idle);
    m->idle = NULL;
}

void skv__mgr_idle_dur(char *buf, size_t cap, uint64_t ms)
{
    uint64_t s = ms / 1000, h = s / 3600, mi = s / 60 % 60;
    if (h)
        snprintf(buf, cap, "%lluh%llum%llus", (unsigned long long)h,
                 (unsigned long long)mi, (unsigned long long)(s % 60));
    else if (mi)
        snprintf(buf, cap, "%llum%llus", (unsigned long long)mi,
                 (unsigned long long)(s % 60));
    else
        snprintf(buf, cap, "%llus", (unsigned long long)s);
}
