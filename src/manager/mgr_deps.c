/* Dependencies against the database, so the scheduler need not remember
 * every ended session: a dependency that already ended well (TERMINATED,
 * exit code 0) is dropped from the spec; one that ended otherwise refuses a
 * new submission (at a restart the session stays blocked, with the
 * scheduler's "dependency unknown" reason). Ended sessions leave the
 * scheduler once no pending session names them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

/* 1: ended well, 0: live, negative: error (ended badly or unknown). */
static int dep_state(skv_manager *m, const char *id, skv_error *err)
{
    char s[32];
    int code = 0;
    int rc = skv__mgr_store_session_result(m->store, id, s, sizeof s, &code,
                                           err);
    if (rc == SKV_ENOENT)
        return skv__err(err, SKV_ENOENT, "dependency '%s': no such session",
                        id);
    if (rc)
        return rc;
    if (!strcmp(s, "TERMINATED") && code == 0)
        rc = 1;
    else if (!strcmp(s, "TERMINATED") || !strcmp(s, "CANCELLED") ||
             !strcmp(s, "ERROR"))
        rc = skv__err(err, SKV_EINVAL, "dependency '%s' ended %s (exit "
                      "code %d)", id, s, code);
    return rc;
}

int skv__mgr_spec_deps(skv_manager *m, skv__mgr_spec *x, bool strict,
                       skv_error *err)
{
    size_t keep = 0;
    for (size_t i = 0; i < x->spec.n_depends; i++) {
        skv_error e = SKV_ERROR_INIT;
        int rc = dep_state(m, x->deps[i], &e);
        if (rc < 0 && strict) {
            if (err)
                *err = e;
            return rc;
        }
        if (rc != 1)
            x->deps[keep++] = x->deps[i];
    }
    x->spec.n_depends = keep;
    return 0;
}

/* The sessions handed to the scheduler with dependencies, with the ids
 * they depend on (as the scheduler holds them: those that had already
 * ended well are not among them). An entry is dropped once the scheduler
 * no longer holds its session live (pending, scheduled or running),
 * which is checked when asked, so the scheduler's removals and cancels
 * need no hook here; restore and readmission note what they hand over
 * (mgr_restore.c), as the submit path does (mgr_submit.c). */
typedef struct skv__mgr_dependent {
    char *sid;
    char **deps;
    size_t n;
} skv__mgr_dependent;

static void dependent_free(skv__mgr_dependent *d)
{
    skv__mgr_ids_free(d->deps, d->n);
    skv__free(d->sid);
}

static int dependent_fill(skv__mgr_dependent *d, const skv__mgr_spec *x)
{
    d->n = 0;
    d->sid = skv__strdup(x->spec.id);
    d->deps = skv__calloc(x->spec.n_depends, sizeof *d->deps);
    for (size_t i = 0; d->sid && d->deps && i < x->spec.n_depends; i++) {
        if (!(d->deps[i] = skv__strdup(x->spec.depends_on[i])))
            break;
        d->n++;
    }
    if (d->sid && d->deps && d->n == x->spec.n_depends)
        return 0;
    dependent_free(d);
    return SKV_ENOMEM;
}

void skv__mgr_deps_note(skv_manager *m, const skv__mgr_spec *x)
{
    if (!x->spec.n_depends || m->deps.unsure)
        return;
    skv__mgr_dependent *v = m->deps.v;
    if (m->deps.n == m->deps.cap) {
        size_t cap = m->deps.cap ? 2 * m->deps.cap : 16;
        v = skv__reallocarray(m->deps.v, cap, sizeof *v);
        if (v) {
            m->deps.v = v;
            m->deps.cap = cap;
        }
    }
    if (!v || dependent_fill(&m->deps.v[m->deps.n], x))
        m->deps.unsure = true;
    else
        m->deps.n++;
}

void skv__mgr_deps_free(skv_manager *m)
{
    for (size_t i = 0; i < m->deps.n; i++)
        dependent_free(&m->deps.v[i]);
    skv__free(m->deps.v);
    m->deps.v = NULL;
    m->deps.n = m->deps.cap = 0;
}

static bool live(skv_manager *m, const char *sid)
{
    skv_sched_state s;
    return skv_sched_session_state(&s, m->sched, sid, NULL) == 0 &&
           s <= SKV_SCHED_RUNNING;
}

static bool names(const skv__mgr_dependent *d, const char *sid)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->deps[i], sid))
            return true;
    return false;
}

/* Whether a live session of the scheduler depends on sid; the entries of
 * sessions it no longer holds live go. */
static bool needed(skv_manager *m, const char *sid)
{
    bool found = false;
    size_t keep = 0;
    for (size_t i = 0; i < m->deps.n; i++) {
        skv__mgr_dependent d = m->deps.v[i];
        if (!live(m, d.sid)) {
            dependent_free(&d);
            continue;
        }
        found = found || names(&d, sid);
        m->deps.v[keep++] = d;
    }
    m->deps.n = keep;
    return found;
}

/* Forget an ended session in the scheduler unless a live session may
 * still name it as a dependency: a requeued dependant is judged again by
 * the scheduler, which must still know how sid ended. Answered from
 * memory (no session with dependencies: nothing to look at); after an
 * allocation failure, from the pending specs in the database. */
void skv__mgr_sched_forget(skv_manager *m, const char *sid)
{
    bool keep = m->deps.unsure ? skv__mgr_store_pending_mentions(m->store, sid)
                               : needed(m, sid);
    if (!keep)
        skv_sched_session_remove(m->sched, sid, NULL);
}
