/* From a session.submit body to the scheduler's session spec. The same
 * mapping serves a new submission and a restart (the body is stored as it
 * came), so a re-queued session is exactly what was acknowledged.
 * Kernels: kernels[] lists them (kernel 0 is the main one); a single entry
 * with cluster_size N > 1 stands for N identical kernels.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int map_type(skv_sched_session_type *out, const char *t,
                    skv_error *err)
{
    if (!t || !strcmp(t, "batch"))
        *out = SKV_SCHED_BATCH;
    else if (!strcmp(t, "interactive"))
        *out = SKV_SCHED_INTERACTIVE;
    else if (!strcmp(t, "inference"))
        *out = SKV_SCHED_INFERENCE;
    else
        return skv__err(err, SKV_EINVAL, "session_type '%s': expected "
                        "interactive, batch or inference", t);
    return 0;
}

static int map_mode(skv_sched_cluster_mode *out, const char *mode,
                    skv_error *err)
{
    if (!mode || !strcmp(mode, "single-node"))
        *out = SKV_SCHED_SINGLE_NODE;
    else if (!strcmp(mode, "multi-node"))
        *out = SKV_SCHED_MULTI_NODE;
    else
        return skv__err(err, SKV_EINVAL, "cluster_mode '%s': expected "
                        "single-node or multi-node", mode);
    return 0;
}

static int kernel_count(size_t *out, const skv_proto_session_submit *s,
                        skv_error *err)
{
    if (s->n_kernels == 0)
        return skv__err(err, SKV_EINVAL, "kernels: at least one kernel with "
                        "its slots is required");
    size_t n = s->cluster_size ? s->cluster_size : s->n_kernels;
    if (s->n_kernels > 1 && n != s->n_kernels)
        return skv__err(err, SKV_EINVAL, "cluster_size %u does not match the "
                        "%zu kernels listed", s->cluster_size, s->n_kernels);
    if (n > 1024)
        return skv__err(err, SKV_ERANGE, "cluster_size %zu above 1024", n);
    *out = n;
    return 0;
}

static int map_kernels(skv__mgr_spec *x, const skv_proto_session_submit *s,
                       size_t n, skv_error *err)
{
    x->kernels = skv__calloc(n, sizeof *x->kernels);
    if (!x->kernels)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const skv_proto_kernel_spec *k = &s->kernels[s->n_kernels > 1 ? i : 0];
        const char *want = i == 0 ? "main" : "sub";
        if (s->n_kernels > 1 && k->role && strcmp(k->role, want))
            return skv__err(err, SKV_EINVAL, "kernels[%zu].role '%s': kernel "
                            "0 is the main kernel, the others are sub", i,
                            k->role);
        if (!k->slots || skv_slots_is_zero(k->slots))
            return skv__err(err, SKV_EINVAL, "kernels[%zu].slots: a kernel "
                            "must request some resources", i);
        x->kernels[i].role = i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN;
        x->kernels[i].request = k->slots;
    }
    x->spec.n_kernels = n;
    x->spec.kernels = x->kernels;
    return 0;
}

static int map_constraints(skv__mgr_spec *x, const skv_proto_session_submit *s,
                           skv_error *err)
{
    x->designated = skv__calloc(s->n_constraints + 1, sizeof *x->designated);
    x->models = skv__calloc(s->n_constraints + 1, sizeof *x->models);
    x->labels = skv__calloc(s->n_constraints + 1, sizeof *x->labels);
    if (!x->designated || !x->models || !x->labels)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_constraints; i++) {
        const skv_proto_kv *kv = &s->constraints[i];
        if (!kv->key || !kv->value)
            return skv__err(err, SKV_EINVAL, "constraints[%zu]: key and value "
                            "are required", i);
        if (!strcmp(kv->key, "architecture"))
            x->spec.architecture = kv->value;
        else if (!strcmp(kv->key, "agent"))
            x->designated[x->spec.n_designated++] = kv->value;
        else if (!strcmp(kv->key, "gpu_model"))
            x->models[x->spec.n_gpu_models++] = kv->value;
        else if (!strncmp(kv->key, "label.", 6) && kv->key[6])
            x->labels[x->spec.n_label_constraints++] =
                (skv_sched_label){kv->key + 6, kv->value};
        else
            return skv__err(err, SKV_EINVAL, "constraint '%s' is not "
                            "supported (architecture, agent, gpu_model, "
                            "label.KEY)", kv->key);
    }
    x->spec.designated_agents = x->designated;
    x->spec.gpu_models = x->models;
    x->spec.label_constraints = x->labels;
    x->deps = skv__calloc(s->n_dependencies + 1, sizeof *x->deps);
    if (!x->deps)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_dependencies; i++)
        x->deps[i] = s->dependencies[i];
    x->spec.n_depends = s->n_dependencies;
    x->spec.depends_on = x->deps;
    return 0;
}

int skv__mgr_spec_build(skv__mgr_spec *x, const skv_proto_session_submit *s,
                        const char *sid, const char *domain,
                        const char *project, const char *user, skv_error *err)
{
    memset(x, 0, sizeof *x);
    skv_sched_session_spec init = SKV_SCHED_SESSION_SPEC_INIT;
    x->spec = init;
    x->spec.id = sid;
    x->spec.domain = domain;
    x->spec.project = project;
    x->spec.user = user;
    x->spec.resource_group = s->resource_group;
    x->spec.priority = s->priority;
    x->spec.estimated_duration_ms = (int64_t)s->estimated_duration_ms;
    x->spec.not_before_ms = s->not_before_ms;
    x->spec.preemptible = s->preemptible != 0;
    size_t n = 0;
    int rc = map_type(&x->spec.type, s->session_type, err);
    if (!rc)
        rc = map_mode(&x->spec.cluster_mode, s->cluster_mode, err);
    if (!rc)
        rc = kernel_count(&n, s, err);
    if (!rc)
        rc = map_kernels(x, s, n, err);
    if (!rc)
        rc = map_constraints(x, s, err);
    if (rc)
        skv__mgr_spec_free(x);
    return rc;
}

void skv__mgr_spec_free(skv__mgr_spec *x)
{
    skv__free(x->kernels);
    skv__free(x->deps);
    skv__free(x->designated);
    skv__free(x->models);
    skv__free(x->labels);
    memset(x, 0, sizeof *x);
}

/* The stored submit body of sid and its resolved owners. */
int skv__mgr_load_submit(skv_manager *m, const char *sid,
                         skv_proto_session_submit *out, char *domain,
                         char *project, char *owner, skv_error *err)
{
    return skv__mgr_store_session_submit(m->store, sid, out, domain, project,
                                         owner, err);
}
