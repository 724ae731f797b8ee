/* Everything the manager sends: replies, error replies and its own requests
 * to agents (remembered until answered, so replies can be matched and logs
 * relayed to the user who asked).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

/* Takes ownership of frame. Inside a transaction the frame waits for the
 * commit (mgr_outbox.c). A failing send marks the connection dead; the
 * next tick forgets it (never re-entering the host from here). */
static void send_kind(skv_manager *m, uint64_t conn, void *frame, size_t len,
                      skv__mgr_out_kind kind, uint64_t req)
{
    skv__mgr_out o = {conn, frame, len, kind, req};
    skv__mgr_outbox_put(m, &o);
    if (!skv__db_in_transaction(m->store))
        skv__mgr_outbox_release(m);
}

void skv__mgr_send_frame(skv_manager *m, uint64_t conn, void *frame,
                         size_t len)
{
    send_kind(m, conn, frame, len, SKV__OUT_OTHER, 0);
}

int skv__mgr_reply(skv_manager *m, uint64_t conn, uint64_t req,
                   skv_proto_type type, const void *body)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_message_encode(&frame, &len, SKV_PROTO_RESPONSE, req,
                                      type, body, 0, NULL, &e);
    if (rc) {
        skv__log(SKV_LOG_ERROR, "manager", "encoding %s: %s",
                 skv_proto_type_name(type), e.message);
        skv__mgr_error(m, conn, req, rc, e.message, NULL);
        return rc;
    }
    send_kind(m, conn, frame, len, SKV__OUT_REPLY, req);
    return 0;
}

void skv__mgr_error(skv_manager *m, uint64_t conn, uint64_t req, int code,
                    const char *msg, const char *req_type)
{
    void *frame = NULL;
    size_t len = 0;
    m->st.requests_refused++;
    if (skv_proto_error_encode(&frame, &len, req, code ? code : SKV_EINVAL,
                               msg ? msg : skv_strerror(code), req_type, 0,
                               NULL, NULL) == 0)
        skv__mgr_send_frame(m, conn, frame, len);
}

static int req_push(skv_manager *m, const skv__mgr_req *r)
{
    skv__mgr_req *n = skv__reallocarray(m->reqs, m->n_reqs + 1, sizeof *n);
    if (!n)
        return SKV_ENOMEM;
    m->reqs = n;
    m->reqs[m->n_reqs++] = *r;
    return 0;
}

int skv__mgr_request(skv_manager *m, uint64_t conn, skv__mgr_req_kind kind,
                     skv_proto_type type, const void *body,
                     const char *kernel_id, uint64_t user_conn,
                     uint64_t user_req)
{
    skv__mgr_req r = {++m->next_req, conn, kind, "", user_conn, user_req, 0};
    snprintf(r.kernel_id, sizeof r.kernel_id, "%s", kernel_id ? kernel_id : "");
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, r.id,
                                      type, body, 0, NULL, &e);
    if (rc) {
        skv__log(SKV_LOG_ERROR, "manager", "encoding %s for %s: %s",
                 skv_proto_type_name(type), r.kernel_id, e.message);
        return rc;
    }
    rc = req_push(m, &r);
    if (rc) {
        skv_free(frame);
        return rc;
    }
    send_kind(m, conn, frame, len, SKV__OUT_REQUEST, r.id);
    return 0;
}

/* Remove the request (conn, id) from the table, copying it out. */
skv__mgr_req *skv__mgr_req_take(skv_manager *m, uint64_t conn, uint64_t id,
                                skv__mgr_req *copy)
{
    for (size_t i = 0; i < m->n_reqs; i++) {
        if (m->reqs[i].id != id || m->reqs[i].conn != conn)
            continue;
        *copy = m->reqs[i];
        m->reqs[i] = m->reqs[--m->n_reqs];
        return copy;
    }
    return NULL;
}

/* The agent's connection is gone: users waiting for logs get an error; the
 * other requests are resent after the agent registers again. */
void skv__mgr_reqs_conn_gone(skv_manager *m, uint64_t conn)
{
    size_t i = 0;
    while (i < m->n_reqs) {
        skv__mgr_req r = m->reqs[i];
        if (r.conn != conn && r.user_conn != conn) {
            i++;
            continue;
        }
        m->reqs[i] = m->reqs[--m->n_reqs];
        if (r.kind == SKV__REQ_LOGS && r.conn == conn)
            skv__mgr_error(m, r.user_conn, r.user_req, SKV_ESTATE,
                           "the kernel's agent disconnected", "session.logs");
    }
}
