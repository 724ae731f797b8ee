/*
 * sokovan/proto.h - the wire protocol spoken by the manager, the agents
 * and clients (docs/protocol.md is the normative description).
 *
 *  - Framing: each frame is a 4-byte big-endian payload length followed by
 *    the payload. skv_proto_reader is an incremental reader: feed it bytes
 *    as they arrive (it never does I/O), take complete frames out. A length
 *    above the reader's maximum is refused before anything is allocated.
 *  - Envelope: the payload is a msgpack map: protocol version, kind
 *    (request / response / event), request id, message type name,
 *    timestamp, the body as a msgpack byte string, and an optional auth
 *    block (access key, timestamp, nonce, HMAC-SHA256 signature).
 *  - Bodies: one C structure per message type (sokovan/proto_msg.h);
 *    skv_proto_body_encode/decode/free work for every type.
 *
 * Decoding untrusted bytes never crashes and never over-allocates: every
 * string length and element count has a fixed bound, and every count is
 * checked against the bytes left before anything is allocated, so memory
 * stays proportional to the input (at most one body element, a few
 * hundred bytes, per input byte). Malformed, truncated, oversized or
 * wrong-typed input gives SKV_EPROTO, an unsupported protocol version
 * SKV_EVERSION, each with a message naming the field.
 *
 * Thread-safety: a reader needs exclusive access; everything else works on
 * caller-owned data and is thread-safe. skv_proto_envelope_verify()
 * modifies the verifier (see sokovan/auth.h).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_PROTO_H
#define SOKOVAN_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/auth.h"
#include "sokovan/common.h"
#include "sokovan/proto_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol version this library speaks (envelope key "v"). */
#define SKV_PROTO_VERSION 1

#define SKV_PROTO_FRAME_HEADER 4                      /* length prefix bytes */
#define SKV_PROTO_DEFAULT_MAX_FRAME (16u * 1024 * 1024)   /* payload bytes */
#define SKV_PROTO_MAX_FRAME_LIMIT (1024u * 1024 * 1024)   /* largest allowed max */
/* Servers accept frames of at least this many payload bytes before a
 * connection's first request was authenticated (sokovan-manager's
 * preauth_frame_max cannot go lower); a client whose first request is
 * larger sends a small authenticated request first (the client library
 * does). */
#define SKV_PROTO_PREAUTH_FRAME_MIN (64u * 1024)
/* Message type names: 1..63 characters of [a-z0-9._]. */
#define SKV_PROTO_TYPE_NAME_MAX 64

typedef enum skv_proto_kind {
    SKV_PROTO_REQUEST = 0,   /* expects one response with the same id */
    SKV_PROTO_RESPONSE = 1,  /* answers the request with the same id */
    SKV_PROTO_EVENT = 2      /* one-way */
} skv_proto_kind;

/* Message types. The wire carries the name (skv_proto_type_name); the
 * numbers are this library's ABI and only ever appended to. */
typedef enum skv_proto_type {
    SKV_PROTO_UNKNOWN = 0,              /* a name this library does not know */
    SKV_PROTO_ERROR,                    /* "error"             skv_proto_error */
    SKV_PROTO_ACK,                      /* "ack"               skv_proto_ack */
    SKV_PROTO_AGENT_REGISTER,           /* skv_proto_agent_register */
    SKV_PROTO_AGENT_REGISTER_REPLY,     /* skv_proto_agent_register_reply */
    SKV_PROTO_AGENT_HEARTBEAT,          /* skv_proto_agent_heartbeat */
    SKV_PROTO_KERNEL_STATUS,            /* skv_proto_kernel_status */
    SKV_PROTO_KERNEL_EXIT,              /* skv_proto_kernel_exit */
    SKV_PROTO_AGENT_STATS,              /* skv_proto_agent_stats */
    SKV_PROTO_KERNEL_CREATE,            /* skv_proto_kernel_create */
    SKV_PROTO_KERNEL_CREATE_REPLY,      /* skv_proto_kernel_create_reply */
    SKV_PROTO_KERNEL_DESTROY,           /* skv_proto_kernel_destroy -> ack */
    SKV_PROTO_KERNEL_LOGS,              /* skv_proto_logs_request */
    SKV_PROTO_LOGS_REPLY,               /* skv_proto_logs_reply */
    SKV_PROTO_SESSION_SUBMIT,           /* skv_proto_session_submit */
    SKV_PROTO_SESSION_SUBMIT_REPLY,     /* skv_proto_session_ref */
    SKV_PROTO_SESSION_LIST,             /* skv_proto_session_list */
    SKV_PROTO_SESSION_LIST_REPLY,       /* skv_proto_session_list_reply */
    SKV_PROTO_SESSION_SHOW,             /* skv_proto_session_id */
    SKV_PROTO_SESSION_SHOW_REPLY,       /* skv_proto_session_show_reply */
    SKV_PROTO_SESSION_TERMINATE,        /* skv_proto_session_terminate */
    SKV_PROTO_SESSION_TERMINATE_REPLY,  /* skv_proto_session_ref */
    SKV_PROTO_SESSION_LOGS,             /* skv_proto_logs_request */
    SKV_PROTO_AGENT_LIST,               /* skv_proto_agent_list */
    SKV_PROTO_AGENT_LIST_REPLY,         /* skv_proto_agent_list_reply */
    SKV_PROTO_IMAGE_LIST,               /* skv_proto_image_list */
    SKV_PROTO_IMAGE_LIST_REPLY,         /* skv_proto_image_list_reply */
    SKV_PROTO_ADMIN_USER,               /* skv_proto_admin_user */
    SKV_PROTO_ADMIN_USER_REPLY,         /* skv_proto_admin_user_reply */
    SKV_PROTO_ADMIN_KEYPAIR,            /* skv_proto_admin_keypair */
    SKV_PROTO_ADMIN_KEYPAIR_REPLY,      /* skv_proto_admin_keypair_reply */
    SKV_PROTO_ADMIN_PROJECT,            /* skv_proto_admin_project */
    SKV_PROTO_ADMIN_PROJECT_REPLY,      /* skv_proto_admin_project_reply */
    SKV_PROTO_ADMIN_DOMAIN,             /* skv_proto_admin_domain */
    SKV_PROTO_ADMIN_DOMAIN_REPLY,       /* skv_proto_admin_domain_reply */
    SKV_PROTO_ADMIN_RESOURCE_POLICY,    /* skv_proto_admin_resource_policy */
    SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY,
                            /* skv_proto_admin_resource_policy_reply */
    SKV_PROTO_ADMIN_RESOURCE_GROUP,     /* skv_proto_admin_resource_group */
    SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY,
                            /* skv_proto_admin_resource_group_reply */
    SKV_PROTO_AGENT_ROUTES,             /* skv_proto_agent_routes (manager ->
                                           agent event) */
    SKV_PROTO_ADMIN_BACKUP,             /* skv_proto_admin_backup */
    SKV_PROTO_ADMIN_BACKUP_REPLY,       /* skv_proto_admin_backup_reply */
    /* exec into a running kernel (client -> manager -> agent and back) */
    SKV_PROTO_EXEC_START,               /* skv_proto_exec_start */
    SKV_PROTO_EXEC_START_REPLY,         /* skv_proto_exec_start_reply */
    SKV_PROTO_EXEC_STDIN,               /* skv_proto_exec_data (event) */
    SKV_PROTO_EXEC_OUTPUT,              /* skv_proto_exec_data (event) */
    SKV_PROTO_EXEC_OUTPUT_ACK,          /* skv_proto_exec_ack (event) */
    SKV_PROTO_EXEC_STDIN_ACK,           /* skv_proto_exec_ack (event) */
    SKV_PROTO_EXEC_RESIZE,              /* skv_proto_exec_resize (event) */
    SKV_PROTO_EXEC_SIGNAL,              /* skv_proto_exec_signal (event) */
    SKV_PROTO_EXEC_EXIT,                /* skv_proto_exec_exit (event) */
    SKV_PROTO_AGENT_ROUTES_DELTA,       /* skv_proto_agent_routes_delta
                                           (manager -> agent event) */
    /* virtual folders and their files (user -> manager) */
    SKV_PROTO_VFOLDER,                  /* skv_proto_vfolder */
    SKV_PROTO_VFOLDER_REPLY,            /* skv_proto_vfolder_reply */
    SKV_PROTO_VFOLDER_FILE,             /* skv_proto_vfolder_file */
    SKV_PROTO_VFOLDER_FILE_REPLY,       /* skv_proto_vfolder_file_reply */
    SKV_PROTO_VFOLDER_UPLOAD,           /* skv_proto_vfolder_upload */
    SKV_PROTO_VFOLDER_UPLOAD_REPLY,     /* skv_proto_vfolder_upload_reply */
    SKV_PROTO_VFOLDER_DOWNLOAD,         /* skv_proto_vfolder_download */
    SKV_PROTO_VFOLDER_DOWNLOAD_REPLY,   /* skv_proto_vfolder_download_reply */
    /* service apps: a token for the owner, resolved by the app proxy */
    SKV_PROTO_APP_TOKEN,                /* skv_proto_app_token */
    SKV_PROTO_APP_TOKEN_REPLY,          /* skv_proto_app_token_reply */
    SKV_PROTO_APP_RESOLVE,              /* skv_proto_app_resolve */
    SKV_PROTO_APP_RESOLVE_REPLY,        /* skv_proto_app_resolve_reply */
    /* quotas per resource group and the quota tree (admin -> manager) */
    SKV_PROTO_ADMIN_QUOTA,              /* skv_proto_admin_quota */
    SKV_PROTO_ADMIN_QUOTA_REPLY,        /* skv_proto_admin_quota_reply */
    SKV_PROTO_ADMIN_QUOTA_TREE,         /* skv_proto_admin_quota_tree */
    SKV_PROTO_ADMIN_QUOTA_TREE_REPLY,   /* skv_proto_admin_quota_tree_reply */
    SKV_PROTO_ADMIN_AGENT,              /* skv_proto_admin_agent; replies
                                           agent.list.reply (that agent) */
    SKV_PROTO_AGENT_DEVICE_HEALTH,      /* skv_proto_agent_device_health
                                           (event) */
    SKV_PROTO_APP_ACTIVITY,             /* skv_proto_app_activity (reply:
                                           ack) */
    SKV_PROTO_TYPE_COUNT                /* not a type: one past the last */
} skv_proto_type;

/* A service declaration "NAME=PORT[/http|/prefix|/tcp]" (session.submit's
 * services; the protocol defaults to http). NAME: 1..31 of [a-z0-9_-],
 * starting with a letter (it is a URL path segment); PORT: 1..65535.
 * http: the app proxy serves it with /s/SESSION/NAME taken off the path;
 * prefix: HTTP with the whole path passed on (an app served under that
 * prefix itself, like Jupyter with its base_url); tcp: tunnels only.
 * name must hold SKV_PROTO_SERVICE_NAME_MAX bytes, proto 8
 * ("http"/"prefix"/"tcp").
 * SKV_EINVAL naming the problem. */
#define SKV_PROTO_SERVICE_NAME_MAX 32
SKV_EXTERN int skv_proto_service_parse(const char *text, char *name,
                                       uint32_t *port, char *proto,
                                       skv_error *err);

/* "agent.register", ...; "?" for SKV_PROTO_UNKNOWN and out-of-range values. */
SKV_EXTERN const char *skv_proto_type_name(skv_proto_type type);
/* SKV_ENOENT (out set to SKV_PROTO_UNKNOWN) when the name is not known. */
SKV_EXTERN int skv_proto_type_from_name(skv_proto_type *out, const char *name,
                                        skv_error *err);
/* The kind a message of this type must have (requests, responses, events). */
SKV_EXTERN skv_proto_kind skv_proto_type_kind(skv_proto_type type);
/* For a request type: the type of its successful reply (errors are always
 * SKV_PROTO_ERROR); SKV_PROTO_UNKNOWN for other types. */
SKV_EXTERN skv_proto_type skv_proto_type_reply(skv_proto_type type);
/* sizeof the body structure of type; 0 for UNKNOWN or out of range. */
SKV_EXTERN size_t skv_proto_type_size(skv_proto_type type);
/* The authorization operation a request or event of this type needs
 * (skv_auth_may); 0 for responses. Admin and session types map to ADMIN
 * and SESSION_*; agent reports to AGENT_REPORT; kernel.* (manager to
 * agent) to ADMIN (agents accept them only from the manager's key). */
SKV_EXTERN int skv_proto_type_op(skv_proto_type type);

/* ---- framing ---------------------------------------------------------------- */

/* Write the 4-byte big-endian length prefix of a payload_len-byte payload.
 * SKV_ERANGE when payload_len is 0 or above max_frame. */
SKV_EXTERN int skv_proto_frame_header(uint8_t out[SKV_PROTO_FRAME_HEADER],
                                      size_t payload_len, size_t max_frame,
                                      skv_error *err);

typedef struct skv_proto_reader skv_proto_reader;

/* max_frame: largest payload accepted, 1..SKV_PROTO_MAX_FRAME_LIMIT
 * (0 means SKV_PROTO_DEFAULT_MAX_FRAME). */
SKV_EXTERN int skv_proto_reader_new(skv_proto_reader **out, size_t max_frame,
                                    skv_error *err);
SKV_EXTERN void skv_proto_reader_free(skv_proto_reader *r);
/* Change the largest payload accepted (0 means the default) for every frame
 * not yet taken out with skv_proto_reader_next(), including frames already
 * buffered: a buffered header above a lowered limit fails the reader with
 * SKV_EPROTO, as feed would. A server raises a connection's limit once its
 * first request was authenticated (sokovan-manager: preauth_frame_max).
 * SKV_EINVAL for NULL or a limit above SKV_PROTO_MAX_FRAME_LIMIT. */
SKV_EXTERN int skv_proto_reader_set_max_frame(skv_proto_reader *r,
                                              size_t max_frame,
                                              skv_error *err);
/* Append received bytes (copied). A frame header announcing a length of 0
 * or above max_frame fails with SKV_EPROTO as soon as its 4 bytes are in,
 * before its payload is buffered; after any error the reader stays failed
 * (the connection is unusable: close it). */
SKV_EXTERN int skv_proto_reader_feed(skv_proto_reader *r, const void *data,
                                     size_t len, skv_error *err);
/* Take the next complete frame: returns 1 and sets *payload and *len (borrowed:
 * valid until the next feed/next/free call), 0 when more bytes are needed,
 * or a negative error (the same sticky error as feed). */
SKV_EXTERN int skv_proto_reader_next(skv_proto_reader *r, const void **payload,
                                     size_t *len, skv_error *err);
/* Bytes buffered and not yet returned as frames. */
SKV_EXTERN size_t skv_proto_reader_buffered(const skv_proto_reader *r);

/* ---- envelope ----------------------------------------------------------------- */

typedef struct skv_proto_envelope {
    uint32_t version;          /* SKV_PROTO_VERSION */
    skv_proto_kind kind;
    uint64_t request_id;       /* responses echo the request's */
    skv_proto_type type;       /* SKV_PROTO_UNKNOWN: see type_name */
    char type_name[SKV_PROTO_TYPE_NAME_MAX];
    int64_t timestamp_ms;      /* sender's clock, Unix ms */
    void *body;                /* encoded body (skv_proto_body_encode) */
    size_t body_len;
    int has_auth;              /* 1: auth is set */
    skv_auth_block auth;
} skv_proto_envelope;

/* Encode a complete frame: length prefix + envelope. type_name is used when
 * type is SKV_PROTO_UNKNOWN, else the type's name. Free with skv_free.
 * SKV_ERANGE when the payload would exceed max_frame (0 = the default). */
SKV_EXTERN int skv_proto_envelope_encode(void **frame, size_t *frame_len,
                                         const skv_proto_envelope *env,
                                         size_t max_frame, skv_error *err);
/* Decode a frame payload (without the length prefix). On success *out owns
 * a copy of the body: release with skv_proto_envelope_free. An unknown
 * type name decodes fine (type SKV_PROTO_UNKNOWN) so the caller can answer
 * with an error; a known type with the wrong kind is SKV_EPROTO; a version
 * other than SKV_PROTO_VERSION is SKV_EVERSION. */
SKV_EXTERN int skv_proto_envelope_decode(skv_proto_envelope *out,
                                         const void *payload, size_t len,
                                         skv_error *err);
/* Frees the body and zeroes the envelope. Accepts NULL. */
SKV_EXTERN void skv_proto_envelope_free(skv_proto_envelope *env);

/* ---- bodies -------------------------------------------------------------------- */

/* Encode body (a pointer to the structure of type) as a msgpack map. The
 * same bounds the decoder enforces are checked: SKV_EINVAL naming the
 * field when a string is too long, an array too big or a required field
 * missing. Free the buffer with skv_free. */
SKV_EXTERN int skv_proto_body_encode(void **out, size_t *out_len,
                                     skv_proto_type type, const void *body,
                                     skv_error *err);
/* Decode untrusted bytes into *out (the structure of type, overwritten).
 * Unknown keys are skipped (newer peers may add fields). On failure *out
 * is left zeroed and owns nothing. */
SKV_EXTERN int skv_proto_body_decode(void *out, skv_proto_type type,
                                     const void *buf, size_t len,
                                     skv_error *err);
/* Free what a decoded (or caller-built, with library-allocated members)
 * body owns and zero it. Accepts NULL. */
SKV_EXTERN void skv_proto_body_free(skv_proto_type type, void *body);

/* ---- signing and convenience ------------------------------------------------------ */

typedef struct skv_proto_credentials {
    const char *access_key;
    const char *secret_key;
} skv_proto_credentials;

/* Fill env->auth (and set has_auth and timestamp_ms = now_ms): sign the
 * envelope's version, kind, id, type name and body. nonce NULL draws a
 * random one (the normal case; tests pass a fixed one). */
SKV_EXTERN int skv_proto_envelope_sign(skv_proto_envelope *env,
                                       const skv_proto_credentials *cred,
                                       int64_t now_ms,
                                       const uint8_t *nonce, skv_error *err);
/* Verify a decoded envelope's auth block at now_ms. SKV_EAUTH when it has
 * none or it does not verify (see skv_auth_verify). */
SKV_EXTERN int skv_proto_envelope_verify(skv_auth_verifier *v,
                                         skv_auth_principal *principal,
                                         const skv_proto_envelope *env,
                                         int64_t now_ms, skv_error *err);

/* Encode body, wrap it in an envelope (signed when cred is not NULL) and
 * frame it, in one call. kind must match the type. Free with skv_free. */
SKV_EXTERN int skv_proto_message_encode(void **frame, size_t *frame_len,
                                        skv_proto_kind kind,
                                        uint64_t request_id,
                                        skv_proto_type type, const void *body,
                                        int64_t now_ms,
                                        const skv_proto_credentials *cred,
                                        skv_error *err);
/* The error response to a request: type "error" with code (an SKV_E*),
 * message and the request's type name (may be NULL). */
SKV_EXTERN int skv_proto_error_encode(void **frame, size_t *frame_len,
                                      uint64_t request_id, int code,
                                      const char *message,
                                      const char *request_type, int64_t now_ms,
                                      const skv_proto_credentials *cred,
                                      skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_PROTO_H */
