/* Frames from the manager: its requests (kernel.create, kernel.destroy,
 * kernel.logs) and the answer to the registration. A frame that does not
 * decode is a protocol violation: answered with an error, and the host
 * drops the connection.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

static int on_request(skv_agent *a, const skv_proto_envelope *env,
                      int64_t now_ms, skv_error *err)
{
    switch (env->type) {
    case SKV_PROTO_KERNEL_CREATE:
        return skv__agent_on_create(a, env, now_ms, err);
    case SKV_PROTO_KERNEL_DESTROY:
        return skv__agent_on_destroy(a, env, now_ms, err);
    case SKV_PROTO_KERNEL_LOGS:
        return skv__agent_on_logs(a, env, now_ms, err);
    case SKV_PROTO_EXEC_START:
        return skv__agent_on_exec_start(a, env, now_ms, err);
    default: {
        char msg[160];
        snprintf(msg, sizeof(msg), "an agent does not serve '%s'",
                 env->type_name);
        return skv__agent_reply_error(a, env->request_id, SKV_ENOTSUP, msg,
                                      env->type_name, now_ms);
    }
    }
}

/* The events that steer a running exec (exec.c). */
static bool is_exec_event(skv_proto_type t)
{
    return t == SKV_PROTO_EXEC_STDIN || t == SKV_PROTO_EXEC_OUTPUT_ACK ||
           t == SKV_PROTO_EXEC_RESIZE || t == SKV_PROTO_EXEC_SIGNAL;
}

/* The manager refused the registration: nothing else will work. */
static int refused(const skv_proto_envelope *env, skv_error *err)
{
    skv_proto_error m;
    memset(&m, 0, sizeof(m));
    int rc = skv_proto_body_decode(&m, SKV_PROTO_ERROR, env->body,
                                   env->body_len, NULL);
    rc = skv__err(err, SKV_EAUTH, "the manager refused the registration: "
                  "%s (%s)", rc == 0 && m.message ? m.message : "no message",
                  skv_err_name(rc == 0 ? m.code : rc));
    skv_proto_body_free(SKV_PROTO_ERROR, &m);
    return rc;
}

int skv_agent_handle_frame(skv_agent *a, const void *payload, size_t len,
                           int64_t now_ms, skv_error *err)
{
    if (!a || (!payload && len))
        return skv__err(err, SKV_EINVAL, "skv_agent_handle_frame: %s is NULL",
                        !a ? "agent" : "payload");
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_envelope_decode(&env, payload, len, &e);
    if (rc) {
        skv__agent_reply_error(a, 0, rc, e.message, NULL, now_ms);
        return skv__err(err, rc, "frame from the manager: %s", e.message);
    }
    if (env.kind == SKV_PROTO_REQUEST)
        rc = on_request(a, &env, now_ms, err);
    else if (env.kind == SKV_PROTO_RESPONSE &&
             env.type == SKV_PROTO_AGENT_REGISTER_REPLY)
        rc = skv__agent_on_register_reply(a, &env, now_ms, err);
    else if (env.kind == SKV_PROTO_EVENT && env.type == SKV_PROTO_AGENT_ROUTES)
        rc = skv__agent_on_routes(a, &env, now_ms, err);
    else if (env.kind == SKV_PROTO_EVENT &&
             env.type == SKV_PROTO_AGENT_ROUTES_DELTA)
        rc = skv__agent_on_routes_delta(a, &env, err);
    else if (env.kind == SKV_PROTO_EVENT && is_exec_event(env.type))
        rc = skv__agent_on_exec_event(a, &env, now_ms, err);
    else if (env.kind == SKV_PROTO_RESPONSE && env.type == SKV_PROTO_ERROR &&
             env.request_id == a->register_id)
        rc = refused(&env, err);
    else
        skv__log(SKV_LOG_DEBUG, "agent", "ignoring a '%s' from the manager",
                 env.type_name);
    skv_proto_envelope_free(&env);
    return rc;
}
