/* The client object: connect, free, and the request/response exchange.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"

static int check_options(const skv_client_options *o, skv_error *err)
{
    if (!o)
        return skv__err(err, SKV_EINVAL, "client_connect: NULL options");
    if (o->version < 1 || o->version > SKV_CLIENT_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "client options version %u, this "
                        "library knows 1..%u", o->version,
                        SKV_CLIENT_OPTIONS_VERSION);
    if (!o->endpoint || !o->endpoint[0])
        return skv__err(err, SKV_EINVAL, "client_connect: no endpoint");
    if (!o->access_key || !o->secret_key)
        return skv__err(err, SKV_EINVAL, "client_connect: access_key and "
                        "secret_key are required");
    int rc = skv_auth_access_key_check(o->access_key, err);
    if (!rc)
        rc = skv_auth_secret_key_check(o->secret_key, err);
    if (!rc && o->max_frame > SKV_PROTO_MAX_FRAME_LIMIT)
        rc = skv__err(err, SKV_EINVAL, "client_connect: max_frame %u above "
                      "%u", o->max_frame, SKV_PROTO_MAX_FRAME_LIMIT);
    return rc;
}

/* The TLS settings for one endpoint; ep without "tls:" in t->endpoint. */
int skv__client_tls_options(skv__client_tls_opts *t, const char *ep,
                            const char *ca, const char *pin, skv_error *err)
{
    memset(t, 0, sizeof *t);
    t->endpoint = ep;
    t->ca = ca && ca[0] ? ca : NULL;
    t->pin = pin && pin[0] ? pin : NULL;
    bool prefix = strncmp(ep, "tls:", 4) == 0;
    if (prefix)
        t->endpoint += 4;
    t->on = prefix || t->ca || t->pin;
    unsigned char pinb[32];
    if (!t->on)
        return 0;
    if (t->endpoint[0] == '/' || strncmp(t->endpoint, "unix:", 5) == 0)
        return skv__err(err, SKV_EINVAL, "endpoint '%s': TLS is for TCP "
                        "endpoints (a Unix socket is local)", ep);
    if (t->ca && t->pin)
        return skv__err(err, SKV_EINVAL, "client_connect: give tls_ca_file "
                        "or tls_pin, not both");
    if (!t->ca && !t->pin)
        return skv__err(err, SKV_EINVAL, "endpoint '%s': TLS needs "
                        "tls_ca_file or tls_pin to verify the manager", ep);
    if (t->pin && skv__client_pin_parse(pinb, t->pin))
        return skv__err(err, SKV_EINVAL, "tls_pin '%s' is not a SHA-256 "
                        "fingerprint (64 hex digits, ':' allowed)", t->pin);
    return 0;
}

int skv__client_dial_one(skv_client *c, const skv__client_tls_opts *t,
                         skv_error *err)
{
    skv__client_deadline d = skv__client_deadline_in(c->timeout_ms);
    char host[256];
    int rc = t->on ? skv__client_endpoint_host(host, t->endpoint, err) : 0;
    if (!rc)
        rc = skv__client_dial(&c->fd, t->endpoint, d, err);
    if (!rc && t->on)
        rc = skv__client_tls_open(c, host, t->ca, t->pin, d, err);
    return rc;
}

int skv_client_connect(skv_client **out, const skv_client_options *opts,
                       skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "client_connect: NULL out-pointer");
    skv_error local = SKV_ERROR_INIT;  /* failover reads the last reason */
    if (!err)
        err = &local;
    int rc = check_options(opts, err);
    if (rc)
        return rc;
    skv_client *c = skv__calloc(1, sizeof *c);
    if (!c)
        return skv__err(err, SKV_ENOMEM, "client_connect: out of memory");
    c->fd = -1;
    c->timeout_ms = opts->timeout_ms == 0 ? SKV__CLIENT_DEFAULT_TIMEOUT_MS
                                          : opts->timeout_ms;
    if (c->timeout_ms < 0)
        c->timeout_ms = -1;
    c->next_id = 1;
    c->max_frame = opts->max_frame ? opts->max_frame
                                   : SKV_PROTO_DEFAULT_MAX_FRAME;
    strcpy(c->access_key, opts->access_key);
    strcpy(c->secret_key, opts->secret_key);
    rc = skv_proto_reader_new(&c->reader, c->max_frame, err);
    if (!rc)
        rc = skv__client_endpoints_init(c, opts, err);
    if (!rc)
        rc = skv__client_dial_any(c, 0, err);
    if (rc && c->failover_ms > 0 && rc != SKV_EINVAL && rc != SKV_ENOMEM)
        rc = skv__client_failover(c, err);
    if (rc) {
        skv_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void skv_client_free(skv_client *c)
{
    if (!c)
        return;
    skv__client_tls_close(c);
    if (c->fd >= 0)
        close(c->fd);
    skv_proto_reader_free(c->reader);
    skv__free(c->endpoints);
    skv__free(c->tls_ca);
    skv__free(c->tls_pin);
    skv_auth_wipe(c->secret_key, sizeof c->secret_key);
    skv_auth_wipe(c, sizeof *c);
    skv__free(c);
}

static int64_t realtime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Remember why the stream is out of step; later calls fail fast. */
static int mark_broken(skv_client *c, int rc, const skv_error *why)
{
    c->broken = 1;
    c->lost = rc == SKV_EIO || rc == SKV_ESYS;
    strcpy(c->broken_why, why && why->message[0] ? why->message
                                                 : skv_strerror(rc));
    return rc;
}

/* An "error" response: its code and message become the call's. */
static int error_reply(skv_client *c, const skv_proto_envelope *env,
                       skv_error *err)
{
    skv_proto_error e;
    skv_error derr = SKV_ERROR_INIT;
    int rc = skv_proto_body_decode(&e, SKV_PROTO_ERROR, env->body,
                                   env->body_len, &derr);
    if (rc) {
        skv__err(err, SKV_EPROTO, "malformed error response: %s",
                 derr.message);
        return mark_broken(c, SKV_EPROTO, err);
    }
    int code = e.code;
    if (code >= 0 || code < SKV_ERR_MIN)
        code = SKV_EPROTO;
    skv__err(err, code, "%s", e.message && e.message[0] ? e.message
                                                        : skv_strerror(code));
    skv_proto_body_free(SKV_PROTO_ERROR, &e);
    return code;
}

/* Handle one frame: 1 when it was our response (rc in *result), 0 when it
 * was something else to skip (events, stale responses). */
static int take_frame(skv_client *c, const void *payload, size_t len,
                      uint64_t id, skv_proto_type type, void *reply,
                      int *result, skv_error *err)
{
    skv_proto_envelope env;
    skv_error derr = SKV_ERROR_INIT;
    int rc = skv_proto_envelope_decode(&env, payload, len, &derr);
    if (rc) {
        skv__err(err, rc, "malformed frame from the manager: %s",
                 derr.message);
        *result = mark_broken(c, rc, err);
        return 1;
    }
    /* An error with id 0 answers a request the peer could not even parse
     * (ids start at 1): it is ours, and the peer closes next. */
    int ours = env.kind == SKV_PROTO_RESPONSE &&
               (env.request_id == id ||
                (env.request_id == 0 && env.type == SKV_PROTO_ERROR));
    if (!ours) {
        skv__log(SKV_LOG_DEBUG, "client", "skipping %s '%s' (id %llu) while "
                 "waiting for %llu", env.kind == SKV_PROTO_EVENT ? "event"
                 : "frame", env.type_name, (unsigned long long)env.request_id,
                 (unsigned long long)id);
        skv_proto_envelope_free(&env);
        return 0;
    }
    skv_proto_type want = skv_proto_type_reply(type);
    if (env.type == SKV_PROTO_ERROR) {
        *result = error_reply(c, &env, err);
        if (env.request_id == 0)
            mark_broken(c, *result, err);
    } else if (env.type != want) {
        skv__err(err, SKV_EPROTO, "the manager answered %s with '%s', "
                 "expected '%s'", skv_proto_type_name(type), env.type_name,
                 skv_proto_type_name(want));
        *result = mark_broken(c, SKV_EPROTO, err);
    } else {
        rc = skv_proto_body_decode(reply, want, env.body, env.body_len, &derr);
        if (rc) {
            skv__err(err, rc, "malformed '%s' from the manager: %s",
                     env.type_name, derr.message);
            mark_broken(c, rc, err);
        }
        *result = rc;
    }
    skv_proto_envelope_free(&env);
    return 1;
}

static int await_reply(skv_client *c, uint64_t id, skv_proto_type type,
                       void *reply, skv__client_deadline d, skv_error *err)
{
    for (;;) {
        const void *payload;
        size_t len;
        int rc = skv_proto_reader_next(c->reader, &payload, &len, err);
        if (rc < 0)
            return mark_broken(c, rc, err);
        if (rc == 1) {
            int result;
            if (take_frame(c, payload, len, id, type, reply, &result, err))
                return result;
            continue;
        }
        rc = c->tls ? skv__client_tls_read_some(c, d, err)
                    : skv__client_read_some(c->fd, c->reader, d, err);
        if (rc == SKV_ETIMEDOUT) {
            /* A late answer is recognised by its id and skipped. */
            return skv__err(err, rc, "no answer to %s (request %llu) within "
                            "%d ms", skv_proto_type_name(type),
                            (unsigned long long)id, c->timeout_ms);
        }
        if (rc)
            return mark_broken(c, rc, err);
    }
}

static int check_call(skv_client *c, skv_proto_type type, const void *body,
                      void *reply, skv_error *err)
{
    if (!c || !body || !reply)
        return skv__err(err, SKV_EINVAL, "client_call: NULL argument");
    if (skv_proto_type_kind(type) != SKV_PROTO_REQUEST ||
        skv_proto_type_reply(type) == SKV_PROTO_UNKNOWN ||
        type == SKV_PROTO_UNKNOWN)
        return skv__err(err, SKV_EINVAL, "client_call: '%s' is not a request "
                        "type", skv_proto_type_name(type));
    if (c->broken)
        return skv__err(err, SKV_ESTATE, "connection unusable after an "
                        "earlier error (%s); reconnect", c->broken_why);
    return 0;
}

static int call_once(skv_client *c, skv_proto_type type, const void *body,
                     void *reply, skv_error *err)
{
    int rc = check_call(c, type, body, reply, err);
    if (rc)
        return rc;
    memset(reply, 0, skv_proto_type_size(skv_proto_type_reply(type)));
    skv__client_deadline d = skv__client_deadline_in(c->timeout_ms);
    skv_proto_credentials cred = {c->access_key, c->secret_key};
    uint64_t id = c->next_id++;
    void *frame = NULL;
    size_t frame_len = 0;
    rc = skv_proto_message_encode(&frame, &frame_len, SKV_PROTO_REQUEST, id,
                                  type, body, realtime_ms(), &cred, err);
    if (rc == 0 && frame_len > c->max_frame + SKV_PROTO_FRAME_HEADER)
        rc = skv__err(err, SKV_ERANGE, "%s request of %zu bytes exceeds the "
                      "%zu-byte frame limit", skv_proto_type_name(type),
                      frame_len, c->max_frame);
    if (rc == 0)
        rc = skv__client_hello(c, frame_len, err);
    if (rc) {
        skv_free(frame);
        return rc;
    }
    c->spoke = 1;
    rc = c->tls ? skv__client_tls_write_all(c, frame, frame_len, d, err)
                : skv__client_write_all(c->fd, frame, frame_len, d, err);
    skv_free(frame);
    if (rc)
        return mark_broken(c, rc, err);
    return await_reply(c, id, type, reply, d, err);
}

/* With failover on, a connection found lost before sending is replaced
 * first (nothing was sent); one lost while waiting is replaced and the
 * request sent again only when that is safe (reads, a submission carrying
 * a client token), otherwise the caller hears that the outcome is
 * unknown; a standby's answer (it applied nothing) is replaced and the
 * request sent again whatever it is. */
int skv_client_call(skv_client *c, skv_proto_type type, const void *body,
                    void *reply, skv_error *err)
{
    /* The detail is needed internally (mark_broken keeps it) even when the
     * caller passes no error object. */
    skv_error local = SKV_ERROR_INIT;
    if (!err)
        err = &local;
    int rc = 0;
    if (c)
        c->failover_end.at_ms = 0;
    if (c && c->failover_ms > 0 && c->broken && c->lost)
        rc = skv__client_failover(c, err);
    if (!rc)
        rc = call_once(c, type, body, reply, err);
    while (rc && c && c->failover_ms > 0 &&
           skv__client_failover_due(c, rc, err)) {
        skv_proto_body_free(skv_proto_type_reply(type), reply);
        char why[SKV_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err->message);
        /* A standby applied nothing: anything may go to the next one. */
        bool standby = !(c->broken && c->lost);
        if ((rc = skv__client_failover(c, err)))
            return rc;
        if (!standby && !skv__client_resend_safe(type, body))
            return skv__err(err, SKV_EIO, "%s: connection lost (%s) before "
                            "the answer; now on %s, the request may or may "
                            "not have been applied", skv_proto_type_name(type),
                            why, c->endpoint[c->cur]);
        rc = call_once(c, type, body, reply, err);
    }
    return rc;
}
