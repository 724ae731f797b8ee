/* Requests of one transfer kept in flight on the CLI's connection: up to
 * CLI_VF_WINDOW are sent before the oldest one's reply is awaited, so the
 * CLI reads, signs and sends the next chunks while the manager checks and
 * stores the earlier ones (one request at a time left both sides idle half
 * of the time). The manager answers a connection's requests in order; a
 * reply that is not the oldest request's is a protocol error.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "vfolder.h"

void cli_vf_pipe_init(cli_vf_pipe *p, cli *c, skv_proto_type type)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    p->type = type;
}

int cli_vf_pipe_send(cli_vf_pipe *p, const void *body)
{
    skv_error e = SKV_ERROR_INIT;
    if (p->n == CLI_VF_WINDOW)
        return cli_fail("%s: more than %d requests in flight",
                        skv_proto_type_name(p->type), CLI_VF_WINDOW);
    uint64_t id = 0;
    int rc = skv_client_send(p->c->client, SKV_PROTO_REQUEST, p->type, body,
                             &id, &e);
    if (rc)
        return cli_fail_err(skv_proto_type_name(p->type), rc, &e);
    p->ids[(p->head + p->n++) % CLI_VF_WINDOW] = id;
    return CLI_OK;
}

/* Decode an error reply into a failure message. */
static int reply_error(const cli_vf_pipe *p, const skv_client_message *m)
{
    const skv_proto_error *er = m->body;
    skv_error e = SKV_ERROR_INIT;
    int code = er && er->code < 0 ? er->code : SKV_EPROTO;
    snprintf(e.message, sizeof e.message, "%s",
             er && er->message ? er->message : skv_strerror(code));
    return cli_fail_err(skv_proto_type_name(p->type), code, &e);
}

/* One message within the deadline (skv_client_recv may return before a
 * large frame is complete: call again). */
static int next_message(cli_vf_pipe *p, int64_t deadline,
                        skv_client_message *m)
{
    skv_error e = SKV_ERROR_INIT;
    for (;;) {
        int64_t left = deadline - cli_now_ms();
        if (left <= 0)
            return cli_fail("%s: no answer within %d ms",
                            skv_proto_type_name(p->type),
                            p->c->timeout_ms > 0 ? p->c->timeout_ms
                                                 : CLI_DEFAULT_TIMEOUT_MS);
        int rc = skv_client_recv(p->c->client, (int)left, m, &e);
        if (rc < 0)
            return cli_fail_err(skv_proto_type_name(p->type), rc, &e);
        if (rc == 1 && m->kind == SKV_PROTO_RESPONSE)
            return CLI_OK;
        skv_client_message_free(m); /* an event: not ours */
    }
}

int cli_vf_pipe_recv(cli_vf_pipe *p, skv_client_message *m)
{
    memset(m, 0, sizeof *m);
    if (p->n == 0)
        return cli_fail("%s: no request in flight",
                        skv_proto_type_name(p->type));
    int timeout = p->c->timeout_ms > 0 ? p->c->timeout_ms
                                       : CLI_DEFAULT_TIMEOUT_MS;
    if (next_message(p, cli_now_ms() + timeout, m))
        return CLI_FAIL;
    uint64_t want = p->ids[p->head];
    p->head = (p->head + 1) % CLI_VF_WINDOW;
    p->n--;
    int rc = CLI_OK;
    if (m->type == SKV_PROTO_ERROR)
        rc = reply_error(p, m);
    else if (m->request_id != want ||
             m->type != skv_proto_type_reply(p->type) || !m->body)
        rc = cli_fail("%s: the manager answered request %llu with '%s' "
                      "while %llu was the oldest in flight",
                      skv_proto_type_name(p->type),
                      (unsigned long long)m->request_id,
                      skv_proto_type_name(m->type), (unsigned long long)want);
    if (rc)
        skv_client_message_free(m);
    return rc;
}
