/* app.activity: the app proxy's batched report of the sessions it served
 * since its previous one (every activity_report_ms, not per request).
 * Each counts as active now for the idle limits (mgr_idle.h); ids of
 * sessions that are not running are forgotten at the next sweep. Only an
 * admin key may send it (the proxy holds one), so a user cannot keep a
 * session alive by claiming traffic.
 * SPDX-License-Identifier: Apache-2.0 */
#include "mgr_app.h"
#include "mgr_idle.h"

int skv__mgr_on_app_activity(skv_manager *m, const skv__mgr_call *c,
                             skv_error *err)
{
    const skv_proto_app_activity *a = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_ADMIN, NULL, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < a->n_session_ids; i++)
        if (a->session_ids[i] && a->session_ids[i][0])
            skv__mgr_idle_touch(m, a->session_ids[i], c->now_ms);
    skv_proto_ack ack = {NULL};
    return skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_ACK, &ack);
}
