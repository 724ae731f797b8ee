/* The first request on a connection must be small: a server accepts large
 * frames only once a request was authenticated (SKV_PROTO_PREAUTH_FRAME_MIN,
 * sokovan-manager's preauth_frame_max). A large first request (a submit
 * with long arguments) is therefore preceded by the smallest signed
 * request there is, a one-row session.list. Its answer or a refusal to
 * list (SKV_EPERM: decided after the signature was checked) means the
 * connection is authenticated; any other failure (a bad key: the server
 * closes next) is the call's.
 * SPDX-License-Identifier: Apache-2.0 */
#include "client_internal.h"

int skv__client_hello(skv_client *c, size_t frame_len, skv_error *err)
{
    if (c->spoke ||
        frame_len <= SKV_PROTO_PREAUTH_FRAME_MIN + SKV_PROTO_FRAME_HEADER)
        return 0;
    skv_proto_session_list q = {0};
    skv_proto_session_list_reply r = {0};
    skv_error e = SKV_ERROR_INIT;
    q.limit = 1;
    c->spoke = 1;   /* before the call: it must not say hello itself */
    int rc = skv_client_call(c, SKV_PROTO_SESSION_LIST, &q, &r, &e);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &r);
    if (rc && rc != SKV_EPERM)
        return skv__err(err, rc, "authenticating before a %zu-byte request: "
                        "%s", frame_len, e.message);
    return 0;
}
