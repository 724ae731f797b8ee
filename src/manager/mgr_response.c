/* Responses from agents to the manager's requests: kernel.create replies
 * (the kernel runs, or failed to start: the session ends in ERROR),
 * kernel.destroy acks, and logs replies relayed to the user who asked.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* Is kid still a kernel id of the database? A requeue renames kernels, so
 * a request sent before it (e.g. to an agent then lost) may outlive its id. */
static bool kernel_known(skv_manager *m, const char *kid)
{
    return skv__mgr_store_kernel_exists(m->store, kid);
}

void skv__mgr_create_failed(skv_manager *m, const skv__mgr_req *r,
                            const skv_proto_error *e, int64_t now)
{
    if (!kernel_known(m, r->kernel_id)) {
        skv__log(SKV_LOG_INFO, "manager", "kernel.create for %s failed, but "
                 "that id is no longer placed; ignored", r->kernel_id);
        return;
    }
    char why[300];
    snprintf(why, sizeof why, "kernel %s failed to start: %s", r->kernel_id,
             e->message ? e->message : skv_strerror(e->code));
    skv__log(SKV_LOG_WARN, "manager", "%s", why);
    char sid[SKV__MGR_ID_MAX];
    snprintf(sid, sizeof sid, "%s", r->kernel_id);
    char *dash = strrchr(sid, '-');
    if (dash)
        *dash = 0;
    skv_error err = SKV_ERROR_INIT;
    skv__mgr_metrics_kernel_gone(m, r->kernel_id);
    if (skv__mgr_kernel_set(m, r->kernel_id, "ERROR", &err) == 0)
        skv__mgr_session_stop(m, sid, SKV_SESSION_ERROR, why, NULL, now, &err);
    if (err.code)
        skv__log(SKV_LOG_ERROR, "manager", "%s: %s", sid, err.message);
}

static void on_create(skv_manager *m, const skv__mgr_req *r,
                      const skv_proto_envelope *env, const void *body,
                      int64_t now)
{
    if (env->type == SKV_PROTO_ERROR) {
        skv__mgr_create_failed(m, r, body, now);
        return;
    }
    const skv_proto_kernel_create_reply *cr = body;
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_net_kernel_reply(m, r->kernel_id, cr);
    if (skv__mgr_kernel_running(m, r->kernel_id, cr->container_id, now, &e))
        skv__log(SKV_LOG_ERROR, "manager", "create reply for %s: %s",
                 r->kernel_id, e.message);
}

static void on_logs(skv_manager *m, const skv__mgr_req *r,
                    const skv_proto_envelope *env, const void *body)
{
    if (!skv__mgr_conn_find(m, r->user_conn))
        return;   /* the user went away */
    if (env->type == SKV_PROTO_ERROR) {
        const skv_proto_error *e = body;
        skv__mgr_error(m, r->user_conn, r->user_req, e->code, e->message,
                       "session.logs");
        return;
    }
    skv__mgr_reply(m, r->user_conn, r->user_req, SKV_PROTO_LOGS_REPLY, body);
}

/* The agent destroyed a kernel we asked to stop: an agent may remove a
 * running kernel without a kernel.exit, so its ack ends the kernel (an exit
 * reported before the ack has already recorded the real code). */
static void on_destroyed(skv_manager *m, uint64_t conn, const skv__mgr_req *r,
                         int64_t now)
{
    const skv__mgr_conn *c = skv__mgr_conn_find(m, conn);
    if (!c)
        return;
    bool stopping = skv__mgr_store_kernel_stopping_on(m->store, r->kernel_id,
                                                      c->agent_id);
    skv_error e = SKV_ERROR_INIT;
    if (stopping && skv__mgr_kernel_ended(m, r->kernel_id, "TERMINATED", -1,
                                          "destroyed", now, &e))
        skv__log(SKV_LOG_ERROR, "manager", "destroy of %s: %s", r->kernel_id,
                 e.message);
}

static bool expected(const skv__mgr_req *r, skv_proto_type t)
{
    if (t == SKV_PROTO_ERROR)
        return true;
    switch (r->kind) {
    case SKV__REQ_CREATE: return t == SKV_PROTO_KERNEL_CREATE_REPLY;
    case SKV__REQ_DESTROY: return t == SKV_PROTO_ACK;
    case SKV__REQ_LOGS: return t == SKV_PROTO_LOGS_REPLY;
    case SKV__REQ_EXEC: return t == SKV_PROTO_EXEC_START_REPLY;
    }
    return false;
}

void skv__mgr_on_response(skv_manager *m, uint64_t conn,
                          const skv_proto_envelope *env, int64_t now_ms)
{
    skv__mgr_req r;
    if (!skv__mgr_req_take(m, conn, env->request_id, &r) ||
        !expected(&r, env->type)) {
        skv__log(SKV_LOG_WARN, "manager", "unexpected %s (id %llu) from "
                 "connection %llu; ignored", env->type_name,
                 (unsigned long long)env->request_id, (unsigned long long)conn);
        return;
    }
    size_t size = skv_proto_type_size(env->type);
    void *body = skv__calloc(1, size ? size : 1);
    skv_error e = SKV_ERROR_INIT;
    if (!body || skv_proto_body_decode(body, env->type, env->body,
                                       env->body_len, &e)) {
        skv__log(SKV_LOG_WARN, "manager", "bad %s from agent: %s",
                 env->type_name, e.message);
        skv__free(body);
        return;
    }
    /* A create reply or destroy ack: its state change joins the tick's
     * batch (mgr_units.c). */
    bool join = r.kind == SKV__REQ_CREATE || r.kind == SKV__REQ_DESTROY;
    if (join)
        skv__mgr_units_join(m, conn, now_ms);
    if (r.kind == SKV__REQ_CREATE)
        on_create(m, &r, env, body, now_ms);
    else if (r.kind == SKV__REQ_LOGS)
        on_logs(m, &r, env, body);
    else if (r.kind == SKV__REQ_EXEC)
        skv__mgr_exec_on_reply(m, &r, env, body);
    else if (env->type == SKV_PROTO_ERROR)
        skv__log(SKV_LOG_WARN, "manager", "kernel.destroy %s refused: %s",
                 r.kernel_id, ((skv_proto_error *)body)->message);
    else
        on_destroyed(m, conn, &r, now_ms);
    if (join)
        skv__mgr_units_leave(m);
    skv_proto_body_free(env->type, body);
    skv__free(body);
}
