/* Sessions: submit and the lifecycle calls.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

static const char *const state_names[] = {
    "pending", "scheduled", "running", "finished", "failed", "cancelled", "lost"};

SKV_EXTERN const char *skv_sched_state_name(skv_sched_state st)
{
    return (unsigned)st < SKV__ARRAY_LEN(state_names) ? state_names[st] : "?";
}

skv__session *skv__sched_session(const skv_sched *s, const char *id,
                                 uint32_t *idx, skv_error *err)
{
    uint32_t i = id ? skv__hmap_get(&s->sess_ix, id) : SKV__NONE;
    if (i == SKV__NONE) {
        skv__err(err, SKV_ENOENT, "no session '%s'", id ? id : "(null)");
        return NULL;
    }
    if (idx)
        *idx = i;
    return s->sess[i];
}

static int strv_copy(char ***out, size_t *nout, const char *const *v,
                     size_t n, const char *what, skv_error *err)
{
    if (n && !v)
        return skv__err(err, SKV_EINVAL, "%s: %zu entries but NULL array", what, n);
    if (!n)
        return 0;
    char **c = skv__calloc(n, sizeof(*c));
    if (!c)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *out = c;
    for (size_t i = 0; i < n; i++) {
        int rc = skv__sched_name_check(what, v[i], err);
        if (rc)
            return rc;
        if (!(c[i] = skv__strdup(v[i])))
            return skv__err(err, SKV_ENOMEM, "out of memory");
        *nout = i + 1;
    }
    return 0;
}

/* Copies of the label constraints (v2 specs). */
static int labels_copy(skv__session *x, const skv_sched_session_spec *sp,
                       skv_error *err)
{
    size_t n = sp->version >= 2 ? sp->n_label_constraints : 0;
    if (n && !sp->label_constraints)
        return skv__err(err, SKV_EINVAL, "label constraints: %zu entries but "
                        "NULL array", n);
    if (!n)
        return 0;
    if (!(x->need_labels = skv__calloc(n, sizeof(*x->need_labels))))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const skv_sched_label *l = &sp->label_constraints[i];
        if (!l->key || !l->value || !l->key[0])
            return skv__err(err, SKV_EINVAL, "label constraint %zu: key and "
                            "value are required", i);
        skv_sched_label *c = &x->need_labels[x->nneed_labels++];
        if (!(c->key = skv__strdup(l->key)) ||
            !(c->value = skv__strdup(l->value)))
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    return 0;
}

static int kernels_build(skv_sched *s, skv__session *x,
                         const skv_sched_session_spec *sp, skv_error *err)
{
    if (sp->n_kernels == 0 || sp->n_kernels > SKV_SCHED_KERNELS_MAX || !sp->kernels)
        return skv__err(err, SKV_EINVAL, "n_kernels %zu: must be 1..%d with a "
                        "kernel array", sp->n_kernels, SKV_SCHED_KERNELS_MAX);
    x->k = skv__calloc(sp->n_kernels, sizeof(*x->k));
    if (!x->k)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    x->nk = (uint32_t)sp->n_kernels;
    uint32_t mains = 0;
    for (uint32_t i = 0; i < x->nk; i++) {
        skv__kernel *k = &x->k[i];
        k->role = sp->kernels[i].role;
        k->a.agent = SKV__NONE;
        if (k->role != SKV_SCHED_ROLE_MAIN && k->role != SKV_SCHED_ROLE_SUB)
            return skv__err(err, SKV_EINVAL, "kernel %u: bad role %d", i, (int)k->role);
        mains += k->role == SKV_SCHED_ROLE_MAIN;
        int rc = skv__sched_dense(s, k->req, sp->kernels[i].request,
                                  "kernel request", err);
        if (rc)
            return rc;
        bool nonzero = false;
        for (int j = 0; j < NSL; j++) {
            if (k->req[j] == SKV_QTY_UNLIMITED || k->req[j] > SKV_QTY_MAX / 4096)
                return skv__err(err, SKV_EINVAL, "kernel %u: slot '%s' request "
                                "is unlimited or too large", i, s->slot_name[j]);
            nonzero |= k->req[j] > 0;
            x->total[j] += k->req[j];
        }
        if (!nonzero)
            return skv__err(err, SKV_EINVAL, "kernel %u: the request is empty", i);
    }
    if (mains != 1)
        return skv__err(err, SKV_EINVAL, "%u main kernels; exactly one is needed",
                        mains);
    return 0;
}

static int spec_scalars(const skv_sched_session_spec *sp, skv_error *err)
{
    if ((unsigned)sp->type > SKV_SCHED_INFERENCE)
        return skv__err(err, SKV_EINVAL, "bad session type %d", (int)sp->type);
    if ((unsigned)sp->cluster_mode > SKV_SCHED_MULTI_NODE)
        return skv__err(err, SKV_EINVAL, "bad cluster mode %d", (int)sp->cluster_mode);
    if (sp->cluster_mode == SKV_SCHED_SINGLE_NODE && sp->one_kernel_per_agent &&
        sp->n_kernels > 1)
        return skv__err(err, SKV_EINVAL, "single-node session with "
                        "one_kernel_per_agent and %zu kernels", sp->n_kernels);
    if (sp->not_before_ms < 0 || sp->estimated_duration_ms < 0)
        return skv__err(err, SKV_EINVAL, "not_before_ms and "
                        "estimated_duration_ms must be >= 0");
    const char *names[3] = {sp->domain, sp->project, sp->user};
    for (int i = 0; i < 3; i++)
        if (names[i] && strlen(names[i]) >= SKV_SCHED_NAME_MAX)
            return skv__err(err, SKV_EINVAL, "owner name too long");
    if (sp->architecture && strlen(sp->architecture) >= SKV_SCHED_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "architecture too long");
    return 0;
}

int skv__sched_session_build(skv__session **out, skv_sched *s,
                             const skv_sched_session_spec *sp, skv_error *err)
{
    uint32_t gi;
    int rc = spec_scalars(sp, err);
    if (rc)
        return rc;
    if (!sp->resource_group || !skv__sched_group(s, sp->resource_group, &gi))
        return skv__err(err, SKV_ENOENT, "no resource group '%s'",
                        sp->resource_group ? sp->resource_group : "(null)");
    skv__session *x = skv__calloc(1, sizeof(*x));
    if (!x)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    x->group = gi;
    x->type = sp->type;
    x->priority = sp->priority;
    x->mode = sp->cluster_mode;
    x->one_per_agent = sp->one_kernel_per_agent && sp->n_kernels > 1;
    x->preemptible = sp->preemptible;
    x->not_before = sp->not_before_ms;
    x->est_dur = sp->estimated_duration_ms;
    x->victim_for = SKV__NONE;
    if (!(x->id = skv__strdup(sp->id)) ||
        (sp->architecture && !(x->arch = skv__strdup(sp->architecture))))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = kernels_build(s, x, sp, err);
    if (!rc)
        rc = strv_copy(&x->models, &x->nmodels, sp->gpu_models, sp->n_gpu_models,
                       "gpu model", err);
    if (!rc)
        rc = strv_copy(&x->designated, &x->ndesignated, sp->designated_agents,
                       sp->n_designated, "designated agent", err);
    if (!rc)
        rc = labels_copy(x, sp, err);
    if (!rc)
        rc = strv_copy(&x->deps, &x->ndeps, sp->depends_on, sp->n_depends,
                       "dependency", err);
    for (size_t i = 0; !rc && i < x->ndeps; i++)
        if (strcmp(x->deps[i], sp->id) == 0)
            rc = skv__err(err, SKV_EINVAL, "depends on itself");
    if (rc) {
        skv__sched_session_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

static int session_owners(skv_sched *s, skv__session *x,
                          const skv_sched_session_spec *sp, skv_error *err)
{
    const char *names[3] = {sp->domain, sp->project, sp->user};
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        int rc = skv__sched_owner(s, &x->owner[sc], (skv_sched_scope)sc,
                                  names[sc] ? names[sc] : "", err);
        if (rc)
            return rc;
        const skv__owner *o = s->owners[x->owner[sc]];
        if (o->max_pending && o->n_pending >= o->max_pending)
            return skv__err(err, SKV_ENOSPC, "%s '%s' already has %u pending "
                            "sessions (max_pending %u)",
                            skv__sched_scope_name((skv_sched_scope)sc), o->name,
                            o->n_pending, o->max_pending);
    }
    return skv__sched_session_gq(s, x, err);
}

int skv__sched_session_link(skv_sched *s, skv__session *x, uint32_t *out,
                            skv_error *err)
{
    uint32_t si = 0;
    if (s->nsess_free) {
        si = s->sess_free[s->nsess_free - 1];
    } else {
        int rc = skv__sched_table_room((void **)&s->sess, &s->sess_free,
                                       s->nsess_tab, &s->sess_cap,
                                       sizeof(*s->sess), err);
        if (rc)
            return rc;
        s->sess[s->nsess_tab] = NULL;
        s->sess_free[s->nsess_free++] = s->nsess_tab++;
        si = s->sess_free[s->nsess_free - 1];
    }
    skv__group *g = s->groups[x->group];
    if (g->npending == g->pending_cap) {
        uint32_t nc = g->pending_cap ? g->pending_cap * 2 : 64;
        uint32_t *np = skv__reallocarray(g->pending, nc, sizeof(*np));
        if (!np)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        g->pending = np;
        g->pending_cap = nc;
    }
    int rc = skv__hmap_put(&s->sess_ix, x->id, si, err);
    if (rc)
        return rc;
    s->nsess_free--;
    s->sess[si] = x;
    *out = si;
    return 0;
}

SKV_EXTERN int skv_sched_submit(skv_sched *s,
                                const skv_sched_session_spec *sp,
                                int64_t now_ms, skv_error *err)
{
    if (!s || !sp)
        return skv__err(err, SKV_EINVAL, "submit: NULL argument");
    if (sp->version < 1 || sp->version > SKV_SCHED_SESSION_SPEC_VERSION)
        return skv__err(err, SKV_EVERSION, "session spec version %u, expected "
                        "1..%u", sp->version, SKV_SCHED_SESSION_SPEC_VERSION);
    int rc = skv__sched_name_check("session id", sp->id, err);
    if (rc)
        return rc;
    if (skv__hmap_get(&s->sess_ix, sp->id) != SKV__NONE)
        return skv__err(err, SKV_EEXIST, "session '%s' already exists", sp->id);
    uint8_t n0 = s->nslots;
    skv__session *x = NULL;
    uint32_t si = 0;
    rc = skv__sched_session_build(&x, s, sp, err);
    if (!rc)
        rc = session_owners(s, x, sp, err);
    if (!rc)
        rc = skv__sched_session_link(s, x, &si, err);
    if (rc) {
        skv__sched_session_free(x);
        while (s->nslots > n0)
            skv__free(s->slot_name[--s->nslots]);
        skv__err_prefix(err, "session '%s'", sp->id);
        return rc;
    }
    x->submitted = now_ms;
    x->seq = s->next_seq++;
    x->state = SKV_SCHED_PENDING;
    s->groups[x->group]->nlive++;
    skv__sched_pending_add(s, si);
    return 0;
}

static int lookup_live(skv__session **out, const skv_sched *s,
                       const char *id, uint32_t *si, const char *op,
                       skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "%s: scheduler is NULL", op);
    *out = skv__sched_session(s, id, si, err);
    return *out ? 0 : SKV_ENOENT;
}

/* End a session that holds resources or is pending. */
static void session_end(skv_sched *s, uint32_t si, skv_sched_state st,
                        int64_t now)
{
    skv__session *x = s->sess[si];
    if (x->state == SKV_SCHED_PENDING) {
        skv__sched_pending_del(s, si);
    } else {
        skv__sched_release(s, si, now);
        skv__sched_victim_gone(s, x);
    }
    x->state = st;
    s->groups[x->group]->nlive--;
}

SKV_EXTERN int skv_sched_cancel(skv_sched *s, const char *id, int64_t now_ms,
                                skv_error *err)
{
    uint32_t si = 0;
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, &si, "cancel", err);
    if (rc)
        return rc;
    if (x->state > SKV_SCHED_RUNNING)
        return skv__err(err, SKV_ESTATE, "session '%s' is already %s", id,
                        skv_sched_state_name(x->state));
    session_end(s, si, SKV_SCHED_CANCELLED, now_ms);
    return 0;
}

SKV_EXTERN int skv_sched_mark_started(skv_sched *s, const char *id,
                                      int64_t now_ms, skv_error *err)
{
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, NULL, "mark_started", err);
    if (rc)
        return rc;
    if (x->state != SKV_SCHED_SCHEDULED)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s, not scheduled", id,
                        skv_sched_state_name(x->state));
    x->state = SKV_SCHED_RUNNING;
    x->started = now_ms;
    return 0;
}

SKV_EXTERN int skv_sched_mark_finished(skv_sched *s, const char *id,
                                       bool failed, int64_t now_ms,
                                       skv_error *err)
{
    uint32_t si = 0;
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, &si, "mark_finished", err);
    if (rc)
        return rc;
    if (x->state != SKV_SCHED_SCHEDULED && x->state != SKV_SCHED_RUNNING)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s, not scheduled or "
                        "running", id, skv_sched_state_name(x->state));
    session_end(s, si, failed ? SKV_SCHED_FAILED : SKV_SCHED_FINISHED, now_ms);
    return 0;
}

SKV_EXTERN int skv_sched_requeue(skv_sched *s, const char *id, int64_t now_ms,
                                 skv_error *err)
{
    uint32_t si = 0;
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, &si, "requeue", err);
    if (rc)
        return rc;
    if (x->state != SKV_SCHED_SCHEDULED && x->state != SKV_SCHED_RUNNING)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s, not scheduled or "
                        "running", id, skv_sched_state_name(x->state));
    skv__group *g = s->groups[x->group];
    if (g->npending == g->pending_cap) {
        uint32_t nc = g->pending_cap ? g->pending_cap * 2 : 64;
        uint32_t *np = skv__reallocarray(g->pending, nc, sizeof(*np));
        if (!np)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        g->pending = np;
        g->pending_cap = nc;
    }
    skv__sched_release(s, si, now_ms);
    skv__sched_victim_gone(s, x);
    x->state = SKV_SCHED_PENDING;
    skv__sched_reason_reset(&x->reason);
    skv__sched_pending_add(s, si);
    return 0;
}

SKV_EXTERN int skv_sched_session_remove(skv_sched *s, const char *id,
                                        skv_error *err)
{
    uint32_t si = 0;
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, &si, "session_remove", err);
    if (rc)
        return rc;
    if (x->state <= SKV_SCHED_RUNNING)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s; only ended "
                        "sessions can be removed", id,
                        skv_sched_state_name(x->state));
    skv__hmap_del(&s->sess_ix, x->id);
    s->sess[si] = NULL;
    s->sess_free[s->nsess_free++] = si;
    skv__sched_session_free(x);
    return 0;
}

SKV_EXTERN int skv_sched_session_state(skv_sched_state *out,
                                       const skv_sched *s, const char *id,
                                       skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "session_state: out is NULL");
    skv__session *x = NULL;
    int rc = lookup_live(&x, s, id, NULL, "session_state", err);
    if (rc)
        return rc;
    *out = x->state;
    return 0;
}
