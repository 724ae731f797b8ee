/*
 * sokovan/auth.h - authentication and authorization for the wire protocol.
 *
 * Users and agents hold an access key (public name) and a secret key. A
 * signed message carries an auth block: access key, timestamp, a random
 * nonce and an HMAC-SHA256 signature over the canonical byte string of the
 * message (see docs/protocol.md, "Authentication"). All cryptography is
 * libsodium's; signatures are compared in constant time.
 *
 * A verifier holds the known keys (secrets are wiped with sodium_memzero
 * when removed or freed), refuses timestamps further than max_skew_ms from
 * the caller's clock (time is always passed in explicitly) and refuses
 * replays with a bounded nonce cache per access key.
 *
 * Authorization: skv_auth_may() decides whether a principal (user, admin
 * or agent) may perform an operation, e.g. terminate a session owned by a
 * given user: users act only on their own sessions, admins on everything,
 * agents only report on their own behalf.
 *
 * Thread-safety: a verifier is modified by every successful verification
 * (its nonce cache) and by key changes, so it needs exclusive access; use
 * one per thread or a lock. The free functions here are thread-safe.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_AUTH_H
#define SOKOVAN_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SKV_AUTH_NONCE_BYTES 16
#define SKV_AUTH_SIG_BYTES 32      /* HMAC-SHA256 */
/* Access keys: 1..63 characters of [A-Za-z0-9_-]; the buffer includes NUL. */
#define SKV_AUTH_ACCESS_KEY_MAX 64
/* Secret keys: 16..127 printable ASCII characters; buffer includes NUL. */
#define SKV_AUTH_SECRET_KEY_MAX 128
#define SKV_AUTH_SECRET_KEY_MIN 16
/* Generated keys: "AK" + 20 upper-case hex digits; 43 url-safe base64
 * characters (32 random bytes) for the secret. */
#define SKV_AUTH_GENERATED_ACCESS_KEY_LEN 22
#define SKV_AUTH_GENERATED_SECRET_KEY_LEN 43
/* User names in principals: 1..127 characters, NUL included in the max. */
#define SKV_AUTH_USER_MAX 128

typedef enum skv_auth_role {
    SKV_AUTH_ROLE_USER = 1,  /* acts on its own sessions */
    SKV_AUTH_ROLE_ADMIN = 2, /* manages everything */
    SKV_AUTH_ROLE_AGENT = 3  /* an agent daemon reporting to the manager */
} skv_auth_role;

/* "user", "admin", "agent"; "?" for others. */
SKV_EXTERN const char *skv_auth_role_name(skv_auth_role role);
/* Parse a role name. SKV_EINVAL for anything else. */
SKV_EXTERN int skv_auth_role_parse(skv_auth_role *out, const char *name,
                                   skv_error *err);

/* Who signed a message. For agents, user is the agent id. */
typedef struct skv_auth_principal {
    char user[SKV_AUTH_USER_MAX];
    skv_auth_role role;
} skv_auth_principal;

/* ---- keys ----------------------------------------------------------------- */

/* Generate a fresh random key pair (libsodium's CSPRNG). Buffers must hold
 * SKV_AUTH_ACCESS_KEY_MAX and SKV_AUTH_SECRET_KEY_MAX bytes. Wipe the secret
 * with skv_auth_wipe() when done with it. */
SKV_EXTERN int skv_auth_keypair_generate(char *access_key, char *secret_key,
                                         skv_error *err);
/* Syntax checks (see the limits above). SKV_EINVAL naming the problem. */
SKV_EXTERN int skv_auth_access_key_check(const char *access_key,
                                         skv_error *err);
SKV_EXTERN int skv_auth_secret_key_check(const char *secret_key,
                                         skv_error *err);
/* Zero memory in a way the compiler cannot optimise out. Accepts NULL. */
SKV_EXTERN void skv_auth_wipe(void *buf, size_t len);
/* Fill a nonce with random bytes. SKV_ENOTSUP only when libsodium cannot
 * initialise (then the nonce is left untouched and must not be used). */
SKV_EXTERN int skv_auth_nonce_generate(uint8_t nonce[SKV_AUTH_NONCE_BYTES],
                                       skv_error *err);

/* ---- signing ---------------------------------------------------------------- */

/* The auth block carried by a signed message. */
typedef struct skv_auth_block {
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    int64_t timestamp_ms;                    /* signer's clock, Unix ms */
    uint8_t nonce[SKV_AUTH_NONCE_BYTES];     /* random, never reused */
    uint8_t signature[SKV_AUTH_SIG_BYTES];   /* HMAC-SHA256 */
} skv_auth_block;

/* The parts of a message the signature covers besides the auth block. */
typedef struct skv_auth_message {
    uint32_t version;      /* protocol version */
    uint32_t kind;         /* request / response / event (proto.h) */
    uint64_t request_id;
    const char *type;      /* message type name, 1..63 chars of [a-z0-9._] */
    const void *body;      /* the encoded body bytes exactly as sent */
    size_t body_len;
} skv_auth_message;

/* The canonical byte string that is signed (caller frees with skv_free):
 *   "SKV-HMAC-SHA256\n" version "\n" kind "\n" request_id "\n" type "\n"
 *   access_key "\n" timestamp_ms "\n" hex(nonce) "\n" body
 * numbers in decimal ASCII, hex in lower case. A body of 65536 bytes or
 * more is signed through its Poly1305 tag under a key derived from the
 * secret (docs/protocol.md, "Bulk bodies"): SKV_ENOTSUP for those. */
SKV_EXTERN int skv_auth_canonical(void **out, size_t *out_len,
                                  const skv_auth_block *block,
                                  const skv_auth_message *msg, skv_error *err);
/* Compute block->signature from block's access key, timestamp and nonce,
 * msg, and the secret key. */
SKV_EXTERN int skv_auth_sign(skv_auth_block *block, const skv_auth_message *msg,
                             const char *secret_key, skv_error *err);

/* ---- verification ------------------------------------------------------------ */

#define SKV_AUTH_VERIFIER_OPTIONS_VERSION 1

typedef struct skv_auth_verifier_options {
    unsigned version;            /* SKV_AUTH_VERIFIER_OPTIONS_VERSION */
    int64_t max_skew_ms;         /* |now - timestamp| allowed; > 0 */
    size_t max_nonces_per_key;   /* replay cache bound per access key; > 0 */
} skv_auth_verifier_options;

/* 5 minutes of skew; 131072 remembered nonces per key. A key that sends
 * more within the window is not refused: its oldest nonces (by 1/64 of the
 * window) are forgotten and requests timestamped before them refused, so
 * its window shrinks to about max_nonces_per_key / its request rate. */
#define SKV_AUTH_VERIFIER_OPTIONS_INIT \
    {SKV_AUTH_VERIFIER_OPTIONS_VERSION, 300000, 131072}

typedef struct skv_auth_verifier skv_auth_verifier;

/* opts NULL means the defaults. */
SKV_EXTERN int skv_auth_verifier_new(skv_auth_verifier **out,
                                     const skv_auth_verifier_options *opts,
                                     skv_error *err);
/* Wipes every secret it holds. Accepts NULL. */
SKV_EXTERN void skv_auth_verifier_free(skv_auth_verifier *v);
/* Register a key (the secret is copied). SKV_EEXIST when the access key is
 * known already. */
SKV_EXTERN int skv_auth_verifier_add_key(skv_auth_verifier *v,
                                         const char *access_key,
                                         const char *secret_key,
                                         const skv_auth_principal *principal,
                                         skv_error *err);
/* Forget a key, wiping its secret and its nonce cache. SKV_ENOENT when
 * unknown. */
SKV_EXTERN int skv_auth_verifier_remove_key(skv_auth_verifier *v,
                                            const char *access_key,
                                            skv_error *err);
SKV_EXTERN size_t skv_auth_verifier_key_count(const skv_auth_verifier *v);
/* Nonces currently remembered for an access key (0 when unknown). */
SKV_EXTERN size_t skv_auth_verifier_nonce_count(const skv_auth_verifier *v,
                                                const char *access_key);

/* Verify a signed message at time now_ms (Unix ms, the caller's clock).
 * On success the nonce is remembered and *principal (may be NULL) names the
 * signer. SKV_EAUTH for an unknown key, a wrong signature, a timestamp
 * more than max_skew_ms away from now_ms or a nonce seen before; SKV_EBUSY
 * when the key's nonce cache is full within one 1/64 of the window, or
 * when the timestamp is older than the nonces the key's full cache had to
 * forget (sign the request again; never accepted unchecked). */
SKV_EXTERN int skv_auth_verify(skv_auth_verifier *v,
                               skv_auth_principal *principal,
                               const skv_auth_block *block,
                               const skv_auth_message *msg, int64_t now_ms,
                               skv_error *err);

/* Mark a nonce as used, as if a request carrying it had been verified at
 * now_ms. For hosts that persist the nonces of accepted requests: fed back
 * after a restart, they make replays of those requests fail. Returns 0 when
 * remembered, already known, or outside [now - skew, now + skew] (such a
 * request is refused as stale anyway); SKV_ENOENT for an unknown key,
 * SKV_EBUSY when the key's cache is full, SKV_EINVAL, SKV_ENOMEM. */
SKV_EXTERN int skv_auth_verifier_remember(skv_auth_verifier *v,
                                          const char *access_key,
                                          const uint8_t *nonce,
                                          int64_t timestamp_ms,
                                          int64_t now_ms, skv_error *err);

/* ---- authorization ------------------------------------------------------------ */

typedef enum skv_auth_op {
    SKV_AUTH_OP_SESSION_SUBMIT = 1,    /* owner: the session's owner */
    SKV_AUTH_OP_SESSION_READ = 2,      /* list/show/logs; owner */
    SKV_AUTH_OP_SESSION_CONTROL = 3,   /* terminate; owner */
    SKV_AUTH_OP_CLUSTER_READ = 4,      /* list agents, images */
    SKV_AUTH_OP_ADMIN = 5,             /* users, keys, projects, ... */
    SKV_AUTH_OP_AGENT_REPORT = 6       /* register/heartbeat/events; owner:
                                        * the agent id reported */
} skv_auth_op;

/* "session.submit", ...; "?" for others. */
SKV_EXTERN const char *skv_auth_op_name(skv_auth_op op);

/* May principal p perform op on an object owned by owner? owner is the
 * session's owner for session operations, the agent id for AGENT_REPORT,
 * and ignored (may be NULL) otherwise. Returns 0 or SKV_EPERM with a
 * message; SKV_EINVAL for bad arguments.
 * Rules: admins may do everything except AGENT_REPORT; users may submit,
 * read and control sessions they own and read the cluster; agents may only
 * report as themselves. */
SKV_EXTERN int skv_auth_may(const skv_auth_principal *p, skv_auth_op op,
                            const char *owner, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_AUTH_H */
