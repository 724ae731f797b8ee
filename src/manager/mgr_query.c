/* session.list and session.show. Users see their own sessions; admins any
 * owner's (owner "*" lists everyone's).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

/* Pending sessions carry their reason, so a listing says why they wait
 * without one session.show per row. */
static int list_fill(skv_manager *m, skv_proto_session_list_reply *rep,
                     const skv_proto_session_list *l, const char *owner,
                     skv_error *err)
{
    int rc = skv__mgr_store_session_list(m->store, l, owner, rep, err);
    for (size_t i = 0; !rc && i < rep->n_sessions; i++) {
        skv_proto_session_info *s = &rep->sessions[i];
        if (s->status && !strcmp(s->status, "PENDING") && !s->n_pending)
            rc = skv__mgr_session_pending(m, s, err);
    }
    return rc;
}

int skv__mgr_on_list(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    const skv_proto_session_list *l = c->body;
    const char *owner = l->owner ? l->owner : c->who->user;
    if (l->n_statuses > 32)
        return skv__err(err, SKV_EINVAL, "session.list: at most 32 statuses");
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_READ, owner, err);
    if (rc)
        return rc;
    skv_proto_session_list_reply rep = {0};
    rc = list_fill(m, &rep, l, strcmp(owner, "*") ? owner : NULL, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_SESSION_LIST_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &rep);
    return rc;
}

/* Load one session's info; SKV_ENOENT when unknown. */
int skv__mgr_session_info(skv_manager *m, skv_proto_session_info *out,
                          const char *sid, skv_error *err)
{
    return skv__mgr_store_session_info(m->store, sid, out, err);
}
