/* Streaming exchanges (exec): send a signed request or event without
 * waiting for its answer, and take the manager's messages one by one as
 * they come, with a bounded wait, so a caller can poll the connection with
 * its own descriptors (a terminal, stdin).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <openssl/ssl.h>

#include "client_internal.h"

static int broken(skv_client *c, int rc, const skv_error *why)
{
    c->broken = 1;
    c->lost = rc == SKV_EIO || rc == SKV_ESYS;
    snprintf(c->broken_why, sizeof c->broken_why, "%s",
             why && why->message[0] ? why->message : skv_strerror(rc));
    return rc;
}

static int usable(const skv_client *c, skv_error *err)
{
    if (!c)
        return skv__err(err, SKV_EINVAL, "client is NULL");
    if (c->broken)
        return skv__err(err, SKV_ESTATE, "connection unusable after an "
                        "earlier error (%s); reconnect", c->broken_why);
    return 0;
}

int skv_client_fd(const skv_client *c)
{
    return c ? c->fd : -1;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int check_send(const skv_client *c, skv_proto_kind kind,
                      skv_proto_type type, const void *body, skv_error *err)
{
    int rc = usable(c, err);
    if (rc)
        return rc;
    if (!body)
        return skv__err(err, SKV_EINVAL, "client_send: body is NULL");
    if ((kind != SKV_PROTO_REQUEST && kind != SKV_PROTO_EVENT) ||
        skv_proto_type_kind(type) != kind)
        return skv__err(err, SKV_EINVAL, "client_send: '%s' is not a%s",
                        skv_proto_type_name(type),
                        kind == SKV_PROTO_EVENT ? "n event type"
                                                : " request type");
    return 0;
}

int skv_client_send(skv_client *c, skv_proto_kind kind, skv_proto_type type,
                    const void *body, uint64_t *request_id, skv_error *err)
{
    int rc = check_send(c, kind, type, body, err);
    if (rc)
        return rc;
    skv_proto_credentials cred = {c->access_key, c->secret_key};
    uint64_t id = kind == SKV_PROTO_REQUEST ? c->next_id++ : 0;
    void *frame = NULL;
    size_t len = 0;
    rc = skv_proto_message_encode(&frame, &len, kind, id, type, body,
                                  wall_ms(), &cred, err);
    if (!rc && len > c->max_frame + SKV_PROTO_FRAME_HEADER)
        rc = skv__err(err, SKV_ERANGE, "%s of %zu bytes exceeds the %zu-byte "
                      "frame limit", skv_proto_type_name(type), len,
                      c->max_frame);
    if (!rc)
        rc = skv__client_hello(c, len, err);
    if (rc) {
        skv_free(frame);
        return rc;
    }
    c->spoke = 1;
    skv__client_deadline d = skv__client_deadline_in(c->timeout_ms);
    rc = c->tls ? skv__client_tls_write_all(c, frame, len, d, err)
                : skv__client_write_all(c->fd, frame, len, d, err);
    skv_free(frame);
    if (rc)
        return broken(c, rc, err);
    if (request_id)
        *request_id = id;
    return 0;
}

/* Decode one frame into *out. */
static int take(skv_client *c, const void *p, size_t len,
                skv_client_message *out, skv_error *err)
{
    skv_proto_envelope env;
    int rc = skv_proto_envelope_decode(&env, p, len, err);
    if (rc)
        return broken(c, rc, err);
    out->kind = env.kind;
    out->request_id = env.request_id;
    out->type = env.type;
    size_t size = env.type == SKV_PROTO_UNKNOWN ? 0
                                                : skv_proto_type_size(env.type);
    if (size && !(out->body = skv__calloc(1, size)))
        rc = skv__err(err, SKV_ENOMEM, "client_recv: out of memory");
    if (!rc && size)
        rc = skv_proto_body_decode(out->body, env.type, env.body,
                                   env.body_len, err);
    skv_proto_envelope_free(&env);
    if (rc) {
        skv_client_message_free(out);
        return broken(c, rc, err);
    }
    return 1;
}

/* Bytes to read now or within timeout_ms: 1, 0 (none), or an error. */
static int readable(skv_client *c, int timeout_ms, skv_error *err)
{
    if (c->tls && SSL_pending(c->tls) > 0)
        return 1;
    struct pollfd p = {c->fd, POLLIN, 0};
    int n = poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : skv__err_sys(err, errno, "poll");
    return n > 0;
}

int skv_client_recv(skv_client *c, int timeout_ms, skv_client_message *out,
                    skv_error *err)
{
    int rc = usable(c, err);
    if (rc || !out)
        return rc ? rc : skv__err(err, SKV_EINVAL, "client_recv: out is "
                                  "NULL");
    memset(out, 0, sizeof *out);
    for (int round = 0;; round++) {
        const void *p;
        size_t len;
        rc = skv_proto_reader_next(c->reader, &p, &len, err);
        if (rc < 0)
            return broken(c, rc, err);
        if (rc == 1)
            return take(c, p, len, out, err);
        rc = readable(c, round ? 0 : timeout_ms, err);
        if (rc <= 0)
            return rc;
        skv__client_deadline d = skv__client_deadline_in(c->timeout_ms);
        rc = c->tls ? skv__client_tls_read_some(c, d, err)
                    : skv__client_read_some(c->fd, c->reader, d, err);
        if (rc)
            return broken(c, rc, err);
    }
}

void skv_client_message_free(skv_client_message *m)
{
    if (!m)
        return;
    if (m->body) {
        skv_proto_body_free(m->type, m->body);
        skv__free(m->body);
    }
    memset(m, 0, sizeof *m);
}
