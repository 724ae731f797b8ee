/* One-call helpers over skv_client_call for the common requests.
 * SPDX-License-Identifier: Apache-2.0 */
#include "client_internal.h"

int skv_client_submit(skv_client *c, skv_proto_session_ref *reply,
                      const skv_proto_session_submit *req, skv_error *err)
{
    return skv_client_call(c, SKV_PROTO_SESSION_SUBMIT, req, reply, err);
}

int skv_client_show(skv_client *c, skv_proto_session_show_reply *reply,
                    const char *session_id, skv_error *err)
{
    if (!session_id || !session_id[0])
        return skv__err(err, SKV_EINVAL, "client_show: no session id");
    skv_proto_session_id req = {(char *)session_id};
    return skv_client_call(c, SKV_PROTO_SESSION_SHOW, &req, reply, err);
}

int skv_client_terminate(skv_client *c, skv_proto_session_ref *reply,
                         const char *session_id, const char *reason,
                         int force, skv_error *err)
{
    if (!session_id || !session_id[0])
        return skv__err(err, SKV_EINVAL, "client_terminate: no session id");
    skv_proto_session_terminate req = {(char *)session_id, (char *)reason,
                                       (uint8_t)(force ? 1 : 0)};
    return skv_client_call(c, SKV_PROTO_SESSION_TERMINATE, &req, reply, err);
}

int skv_client_logs(skv_client *c, skv_proto_logs_reply *reply,
                    const skv_proto_logs_request *req, skv_error *err)
{
    return skv_client_call(c, SKV_PROTO_SESSION_LOGS, req, reply, err);
}
