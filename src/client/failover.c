/* A list of manager endpoints ("a,b,c"): connect to the first that
 * answers, and with failover_ms (options v3) move to the next when the
 * connection is lost or a standby manager answers "standby", for at most
 * failover_ms per call. Resending is left to what is safe: a read, or a
 * submission whose client token makes the manager return the session it
 * already has.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"

static char *dup_or_null(const char *s)
{
    return s && s[0] ? skv__strdup(s) : NULL;
}

int skv__client_endpoints_init(skv_client *c, const skv_client_options *o,
                               skv_error *err)
{
    if (o->version >= 2 && ((o->tls_ca_file && o->tls_ca_file[0] &&
                             !(c->tls_ca = dup_or_null(o->tls_ca_file))) ||
                            (o->tls_pin && o->tls_pin[0] &&
                             !(c->tls_pin = dup_or_null(o->tls_pin)))))
        return skv__err(err, SKV_ENOMEM, "client_connect: out of memory");
    if (o->version >= 3 && o->failover_ms < 0)
        return skv__err(err, SKV_EINVAL, "client_connect: failover_ms %d "
                        "is negative", o->failover_ms);
    c->failover_ms = o->version >= 3 ? o->failover_ms : 0;
    if (!(c->endpoints = skv__strdup(o->endpoint)))
        return skv__err(err, SKV_ENOMEM, "client_connect: out of memory");
    char *save = NULL;
    for (char *p = c->endpoints;; p = NULL) {
        char *ep = strtok_r(p, ",", &save);
        if (!ep)
            break;
        if (c->n_endpoints == SKV__CLIENT_MAX_ENDPOINTS)
            return skv__err(err, SKV_EINVAL, "endpoint list '%s': more than "
                            "%d managers", o->endpoint,
                            SKV__CLIENT_MAX_ENDPOINTS);
        skv__client_tls_opts t;
        int rc = skv__client_tls_options(&t, ep, c->tls_ca, c->tls_pin, err);
        if (rc)
            return rc;
        c->endpoint[c->n_endpoints++] = ep;
    }
    /* "a,,b" or a trailing comma is a typo, not an empty endpoint. */
    size_t len = strlen(o->endpoint);
    if (!c->n_endpoints || strstr(o->endpoint, ",,") ||
        o->endpoint[0] == ',' || o->endpoint[len - 1] == ',')
        return skv__err(err, SKV_EINVAL, "endpoint list '%s' has an empty "
                        "entry", o->endpoint);
    return 0;
}

/* Forget the old connection entirely: a new stream, a fresh reader. */
static int drop_connection(skv_client *c, skv_error *err)
{
    skv__client_tls_close(c);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->broken = 0;
    c->lost = 0;
    c->spoke = 0;
    c->broken_why[0] = '\0';
    skv_proto_reader_free(c->reader);
    c->reader = NULL;
    return skv_proto_reader_new(&c->reader, c->max_frame, err);
}

int skv__client_dial_any(skv_client *c, size_t from, skv_error *err)
{
    char all[SKV_ERROR_MESSAGE_MAX] = "";
    skv_error last = SKV_ERROR_INIT;
    int rc = SKV_EIO;
    for (size_t k = 0; k < c->n_endpoints; k++) {
        size_t i = (from + k) % c->n_endpoints;
        skv__client_tls_opts t;
        skv_error one = SKV_ERROR_INIT;
        rc = skv__client_tls_options(&t, c->endpoint[i], c->tls_ca,
                                     c->tls_pin, &one);
        if (!rc)
            rc = skv__client_dial_one(c, &t, &one);
        if (!rc) {
            c->cur = i;
            return 0;
        }
        skv__client_tls_close(c);
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        size_t n = strlen(all);
        snprintf(all + n, sizeof all - n, "%s%s", n ? "; " : "",
                 one.message);
        last = one;
    }
    /* The last entry's error as it came (its errno tells callers such as
     * the CLI "no socket there" from "refused"); a list names them all. */
    if (err)
        *err = last;
    if (err && c->n_endpoints > 1)
        snprintf(err->message, sizeof err->message,
                 "no manager reachable: %s", all);
    return rc;
}

bool skv__client_failover_due(const skv_client *c, int rc,
                              const skv_error *err)
{
    if (c->broken && c->lost)
        return true;
    return rc == SKV_ESTATE && !c->broken &&
           strncmp(err->message, "standby", 7) == 0;
}

bool skv__client_resend_safe(skv_proto_type type, const void *body)
{
    switch (type) {
    case SKV_PROTO_SESSION_SUBMIT: {
        const skv_proto_session_submit *s = body;
        return s->client_token && s->client_token[0];
    }
    case SKV_PROTO_SESSION_LIST:
    case SKV_PROTO_SESSION_SHOW:
    case SKV_PROTO_SESSION_LOGS:
    case SKV_PROTO_AGENT_LIST:
    case SKV_PROTO_IMAGE_LIST:
        return true;
    default:
        return false;
    }
}

static void nap(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The next endpoint first (the current one just failed), round after
 * round with a short pause, until this call's failover time is spent. */
int skv__client_failover(skv_client *c, skv_error *err)
{
    if (!c->failover_end.at_ms)
        c->failover_end = skv__client_deadline_in(c->failover_ms);
    size_t from = (c->cur + 1) % c->n_endpoints;
    for (;;) {
        int rc = drop_connection(c, err);
        if (rc)
            return rc;
        if (!(rc = skv__client_dial_any(c, from, err)))
            return 0;
        if (skv__client_deadline_left(c->failover_end) == 0) {
            char why[SKV_ERROR_MESSAGE_MAX];
            snprintf(why, sizeof why, "%s", err->message);
            return skv__err(err, rc, "%s (failing over for %d ms)", why,
                            c->failover_ms);
        }
        nap(100);
        from = 0;
    }
}
