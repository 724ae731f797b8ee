/* Rebuilding the scheduler on open: agents come back known but not
 * schedulable; PENDING sessions are queued again with their original
 * submit time (in submit order); placed sessions are re-admitted with their
 * recorded per-device allocations (skv_sched_adopt). A session whose agent
 * is gone follows the lost-agent rules.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

typedef struct adopt_buf {
    skv_sched_adopt_kernel *kernels;
    skv_sched_adopt_share *shares;   /* all kernels' shares */
    char **strs;                     /* owned strings */
    size_t n_kernels, n_shares, n_strs;
} adopt_buf;

static void adopt_free(adopt_buf *b)
{
    skv__mgr_ids_free(b->strs, b->n_strs);
    skv__free(b->kernels);
    skv__free(b->shares);
    memset(b, 0, sizeof *b);
}

static const char *keep(adopt_buf *b, const char *text)
{
    char **v = skv__reallocarray(b->strs, b->n_strs + 1, sizeof *v);
    if (!v)
        return NULL;
    b->strs = v;
    char *s = skv__strdup(text);
    if (s)
        v[b->n_strs++] = s;
    return s;
}

static bool accel_of(const skv__mgr_agent *a, const char *dev)
{
    for (size_t i = 0; a && dev && i < a->n_dev; i++)
        if (!strcmp(a->dev_ids[i], dev))
            return true;
    return false;
}

/* Shares of accelerators; pooled slots come from the kernel's request. */
static int load_shares(skv_manager *m, adopt_buf *b, const char *kid,
                       const skv__mgr_agent *a, skv_error *err)
{
    skv__mgr_store_alloc *rows = NULL;
    size_t n = 0;
    int rc = skv__mgr_store_alloc_of(m->store, kid, &rows, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!accel_of(a, rows[i].device_id))
            continue;
        skv_sched_adopt_share *v = skv__reallocarray(b->shares, b->n_shares + 1,
                                                     sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        b->shares = v;
        v = &v[b->n_shares++];
        v->device_id = keep(b, rows[i].device_id);
        v->slot = keep(b, rows[i].slot);
        v->amount = rows[i].amount;
        v->whole = rows[i].whole;
        if (!v->device_id || !v->slot)
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
    }
    skv__free(rows);
    return rc;
}

/* SKV_ENOENT when a kernel's agent is not known any more. */
static int load_adopt(skv_manager *m, adopt_buf *b, const char *sid,
                      skv_error *err)
{
    skv__mgr_store_host *rows = NULL;
    size_t n = 0;
    int rc = skv__mgr_store_session_hosts(m->store, sid, &rows, &n, err);
    size_t *first = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *aid = rows[i].placed ? rows[i].agent : NULL;
        skv__mgr_agent *a = aid ? skv__mgr_agent_find(m, aid) : NULL;
        if (!a || !a->in_sched) {
            rc = skv__err(err, SKV_ENOENT, "agent '%s' of session %s is gone",
                          aid ? aid : "?", sid);
            break;
        }
        size_t *f = skv__reallocarray(first, b->n_kernels + 1, sizeof *f);
        skv_sched_adopt_kernel *k = skv__reallocarray(
            b->kernels, b->n_kernels + 1, sizeof *k);
        if (f)
            first = f;
        if (k)
            b->kernels = k;
        if (!f || !k) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        first[b->n_kernels] = b->n_shares;
        b->kernels[b->n_kernels].agent_id = a->id;
        rc = load_shares(m, b, rows[i].kid, a, err);
        b->kernels[b->n_kernels].n_shares = b->n_shares - first[b->n_kernels];
        b->n_kernels++;
    }
    skv__free(rows);
    /* shares may have moved while growing: point kernels at them now */
    for (size_t i = 0; !rc && i < b->n_kernels; i++)
        b->kernels[i].shares = b->shares ? b->shares + first[i] : NULL;
    skv__free(first);
    return rc;
}

int skv__mgr_readmit(skv_manager *m, const char *sid, const char *status,
                   int64_t created, int64_t started, skv_error *err)
{
    skv_proto_session_submit s = {0};
    char dom[SKV__MGR_ID_MAX], proj[SKV__MGR_ID_MAX], own[SKV__MGR_ID_MAX];
    int rc = skv__mgr_load_submit(m, sid, &s, dom, proj, own, err);
    skv__mgr_spec x;
    if (rc)
        return rc;
    rc = skv__mgr_spec_build(&x, &s, sid, dom, proj, own, err);
    if (!rc)
        rc = skv__mgr_spec_deps(m, &x, false, err);
    if (!rc && !strcmp(status, "PENDING")) {
        rc = skv_sched_submit(m->sched, &x.spec, created, err);
        if (!rc)
            skv__mgr_deps_note(m, &x);
    } else if (!rc) {
        x.spec.n_depends = 0;   /* placed: its dependencies were met */
        adopt_buf b = {0};
        bool run = !strcmp(status, "RUNNING") || !strcmp(status, "TERMINATING");
        rc = load_adopt(m, &b, sid, err);
        if (!rc)
            rc = skv_sched_adopt(m->sched, &x.spec, b.kernels, b.n_kernels,
                                 run ? SKV_SCHED_RUNNING : SKV_SCHED_SCHEDULED,
                                 created, started ? started : created, err);
        adopt_free(&b);
    }
    skv__mgr_spec_free(&x);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    return rc;
}

/* A placed session that cannot be re-admitted: requeue or fail it in the
 * database (the scheduler never held it). */
static void readmit_failed(skv_manager *m, const char *sid, const char *status,
                           int64_t created, const skv_error *why, int64_t now)
{
    skv__log(SKV_LOG_WARN, "manager", "restore %s (%s): %s", sid, status,
             why->message);
    skv_error e = SKV_ERROR_INIT;
    if (strcmp(status, "PENDING") &&
        skv__mgr_session_requeue(m, sid, why->message, now, &e) == 0 &&
        skv__mgr_readmit(m, sid, "PENDING", created, 0, &e) == 0)
        return;
    skv__mgr_begin(m, NULL);
    if (skv__mgr_session_set(m, sid, SKV_SESSION_ERROR, why->message, now,
                             NULL) == 0)
        skv__mgr_commit(m, NULL);
    else
        skv__mgr_rollback(m);
}

int skv__mgr_restore(skv_manager *m, int64_t now_ms, skv_error *err)
{
    int rc = skv__mgr_agents_restore(m, now_ms, err);
    skv__mgr_store_live *v = NULL;
    size_t n = 0;
    if (!rc)
        rc = skv__mgr_store_sessions_live(m->store, &v, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        skv_error e = SKV_ERROR_INIT;
        if (skv__mgr_readmit(m, v[i].sid, v[i].status, v[i].created_ms,
                             v[i].started_ms, &e))
            readmit_failed(m, v[i].sid, v[i].status, v[i].created_ms, &e,
                           now_ms);
        else   /* a crash may have cut a transition short */
            skv__mgr_session_settle(m, v[i].sid, now_ms, NULL);
    }
    skv__free(v);
    return 0;
}
