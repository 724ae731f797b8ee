/*
 * sokovan/client.h - a blocking client of the manager, for the CLI, tests,
 * benchmarks and the language bindings.
 *
 * One client is one connection (Unix socket or TCP) with one keypair; every
 * request is signed (HMAC-SHA256 over the envelope, a fresh nonce each time)
 * and waits for its response.
 *
 * Thread-safety: a skv_client is not thread-safe; use one per thread.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_CLIENT_H
#define SOKOVAN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_client skv_client;

#define SKV_CLIENT_OPTIONS_VERSION 3

typedef struct skv_client_options {
    unsigned version;         /* SKV_CLIENT_OPTIONS_VERSION (1 still taken:
                                 without the TLS fields; 2: without
                                 failover_ms) */
    /* "unix:/path/to/sock", "tcp:host:port", "host:port" or
     * "tls:host:port" (TLS; needs tls_ca_file or tls_pin). A comma-
     * separated list names several managers (a leader and standbys):
     * connect goes to the first that answers. */
    const char *endpoint;
    const char *access_key;   /* required */
    const char *secret_key;   /* required */
    int timeout_ms;           /* per request; 0 = 30000, < 0 = forever */
    uint32_t max_frame;       /* 0 = SKV_PROTO_DEFAULT_MAX_FRAME */
    /* Version 2. Either one turns TLS on for a TCP endpoint (a Unix socket
     * is local: SKV_EINVAL). tls_ca_file: PEM file of CAs (or the
     * manager's own certificate, <data_dir>/tls/cert.pem); the chain and
     * the endpoint's host name or IP are verified. tls_pin: the SHA-256
     * fingerprint of the manager's certificate ("AB:CD:..." as the manager
     * logs it, or 64 hex digits, optional "sha256:" prefix); a mismatch is
     * SKV_EAUTH before any request is sent. Failed verification or a
     * manager without TLS: SKV_EIO naming the reason. */
    const char *tls_ca_file;
    const char *tls_pin;
    /* Version 3. > 0: for up to this many ms per call (and at connect),
     * a lost connection or a standby manager's "standby" answer moves the
     * client to the next endpoint of the list (or the same one again, for
     * a manager that restarts). A request is sent again there only when
     * that is safe: reads, and session.submit with a client_token (the
     * manager answers a known token with the session it has); any other
     * request fails with SKV_EIO saying its outcome is unknown.
     * 0 = off: a lost connection stays lost (SKV_ESTATE, reconnect). */
    int failover_ms;
} skv_client_options;

#define SKV_CLIENT_OPTIONS_INIT \
    {SKV_CLIENT_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, NULL, NULL, 0}

SKV_EXTERN int skv_client_connect(skv_client **out,
                                  const skv_client_options *opts,
                                  skv_error *err);
/* Closes the connection and wipes the secret. Accepts NULL. */
SKV_EXTERN void skv_client_free(skv_client *c);

/* Send a request of `type` with `body` (the structure of that type) and wait
 * for the response. reply points to a structure of the reply type
 * (reply_type = skv_proto_type_reply(type), sized skv_proto_type_size);
 * it is zeroed first and filled on success: free it with
 * skv_proto_body_free(reply_type, reply). An "error" response returns its
 * code (negative SKV_E*) with its message in err. Events and responses to
 * earlier (timed-out) requests arriving meanwhile are skipped.
 * SKV_ETIMEDOUT when no answer came within the timeout (the connection
 * stays usable); after a malformed response, a half-sent request or a
 * closed connection every later call fails with SKV_ESTATE: reconnect. */
SKV_EXTERN int skv_client_call(skv_client *c, skv_proto_type type,
                               const void *body, void *reply,
                               skv_error *err);

/* 1 while calls can go through; 0 once the connection is out of step (a
 * closed connection, a half-sent request, a malformed response: every
 * later call fails with SKV_ESTATE) and for NULL. An error answered by the
 * manager leaves it 1: with this a caller tells the manager's answers
 * from failures of the connection, which a reconnect may cure. */
SKV_EXTERN int skv_client_usable(const skv_client *c);

/* ---- streaming (exec) ------------------------------------------------------
 * For exchanges that are more than one request and one reply (exec): send
 * a signed request or event without waiting, and take whatever the manager
 * sends next. Do not mix with skv_client_call while a stream is open (a
 * call skips events). */

/* The connection's descriptor, to poll for readability before
 * skv_client_recv(c, 0, ...); -1 for NULL or when not connected. */
SKV_EXTERN int skv_client_fd(const skv_client *c);

/* Sign and send a request (kind SKV_PROTO_REQUEST: *request_id receives
 * its id, may be NULL) or an event (SKV_PROTO_EVENT). Blocks until the
 * frame is written (the client's timeout). */
SKV_EXTERN int skv_client_send(skv_client *c, skv_proto_kind kind,
                               skv_proto_type type, const void *body,
                               uint64_t *request_id, skv_error *err);

/* One message from the manager: body is the decoded structure of `type`
 * (NULL for a type this library does not know); free with
 * skv_client_message_free. */
typedef struct skv_client_message {
    skv_proto_kind kind;
    uint64_t request_id;
    skv_proto_type type;
    void *body;
} skv_client_message;

/* Wait up to timeout_ms (0: do not wait, < 0: forever) for the next
 * message. 1: *out holds it; 0: none came, within timeout_ms or before a
 * signal interrupted the wait (a caller with a deadline calls again);
 * negative SKV_E*: the connection failed or sent a malformed frame (later
 * calls fail too). */
SKV_EXTERN int skv_client_recv(skv_client *c, int timeout_ms,
                               skv_client_message *out, skv_error *err);
/* Accepts NULL and an empty message. */
SKV_EXTERN void skv_client_message_free(skv_client_message *m);

/* Convenience wrappers over skv_client_call. */
SKV_EXTERN int skv_client_submit(skv_client *c,
                                 skv_proto_session_ref *reply,
                                 const skv_proto_session_submit *req,
                                 skv_error *err);
SKV_EXTERN int skv_client_show(skv_client *c,
                               skv_proto_session_show_reply *reply,
                               const char *session_id, skv_error *err);

/* Read "access_key=..." / "secret_key=..." lines (a key file written by the
 * manager). Buffers as in auth.h. Empty lines and lines starting with '#'
 * are ignored; unknown keys, duplicates and invalid keys are SKV_EINVAL
 * naming file:line. A file that group or others may access is refused with
 * SKV_EPERM (chmod 600 it); an unreadable one is SKV_ESYS with errno. */
SKV_EXTERN int skv_client_read_keyfile(char *access_key, char *secret_key,
                                       const char *path, skv_error *err);

/* session.terminate of session_id (reason may be NULL; force: kill without
 * the grace period). reply as for skv_client_call. */
SKV_EXTERN int skv_client_terminate(skv_client *c,
                                    skv_proto_session_ref *reply,
                                    const char *session_id,
                                    const char *reason, int force,
                                    skv_error *err);
/* session.logs: bytes of one kernel's stdout or stderr from req->offset;
 * free the reply with skv_proto_body_free(SKV_PROTO_LOGS_REPLY, reply). */
SKV_EXTERN int skv_client_logs(skv_client *c, skv_proto_logs_reply *reply,
                               const skv_proto_logs_request *req,
                               skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_CLIENT_H */
