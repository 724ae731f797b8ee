/* The canonical byte string of a message and its HMAC-SHA256 signature.
 * The same piece-by-piece walk feeds both the HMAC (streaming, no copy of
 * the body) and skv_auth_canonical(), so the two can never disagree.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "auth_internal.h"
#include "skv_internal.h"
#include "skv_sha256.h"

#define CANON_PREFIX "SKV-HMAC-SHA256\n"
#define TYPE_NAME_MAX 64

typedef void (*piece_fn)(const void *data, size_t len, void *payload);

/* Everything before the body: small and bounded, formatted into buf. */
static size_t canon_head(char *buf, size_t bufsz, const skv_auth_block *b,
                         const skv_auth_message *m)
{
    char hex[SKV_AUTH_NONCE_BYTES * 2 + 1];
    sodium_bin2hex(hex, sizeof hex, b->nonce, SKV_AUTH_NONCE_BYTES);
    int n = snprintf(buf, bufsz,
                     CANON_PREFIX "%" PRIu32 "\n%" PRIu32 "\n%" PRIu64
                     "\n%s\n%s\n%" PRId64 "\n%s\n",
                     m->version, m->kind, m->request_id, m->type,
                     b->access_key, b->timestamp_ms, hex);
    return n < 0 ? 0 : (size_t)n;
}

/* head: prefix(16) + 3 numbers(<=20 each) + type(63) + key(63) + ts(20)
 * + nonce hex(32) + 7 newlines < 320. */
#define CANON_HEAD_MAX 320

static void canon_walk(const skv_auth_block *b, const skv_auth_message *m,
                       piece_fn fn, void *payload)
{
    char head[CANON_HEAD_MAX];
    size_t n = canon_head(head, sizeof head, b, m);
    fn(head, n, payload);
    if (m->body_len)
        fn(m->body, m->body_len, payload);
}

int skv__auth_check_inputs(const skv_auth_block *block,
                           const skv_auth_message *msg, skv_error *err)
{
    if (!block || !msg)
        return skv__err(err, SKV_EINVAL, "auth: NULL block or message");
    if (memchr(block->access_key, 0, sizeof block->access_key) == NULL)
        return skv__err(err, SKV_EINVAL, "auth: access key not terminated");
    int rc = skv_auth_access_key_check(block->access_key, err);
    if (rc)
        return rc;
    if (!msg->type || !*msg->type || strnlen(msg->type, TYPE_NAME_MAX) >= TYPE_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "auth: message type empty or too long");
    for (const char *c = msg->type; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_'))
            return skv__err(err, SKV_EINVAL,
                            "auth: message type has invalid character '%c'", *c);
    if (msg->body_len && !msg->body)
        return skv__err(err, SKV_EINVAL, "auth: body NULL with non-zero length");
    return 0;
}

static void hmac_piece(const void *data, size_t len, void *payload)
{
    skv__hmac256_update(payload, data, len);
}

/* OpenSSL's HMAC (SHA extensions where the CPU has them): every byte of a
 * file upload passes through here. */
int skv__auth_hmac(uint8_t mac[SKV_AUTH_SIG_BYTES], const skv_auth_block *block,
                   const skv_auth_message *msg, const char *key, size_t key_len,
                   skv_error *err)
{
    skv__hmac256 st;
    int rc = skv__hmac256_init(&st, key, key_len, err);
    if (!rc) {
        canon_walk(block, msg, hmac_piece, &st);
        rc = skv__hmac256_final(&st, mac, err);
    }
    skv__hmac256_free(&st); /* wipes the key material it holds */
    return rc;
}

int skv_auth_sign(skv_auth_block *block, const skv_auth_message *msg,
                  const char *secret_key, skv_error *err)
{
    int rc = skv__auth_check_inputs(block, msg, err);
    if (!rc)
        rc = skv_auth_secret_key_check(secret_key, err);
    if (rc)
        return rc;
    if (sodium_init() < 0) /* sodium_bin2hex of the nonce */
        return skv__err(err, SKV_ENOTSUP, "libsodium failed to initialise");
    return skv__auth_hmac(block->signature, block, msg, secret_key,
                          strlen(secret_key), err);
}

typedef struct canon_buf {
    uint8_t *p;
    size_t len;
} canon_buf;

static void buf_piece(const void *data, size_t len, void *payload)
{
    canon_buf *cb = payload;
    memcpy(cb->p + cb->len, data, len);
    cb->len += len;
}

int skv_auth_canonical(void **out, size_t *out_len, const skv_auth_block *block,
                       const skv_auth_message *msg, skv_error *err)
{
    if (!out || !out_len)
        return skv__err(err, SKV_EINVAL, "auth_canonical: NULL out-pointer");
    int rc = skv__auth_check_inputs(block, msg, err);
    if (rc)
        return rc;
    if (msg->body_len > SIZE_MAX - CANON_HEAD_MAX)
        return skv__err(err, SKV_ERANGE, "auth_canonical: body too large");
    canon_buf cb = {skv__malloc(CANON_HEAD_MAX + msg->body_len), 0};
    if (!cb.p)
        return skv__err(err, SKV_ENOMEM, "auth_canonical: out of memory");
    canon_walk(block, msg, buf_piece, &cb);
    *out = cb.p;
    *out_len = cb.len;
    return 0;
}
