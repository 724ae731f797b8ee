/* skv_manager_handle_frame: decode the envelope, verify the signature,
 * decode the body and route it. Anything malformed or unauthenticated gets
 * an error reply and a negative return (the host closes the connection).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_vfolder.h"
#include "mgr_app.h"

typedef int (*handler_fn)(skv_manager *, const skv__mgr_call *, skv_error *);

static handler_fn handler_of(skv_proto_type t)
{
    switch (t) {
    case SKV_PROTO_AGENT_REGISTER: return skv__mgr_on_register;
    case SKV_PROTO_AGENT_HEARTBEAT: return skv__mgr_on_heartbeat;
    case SKV_PROTO_KERNEL_STATUS: return skv__mgr_on_kernel_status;
    case SKV_PROTO_KERNEL_EXIT: return skv__mgr_on_kernel_exit;
    case SKV_PROTO_AGENT_STATS: return skv__mgr_on_agent_stats;
    case SKV_PROTO_SESSION_SUBMIT: return skv__mgr_on_submit;
    case SKV_PROTO_SESSION_LIST: return skv__mgr_on_list;
    case SKV_PROTO_SESSION_SHOW: return skv__mgr_on_show;
    case SKV_PROTO_SESSION_TERMINATE: return skv__mgr_on_terminate;
    case SKV_PROTO_SESSION_LOGS: return skv__mgr_on_logs;
    case SKV_PROTO_AGENT_LIST: return skv__mgr_on_agent_list;
    case SKV_PROTO_IMAGE_LIST: return skv__mgr_on_image_list;
    case SKV_PROTO_ADMIN_BACKUP: return skv__mgr_on_backup;
    case SKV_PROTO_VFOLDER: return skv__mgr_on_vfolder;
    case SKV_PROTO_VFOLDER_FILE: return skv__mgr_on_vfolder_file;
    case SKV_PROTO_VFOLDER_UPLOAD: return skv__mgr_on_vfolder_upload;
    case SKV_PROTO_VFOLDER_DOWNLOAD: return skv__mgr_on_vfolder_download;
    case SKV_PROTO_APP_TOKEN: return skv__mgr_on_app_token;
    case SKV_PROTO_APP_RESOLVE: return skv__mgr_on_app_resolve;
    case SKV_PROTO_ADMIN_AGENT: return skv__mgr_on_admin_agent;
    case SKV_PROTO_AGENT_DEVICE_HEALTH: return skv__mgr_on_device_health;
    case SKV_PROTO_APP_ACTIVITY: return skv__mgr_on_app_activity;
    case SKV_PROTO_EXEC_START: return skv__mgr_on_exec_start;
    case SKV_PROTO_EXEC_STDIN:
    case SKV_PROTO_EXEC_OUTPUT:
    case SKV_PROTO_EXEC_OUTPUT_ACK:
    case SKV_PROTO_EXEC_STDIN_ACK:
    case SKV_PROTO_EXEC_RESIZE:
    case SKV_PROTO_EXEC_SIGNAL:
    case SKV_PROTO_EXEC_EXIT: return skv__mgr_on_exec_event;
    default: return NULL;
    }
}

static bool is_admin_type(skv_proto_type t)
{
    return t >= SKV_PROTO_ADMIN_USER && t < SKV_PROTO_TYPE_COUNT &&
           skv_proto_type_kind(t) == SKV_PROTO_REQUEST;
}

/* A generated or imported key pair's secret travels in the reply: never
 * in clear over a network (decided before anything is created). */
static int secret_check(skv_manager *m, const skv__mgr_call *c,
                        skv_error *err)
{
    const skv__mgr_conn *conn = skv__mgr_conn_find(m, c->conn);
    const skv_proto_admin_keypair *k = c->body;
    if (c->type != SKV_PROTO_ADMIN_KEYPAIR || !conn || !conn->plaintext ||
        k->op != SKV_PROTO_ADMIN_CREATE)
        return 0;
    return skv__err(err, SKV_EPERM, "admin.keypair create returns a secret "
                    "key: refused over plaintext TCP (use the Unix socket or "
                    "a TLS listener, or set allow_plaintext_secrets)");
}

static int on_admin(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    int src = secret_check(m, c, err);
    if (src)
        return src;
    skv_proto_type rt = skv_proto_type_reply(c->type);
    void *reply = skv__calloc(1, skv_proto_type_size(rt));
    if (!reply)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    int rc = skv__mgr_admin_handle(&m->admin, c->who, c->type, c->body, reply,
                                   c->now_ms, err);
    if (!rc) {
        rc = skv__mgr_reply(m, c->conn, c->req, rt, reply);
        m->dirty = true;   /* groups or policies may have changed */
    }
    skv_proto_body_free(rt, reply);
    skv__free(reply);
    return rc;
}

/* An agent's report of its kernels: state changes, one unit each. */
static bool joins(skv_proto_type t)
{
    return t == SKV_PROTO_KERNEL_STATUS || t == SKV_PROTO_KERNEL_EXIT ||
           t == SKV_PROTO_AGENT_STATS;
}

/* Route a verified message; error replies for refused requests. */
static int route(skv_manager *m, const skv__mgr_call *c,
                 const skv_proto_envelope *env)
{
    skv_error e = SKV_ERROR_INIT;
    handler_fn h = handler_of(c->type);
    int rc;
    /* Submissions and agents' kernel events join the open batch
     * (mgr_batch.c, mgr_units.c); anything else sees (and follows) what
     * was acknowledged. */
    bool join = joins(c->type);
    if (c->type != SKV_PROTO_SESSION_SUBMIT && !join)
        skv__mgr_batch_commit(m, c->now_ms, NULL);
    if (join)
        skv__mgr_units_join(m, c->conn, c->now_ms);
    if (h)
        rc = h(m, c, &e);
    else if (is_admin_type(c->type))
        rc = on_admin(m, c, &e);
    else
        rc = skv__err(&e, SKV_ENOTSUP, "message type '%s' is not served by "
                      "the manager", env->type_name);
    if (join)
        skv__mgr_units_leave(m);
    if (rc) {
        skv__log(SKV_LOG_INFO, "manager", "%s from %s refused: %s",
                 env->type_name, c->who->user, e.message);
        skv__mgr_error(m, c->conn, c->req, rc, e.message, env->type_name);
    }
    return 0;
}

static int refuse(skv_manager *m, uint64_t conn, uint64_t req, int code,
                  const skv_error *e, const char *type, skv_error *err)
{
    skv__log(SKV_LOG_WARN, "manager", "connection %llu: %s; closing",
             (unsigned long long)conn, e->message);
    skv__mgr_error(m, conn, req, code, e->message, type);
    if (err && err != e)
        *err = *e;
    return code;
}

static int verified(skv_manager *m, uint64_t conn,
                    const skv_proto_envelope *env, int64_t now, skv_error *e)
{
    skv_auth_principal who;
    int rc = skv_proto_envelope_verify(m->verifier, &who, env, now, e);
    if (!rc)
        rc = skv__mgr_nonce_note(m, &env->auth, e);
    if (rc)
        return refuse(m, conn, env->request_id, rc, e, env->type_name, e);
    skv__mgr_conn_authenticated(m, conn);
    if (env->type == SKV_PROTO_UNKNOWN) {
        skv__mgr_error(m, conn, env->request_id, SKV_ENOTSUP,
                       "unknown message type", env->type_name);
        return 0;
    }
    size_t size = skv_proto_type_size(env->type);
    void *body = skv__calloc(1, size ? size : 1);
    if (!body)
        return skv__err(e, SKV_ENOMEM, "manager: out of memory");
    rc = skv_proto_body_decode(body, env->type, env->body, env->body_len, e);
    if (rc) {
        skv__free(body);
        return refuse(m, conn, env->request_id, rc, e, env->type_name, e);
    }
    skv__mgr_call c = {conn, env->request_id, env->type, &who, body, now};
    rc = route(m, &c, env);
    skv_proto_body_free(env->type, body);
    skv__free(body);
    return rc;
}

SKV_EXTERN int skv_manager_handle_frame(skv_manager *m, uint64_t conn_id,
                                        const void *payload, size_t len,
                                        int64_t now_ms, skv_error *err)
{
    if (!m || (!payload && len))
        return skv__err(err, SKV_EINVAL, "handle_frame: NULL argument");
    skv__mgr_conn *c = skv__mgr_conn_find(m, conn_id);
    if (!c)
        return skv__err(err, SKV_ENOENT, "handle_frame: connection %llu is "
                        "not open", (unsigned long long)conn_id);
    m->st.requests++;
    skv_error e = SKV_ERROR_INIT;
    if (len > m->max_frame) {
        skv__err(&e, SKV_EPROTO, "frame of %zu bytes above the limit %zu",
                 len, m->max_frame);
        return refuse(m, conn_id, 0, SKV_EPROTO, &e, NULL, err);
    }
    skv_proto_envelope env;
    int rc = skv_proto_envelope_decode(&env, payload, len, &e);
    if (rc)
        return refuse(m, conn_id, 0, rc, &e, NULL, err);
    if (env.kind == SKV_PROTO_RESPONSE) {
        if (c->agent_id[0])
            skv__mgr_on_response(m, conn_id, &env, now_ms);
        else
            rc = refuse(m, conn_id, env.request_id, SKV_EPROTO,
                        (skv__err(&e, SKV_EPROTO, "unexpected response "
                                  "from a connection that is not an agent's"),
                         &e), env.type_name, err);
    } else {
        rc = verified(m, conn_id, &env, now_ms, &e);
        if (rc && err)
            *err = e;
    }
    skv_proto_envelope_free(&env);
    return rc;
}
