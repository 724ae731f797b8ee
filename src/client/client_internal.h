/* Private to src/client: the connection object and its I/O helpers.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_CLIENT_INTERNAL_H
#define SKV_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "skv_internal.h"
#include "sokovan/client.h"

#define SKV__CLIENT_DEFAULT_TIMEOUT_MS 30000
#define SKV__CLIENT_MAX_ENDPOINTS 16

struct ssl_st;

/* A point in time on the monotonic clock, or "never" (ms < 0). */
typedef struct skv__client_deadline {
    int64_t at_ms;
} skv__client_deadline;

struct skv_client {
    int fd;
    struct ssl_st *tls;              /* NULL: plaintext */
    int timeout_ms;                  /* < 0: forever */
    uint64_t next_id;                /* request ids, from 1 */
    size_t max_frame;
    skv_proto_reader *reader;
    /* After a half-written frame or a malformed response the byte stream is
     * out of step: every later call fails with this message. */
    int broken;
    char broken_why[SKV_ERROR_MESSAGE_MAX];
    int spoke;                       /* a request was sent (hello.c) */
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    char secret_key[SKV_AUTH_SECRET_KEY_MAX];
    /* failover.c: the manager endpoints ("a,b,c" split in place), the one
     * in use, and how long a call may spend finding another. */
    char *endpoints;
    char *endpoint[SKV__CLIENT_MAX_ENDPOINTS];
    size_t n_endpoints, cur;
    char *tls_ca, *tls_pin;
    int failover_ms;                 /* 0: off (options before v3) */
    skv__client_deadline failover_end; /* this call's; at_ms 0 = unset */
    int lost;                        /* broken by the connection itself */
};

/* One endpoint's TLS settings; endpoint without "tls:". */
typedef struct skv__client_tls_opts {
    const char *endpoint, *ca, *pin;
    bool on;
} skv__client_tls_opts;

/* client.c: the settings for endpoint ep and a connection to it. */
int skv__client_tls_options(skv__client_tls_opts *t, const char *ep,
                            const char *ca, const char *pin, skv_error *err);
int skv__client_dial_one(skv_client *c, const skv__client_tls_opts *t,
                         skv_error *err);

/* failover.c */
int skv__client_endpoints_init(skv_client *c, const skv_client_options *o,
                               skv_error *err);
/* Connect to the first endpoint that answers, from index `from` on,
 * trying each once; the errors of all in err. */
int skv__client_dial_any(skv_client *c, size_t from, skv_error *err);
/* Whether rc (from a call) means "this manager is gone or not serving". */
bool skv__client_failover_due(const skv_client *c, int rc,
                              const skv_error *err);
/* Whether the request may be sent again after a lost answer. */
bool skv__client_resend_safe(skv_proto_type type, const void *body);
/* Drop the connection and find another manager within failover_ms. */
int skv__client_failover(skv_client *c, skv_error *err);


skv__client_deadline skv__client_deadline_in(int timeout_ms);
/* Milliseconds left for poll(): -1 forever, 0 when passed. */
int skv__client_deadline_left(skv__client_deadline d);

/* Open a connected, blocking socket to endpoint ("unix:/p", "tcp:h:p",
 * "h:p"), within the deadline. */
int skv__client_dial(int *fd_out, const char *endpoint, skv__client_deadline d,
                     skv_error *err);

/* The host of a TCP endpoint ("h:p", "[v6]:p", "tcp:h:p"); host holds
 * 256 bytes. */
int skv__client_endpoint_host(char *host, const char *endpoint,
                              skv_error *err);

/* tls.c: "sha256:AB:..." / 64 hex digits, ':' allowed -> 32 bytes; 0/-1. */
int skv__client_pin_parse(unsigned char pin[32], const char *text);
/* Handshake on c->fd (connected), verifying by ca_file or pin. */
int skv__client_tls_open(skv_client *c, const char *host, const char *ca_file,
                         const char *pin, skv__client_deadline d,
                         skv_error *err);
int skv__client_tls_write_all(skv_client *c, const void *buf, size_t len,
                              skv__client_deadline d, skv_error *err);
int skv__client_tls_read_some(skv_client *c, skv__client_deadline d,
                              skv_error *err);
void skv__client_tls_close(skv_client *c);

/* Write all of buf. SKV_ETIMEDOUT, SKV_EIO (peer gone) or SKV_ESYS. */
int skv__client_write_all(int fd, const void *buf, size_t len,
                          skv__client_deadline d, skv_error *err);
/* Wait for bytes and feed what arrives to the reader (one read).
 * SKV_EIO when the peer closed the connection. */
int skv__client_read_some(int fd, skv_proto_reader *r, skv__client_deadline d,
                          skv_error *err);

/* hello.c: before a first request of frame_len bytes, one small signed
 * request when frame_len is above what servers accept unauthenticated. */
int skv__client_hello(skv_client *c, size_t frame_len, skv_error *err);

#endif
