/* The canonical byte string of a message and its HMAC-SHA256 signature.
 * The same piece-by-piece walk feeds both the HMAC (streaming, no copy of
 * the body) and skv_auth_canonical(), so the two can never disagree.
 * A bulk body (SKV__AUTH_BULK_MIN bytes or more: file chunks) enters the
 * HMAC as its Poly1305 tag under a per-message key (body_mac.c), under a
 * prefix of its own so the two forms never sign the same string.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "auth_internal.h"
#include "skv_internal.h"
#include "skv_sha256.h"

#define CANON_PREFIX "SKV-HMAC-SHA256\n"
#define BULK_PREFIX "SKV-HMAC-SHA256-POLY1305\n"
#define TYPE_NAME_MAX 64

typedef void (*piece_fn)(const void *data, size_t len, void *payload);

/* The head is assembled by copying, without snprintf: it is built for
 * every frame signed or verified (one snprintf of it was ~0.8 % of the
 * manager's CPU at 1,000 agents). Past the end, len grows on without
 * writing, so the result is >= bufsz exactly when snprintf's would be. */
typedef struct head_buf {
    char *p;
    size_t len, cap;
} head_buf;

static void put(head_buf *h, const char *s, size_t n)
{
    if (h->len < h->cap)
        memcpy(h->p + h->len, s, n < h->cap - h->len ? n : h->cap - h->len);
    h->len += n;
}

static void put_line(head_buf *h, const char *s)
{
    put(h, s, strlen(s));
    put(h, "\n", 1);
}

static void put_u64(head_buf *h, uint64_t v, bool neg)
{
    char d[21];
    size_t i = sizeof d;
    do
        d[--i] = (char)('0' + v % 10);
    while ((v /= 10));
    if (neg)
        d[--i] = '-';
    put(h, d + i, sizeof d - i);
    put(h, "\n", 1);
}

/* Everything before the body: small and bounded, formatted into buf
 * (prefix: CANON_PREFIX or BULK_PREFIX); returns its length (NUL not
 * counted, and not written: callers take the length). */
static size_t canon_head(char *buf, size_t bufsz, const char *prefix,
                         const skv_auth_block *b, const skv_auth_message *m)
{
    char hex[SKV_AUTH_NONCE_BYTES * 2 + 1];
    sodium_bin2hex(hex, sizeof hex, b->nonce, SKV_AUTH_NONCE_BYTES);
    head_buf h = {buf, 0, bufsz};
    int64_t ts = b->timestamp_ms;
    put(&h, prefix, strlen(prefix));
    put_u64(&h, m->version, false);
    put_u64(&h, m->kind, false);
    put_u64(&h, m->request_id, false);
    put_line(&h, m->type);
    put_line(&h, b->access_key);
    put_u64(&h, ts < 0 ? 0 - (uint64_t)ts : (uint64_t)ts, ts < 0);
    put_line(&h, hex);
    return h.len;
}

/* head: prefix(<=25) + 3 numbers(<=20 each) + type(63) + key(63) + ts(20)
 * + nonce hex(32) + 7 newlines < 320. */
#define CANON_HEAD_MAX 320

static void canon_walk(const skv_auth_block *b, const skv_auth_message *m,
                       piece_fn fn, void *payload)
{
    char head[CANON_HEAD_MAX];
    size_t n = canon_head(head, sizeof head, CANON_PREFIX, b, m);
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

/* A bulk body: HMAC over BULK_PREFIX, the head's lines and the body's
 * Poly1305 tag (its one-time key derived from the same lines). */
static int bulk_hmac(skv__hmac256 *st, const skv_auth_block *block,
                     const skv_auth_message *msg, const char *key,
                     size_t key_len, skv_error *err)
{
    char head[CANON_HEAD_MAX];
    uint8_t tag[SKV__AUTH_BODY_TAG_BYTES];
    size_t n = canon_head(head, sizeof head, BULK_PREFIX, block, msg);
    size_t skip = sizeof BULK_PREFIX - 1; /* the key is over the lines */
    if (n <= skip || n >= sizeof head)
        return skv__err(err, SKV_EINVAL, "auth: head too long");
    int rc = skv__auth_body_tag(tag, key, key_len, head + skip, n - skip,
                                msg->body, msg->body_len, err);
    if (rc)
        return rc;
    skv__hmac256_update(st, head, n);
    skv__hmac256_update(st, tag, sizeof tag);
    return 0;
}

/* OpenSSL's HMAC (SHA extensions where the CPU has them) over the
 * canonical string, or over head + tag for a bulk body. */
int skv__auth_hmac(uint8_t mac[SKV_AUTH_SIG_BYTES], const skv_auth_block *block,
                   const skv_auth_message *msg, const char *key, size_t key_len,
                   skv_error *err)
{
    skv__hmac256 st;
    int rc = skv__hmac256_init(&st, key, key_len, err);
    if (!rc && msg->body_len >= SKV__AUTH_BULK_MIN)
        rc = bulk_hmac(&st, block, msg, key, key_len, err);
    else if (!rc)
        canon_walk(block, msg, hmac_piece, &st);
    if (!rc)
        rc = skv__hmac256_final(&st, mac, err);
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
    if (msg->body_len >= SKV__AUTH_BULK_MIN)
        return skv__err(err, SKV_ENOTSUP, "auth_canonical: a body of %d "
                        "bytes or more is signed through its Poly1305 tag, "
                        "which needs the secret key", SKV__AUTH_BULK_MIN);
    canon_buf cb = {skv__malloc(CANON_HEAD_MAX + msg->body_len), 0};
    if (!cb.p)
        return skv__err(err, SKV_ENOMEM, "auth_canonical: out of memory");
    canon_walk(block, msg, buf_piece, &cb);
    *out = cb.p;
    *out_len = cb.len;
    return 0;
}
