/* Requeued sessions whose kernels are still being destroyed. A preempted
 * (or otherwise requeued) session is PENDING in the store at once, but the
 * scheduler keeps its capacity until every kernel.destroy sent for it was
 * answered (or its connection closed): an agent refuses a kernel.create
 * for devices its old container still holds, so the session that
 * preempted it must not be placed there before they are free. While a
 * session drains, the scheduler shows its preemptor as waiting for its
 * victims (reason "preempting") and never preempts it twice.
 *
 * The victims of one preemptor go back together (same key): released one
 * by one, the first one's freed GPU would not yet fit the preemptor, and
 * the next pass would place that victim there again, evict it again, and
 * so on. Together, the preemptor (higher priority) comes first.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

struct skv__mgr_drain {
    char sid[SKV__MGR_ID_MAX];
    char key[SKV__MGR_ID_MAX];  /* the preemptor, else the session itself */
    char **kids;            /* kernels a destroy was sent for */
    size_t n_kids;
};

static bool destroy_pending(const skv_manager *m, const char *kid)
{
    for (size_t i = 0; i < m->n_reqs; i++)
        if (m->reqs[i].kind == SKV__REQ_DESTROY &&
            strcmp(m->reqs[i].kernel_id, kid) == 0)
            return true;
    return false;
}

static bool drained(const skv_manager *m, const skv__mgr_drain *d)
{
    for (size_t i = 0; i < d->n_kids; i++)
        if (destroy_pending(m, d->kids[i]))
            return false;
    return true;
}

/* Some session of key still has a destroy outstanding. */
static bool key_waits(const skv_manager *m, const char *key)
{
    for (size_t i = 0; i < m->n_drains; i++)
        if (!strcmp(m->drains[i].key, key) && !drained(m, &m->drains[i]))
            return true;
    return false;
}

static void requeue(skv_manager *m, const char *sid, int64_t now_ms)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_sched_requeue(m->sched, sid, now_ms, &e);
    if (rc && rc != SKV_ENOENT)     /* ENOENT: cancelled meanwhile */
        skv__log(SKV_LOG_WARN, "manager", "requeue %s: %s", sid, e.message);
    m->dirty = true;
}

/* Takes kids (freed here whatever happens); requeues at once when nothing
 * is left to wait for or memory runs out. */
void skv__mgr_drain_add(skv_manager *m, const char *sid, const char *key,
                        char **kids, size_t n, int64_t now_ms)
{
    skv__mgr_drain *v = NULL;
    skv__mgr_drain probe = {.kids = kids, .n_kids = n};
    if (!drained(m, &probe) || (key && key_waits(m, key)))
        v = skv__reallocarray(m->drains, m->n_drains + 1, sizeof *v);
    if (!v) {
        skv__mgr_ids_free(kids, n);
        requeue(m, sid, now_ms);
        return;
    }
    m->drains = v;
    v = &v[m->n_drains++];
    snprintf(v->sid, sizeof v->sid, "%s", sid);
    snprintf(v->key, sizeof v->key, "%s", key ? key : sid);
    v->kids = kids;
    v->n_kids = n;
}

/* From the tick: sessions whose destroys all came back go back to the
 * scheduler's queue. */
void skv__mgr_drain_check(skv_manager *m, int64_t now_ms)
{
    size_t i = 0;
    while (i < m->n_drains) {
        skv__mgr_drain d = m->drains[i];
        if (key_waits(m, d.key)) {
            i++;
            continue;
        }
        m->drains[i] = m->drains[--m->n_drains];
        skv__mgr_ids_free(d.kids, d.n_kids);
        requeue(m, d.sid, now_ms);
    }
}

void skv__mgr_drain_free(skv_manager *m)
{
    for (size_t i = 0; i < m->n_drains; i++)
        skv__mgr_ids_free(m->drains[i].kids, m->drains[i].n_kids);
    skv__free(m->drains);
    m->drains = NULL;
    m->n_drains = 0;
}
