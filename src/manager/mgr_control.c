/* session.show, session.terminate and session.logs (relayed to the kernel's
 * agent; the reply comes back asynchronously through mgr_response.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_app.h"

static int owner_of(skv_manager *m, const char *sid, char *owner,
                    skv_error *err)
{
    if (!sid)
        return skv__err(err, SKV_EINVAL, "session_id is required");
    return skv__mgr_store_session_owner(m->store, sid, owner, SKV__MGR_ID_MAX,
                                        err);
}

static int may(skv_manager *m, const skv__mgr_call *c, const char *sid,
               skv_auth_op op, skv_error *err)
{
    char owner[SKV__MGR_ID_MAX];
    int rc = owner_of(m, sid, owner, err);
    if (!rc)
        rc = skv_auth_may(c->who, op, owner, err);
    return rc;
}

int skv__mgr_on_show(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    const skv_proto_session_id *q = c->body;
    int rc = may(m, c, q->session_id, SKV_AUTH_OP_SESSION_READ, err);
    if (rc)
        return rc;
    skv_proto_session_show_reply rep = {0};
    rc = skv__mgr_session_info(m, &rep.session, q->session_id, err);
    if (!rc)
        rc = skv__mgr_session_details(m, &rep.session, err);
    if (!rc)
        rc = skv__mgr_app_show(m, &rep.session, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_SESSION_SHOW_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    return rc;
}

/* force: the kernels end now, without waiting for their agents, which
 * are told to kill at once (no grace period: the resources are free for
 * the scheduler from here on). */
static void force_end(skv_manager *m, const char *sid, int64_t now)
{
    char **ids = NULL;
    size_t n = 0;
    if (skv__mgr_kernel_ids(m, sid, "TERMINATING", &ids, &n, NULL))
        return;
    for (size_t i = 0; i < n; i++) {
        skv__mgr_send_destroy_grace(m, ids[i], "forced", 0);
        skv__mgr_kernel_ended(m, ids[i], "TERMINATED", -1, "forced",
                              now, NULL);
    }
    skv__mgr_ids_free(ids, n);
}

int skv__mgr_on_terminate(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err)
{
    const skv_proto_session_terminate *t = c->body;
    int rc = may(m, c, t->session_id, SKV_AUTH_OP_SESSION_CONTROL, err);
    if (rc)
        return rc;
    char why[400];
    snprintf(why, sizeof why, "terminated by %s%s%s", c->who->user,
             t->reason ? ": " : "", t->reason ? t->reason : "");
    rc = skv__mgr_session_stop(m, t->session_id, SKV_SESSION_TERMINATED, why,
                               NULL, c->now_ms, err);
    if (!rc && t->force)
        force_end(m, t->session_id, c->now_ms);
    skv_manager_session_state s;
    if (!rc)
        rc = skv__mgr_session_get_state(m, t->session_id, &s, err);
    if (rc)
        return rc;
    skv_proto_session_ref ref = {t->session_id,
                                 (char *)skv_manager_session_state_name(s)};
    return skv__mgr_reply(m, c->conn, c->req,
                          SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
}

/* The agent holding kernel kid of session sid (connected), or an error. */
static skv__mgr_agent *logs_agent(skv_manager *m, const char *sid,
                                  const char *kid, int64_t now_ms,
                                  skv_error *err)
{
    char agent[SKV__MGR_ID_MAX] = "";
    int found = skv__mgr_store_kernel_agent(m->store, sid, kid, agent,
                                            sizeof agent, err);
    if (found < 0)
        return NULL;
    if (!found)
        return skv__err(err, SKV_ENOENT, "session '%s' has no kernel '%s'",
                        sid, kid), NULL;
    skv__mgr_agent *a = skv__mgr_agent_find(m, agent);
    if (agent[0] && a && a->conn && a->state == SKV__AGENT_ALIVE)
        return a;
    skv__mgr_logs_unavailable(m, sid, kid, agent, now_ms, err);
    return NULL;
}

int skv__mgr_on_logs(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    skv_proto_logs_request *q = c->body;
    int rc = may(m, c, q->session_id, SKV_AUTH_OP_SESSION_READ, err);
    if (rc)
        return rc;
    char kid[SKV__MGR_ID_MAX + 8];
    snprintf(kid, sizeof kid, "%s", q->kernel_id ? q->kernel_id : "");
    if (!kid[0] && skv__mgr_kernel_id_at(m, q->session_id, 0, kid,
                                         sizeof kid, NULL))
        snprintf(kid, sizeof kid, "%s-0", q->session_id);
    skv__mgr_agent *a = logs_agent(m, q->session_id, kid, c->now_ms, err);
    if (!a)
        return err && err->code ? err->code : SKV_ESTATE;
    skv_proto_logs_request fwd = *q;
    fwd.kernel_id = kid;
    rc = skv__mgr_request(m, a->conn, SKV__REQ_LOGS, SKV_PROTO_KERNEL_LOGS,
                          &fwd, kid, c->conn, c->req);
    return rc ? skv__err(err, rc, "cannot forward the logs request") : 0;
}
