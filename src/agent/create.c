/* kernel.create: idempotent per kernel id. Resources are taken (ledger and
 * node placement with the manager's accelerators), the record is written,
 * the container created and started; any failure undoes every step and is
 * answered with an error naming the cause.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

/* Kernel ids become file and container names. */
static int id_check(const char *what, const char *id, skv_error *err)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 128 || id[0] == '.' || id[0] == '-')
        return skv__err(err, SKV_EINVAL, "kernel.create: invalid %s '%s'",
                        what, id ? id : "(none)");
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return skv__err(err, SKV_EINVAL, "kernel.create: invalid %s "
                            "'%s'", what, id);
    }
    return 0;
}

/* The session network joins between create and start, so the command
 * never runs without its interface. */
static int run_container(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    skv_container_spec *spec = NULL;
    int rc = skv__agent_build_spec(&spec, a, k, err);
    if (rc == 0)
        rc = skv_runtime_create(a->rt, spec, err);
    skv_container_spec_free(spec);
    if (rc)
        return rc;
    rc = skv__agent_net_attach(a, k, err);
    if (rc == 0)
        rc = skv_runtime_start(a->rt, k->req.kernel_id, err);
    if (rc)
        skv_runtime_destroy(a->rt, k->req.kernel_id, 0, NULL);
    return rc;
}

/* The record holds the request as resolved (network filled in by the
 * agent), so it is encoded again. */
static int record(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    void *body = NULL;
    size_t len = 0;
    int rc = skv_proto_body_encode(&body, &len, SKV_PROTO_KERNEL_CREATE,
                                   &k->req, err);
    if (rc == 0)
        rc = skv__agent_record_write(a, k, body, len, err);
    skv_free(body);
    return rc;
}

/* Checks, network resolution and the resources; undone on failure. */
static int take_kernel(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    int rc = id_check("session id", k->req.session_id, err);
    if (rc == 0)
        rc = id_check("kernel id", k->req.kernel_id, err);
    if (rc == 0)
        rc = skv__agent_net_resolve(a, k, false, err);
    if (rc == 0)
        rc = skv__agent_kernel_take(a, k, NULL, 0, err);
    if (rc)
        skv__agent_net_release(a, k);
    return rc;
}

static void untake_kernel(skv_agent *a, skv__agent_kernel *k)
{
    skv__agent_kernel_release(a, k);
    skv__agent_net_release(a, k);
}

/* On this thread: record, session network, container (cluster kernels,
 * whose network pieces belong to the agent's thread). */
static int start_kernel(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    int rc = record(a, k, err);
    if (rc == 0 && (rc = skv__agent_net_prepare(a, k, false, err)) != 0)
        skv__agent_record_remove(a, k->req.kernel_id);
    if (rc == 0) {
        rc = run_container(a, k, err);
        if (rc)
            skv__agent_record_remove(a, k->req.kernel_id);
    }
    if (rc == 0 && (rc = skv__agent_kernel_add(a, k, err)) != 0) {
        skv_runtime_destroy(a->rt, k->req.kernel_id, 0, NULL);
        skv__agent_record_remove(a, k->req.kernel_id);
    }
    return rc;
}

/* On a creator thread: the spec and the record are made here, the rest
 * there; finish_job() answers. */
static int queue_kernel(skv_agent *a, skv__agent_kernel *k, uint64_t req,
                        skv_error *err)
{
    skv__agent_job *j = skv__calloc(1, sizeof(*j));
    if (!j)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    void *body = NULL;
    size_t len = 0;
    int rc = skv_proto_body_encode(&body, &len, SKV_PROTO_KERNEL_CREATE,
                                   &k->req, err);
    if (rc == 0)
        rc = skv__agent_record_render(&j->rec, a, k, body, len, err);
    skv_free(body);
    if (rc == 0)
        rc = skv__agent_build_spec(&j->spec, a, k, err);
    j->k = k;
    j->create_req = req;
    if (rc == 0)
        rc = skv__agent_creator_submit(a, j, err);
    if (rc)
        skv__agent_job_free(j); /* k stays the caller's */
    return rc;
}

static int reply(skv_agent *a, uint64_t id, const skv__agent_kernel *k,
                 int64_t now_ms, skv_error *err)
{
    skv_proto_kernel_create_reply r;
    memset(&r, 0, sizeof(r));
    r.kernel_id = r.container_id = k->req.kernel_id;
    r.address = k->address[0] ? (char *)k->address : NULL;
    int rc = skv__agent_net_published(a, k, &r.published, &r.n_published,
                                      err);
    if (rc == 0)
        rc = skv__agent_emit(a, SKV_PROTO_RESPONSE, id,
                             SKV_PROTO_KERNEL_CREATE_REPLY, &r, now_ms, err);
    skv__agent_net_published_free(r.published, r.n_published);
    return rc;
}

static int answer_started(skv_agent *a, uint64_t req, skv__agent_kernel *k,
                          int64_t now_ms, skv_error *err)
{
    int rc = reply(a, req, k, now_ms, err);
    if (rc == 0)
        rc = skv__agent_send_status(a, k, "running", NULL, now_ms, err);
    return rc;
}

static int answer_failed(skv_agent *a, uint64_t req, skv__agent_kernel *k,
                         const skv_error *e, const char *type, int64_t now_ms,
                         skv_error *err)
{
    skv__log(SKV_LOG_WARN, "agent", "kernel %s not started: %s",
             k->req.kernel_id ? k->req.kernel_id : "?", e->message);
    return skv__agent_reply_error(a, req, e->code ? e->code : SKV_EIO,
                                  e->message, type, now_ms) == 0
               ? 0 : skv__err(err, SKV_EIO, "agent: cannot reply");
}

/* A finished background create: the kernel joins the table and the
 * manager hears how it went; a destroy that came meanwhile runs now. */
static void finish_job(skv_agent *a, skv__agent_job *j, int64_t now_ms)
{
    skv__agent_kernel *k = j->k;
    skv_error e = j->err;
    int rc = j->rc;
    if (rc == 0 && (rc = skv__agent_kernel_add(a, k, &e)) != 0) {
        skv_runtime_destroy(a->rt, k->req.kernel_id, 0, NULL);
        skv__agent_record_remove(a, k->req.kernel_id);
    }
    if (rc) {
        untake_kernel(a, k);
        answer_failed(a, j->create_req, k, &e, "kernel.create", now_ms, NULL);
        if (j->destroy_wanted)
            skv__agent_ack(a, j->destroy_req, "kernel not started", now_ms,
                           NULL);
        skv__agent_kernel_free(k);
    } else {
        answer_started(a, j->create_req, k, now_ms, NULL);
        if (j->destroy_wanted)
            skv__agent_destroy_start(a, k, j->destroy_req, j->destroy_grace,
                                     now_ms, NULL);
    }
    skv__agent_job_free(j);
}

void skv__agent_jobs_finish(skv_agent *a, bool wait, int64_t now_ms)
{
    skv__agent_job *j;
    while ((j = skv__agent_creator_take(a, wait)) != NULL)
        finish_job(a, j, now_ms);
}

/* Not yet known here: taken, then created in the background (answered
 * later) or, for cluster kernels, on this thread (answered now). */
static int create_new(skv_agent *a, skv__agent_kernel *k, uint64_t req,
                      const char *type, int64_t now_ms, skv_error *err)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = take_kernel(a, k, &e);
    bool taken = rc == 0;
    bool bg = taken && a->cr && k->net_mode != SKV__AGENT_NET_CLUSTER;
    if (bg && (rc = queue_kernel(a, k, req, &e)) == 0)
        return 0;
    if (taken && !bg)
        rc = start_kernel(a, k, &e);
    if (rc == 0)
        return answer_started(a, req, k, now_ms, err);
    if (taken)
        untake_kernel(a, k);
    rc = answer_failed(a, req, k, &e, type, now_ms, err);
    skv__agent_kernel_free(k);
    return rc;
}

int skv__agent_on_create(skv_agent *a, const skv_proto_envelope *env,
                         int64_t now_ms, skv_error *err)
{
    skv__agent_kernel *k = skv__calloc(1, sizeof(*k));
    if (!k)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_body_decode(&k->req, SKV_PROTO_KERNEL_CREATE,
                                   env->body, env->body_len, &e);
    if (rc) {
        skv__agent_reply_error(a, env->request_id, rc, e.message,
                               env->type_name, now_ms);
        skv__agent_kernel_free(k);
        return skv__err(err, rc, "%s", e.message);
    }
    const skv__agent_kernel *old = skv__agent_kernel_find(a, k->req.kernel_id);
    skv__agent_job *j = old ? NULL : skv__agent_job_find(a, k->req.kernel_id);
    if (old || j)
        skv__agent_kernel_free(k);
    /* The manager asked again (restart, lost reply): same answer; for a
     * create still in flight, the answer goes to the latest request. */
    if (old)
        return reply(a, env->request_id, old, now_ms, err);
    if (j) {
        j->create_req = env->request_id;
        return 0;
    }
    return create_new(a, k, env->request_id, env->type_name, now_ms, err);
}
