/* The body tag of a bulk message (body of SKV__AUTH_BULK_MIN bytes or
 * more, in practice a file chunk): Poly1305 of the body under a one-time
 * key derived from the secret and the message's head. HMAC-SHA256 over a
 * MiB chunk was a third of both the manager's and the CLI's CPU in an
 * upload; Poly1305 (OpenSSL's, AVX2) costs a quarter of that, and the
 * HMAC then runs over the head and this 16-byte tag only.
 *
 * Why this is sound: Poly1305 is a one-time MAC, secure when its key is
 * uniformly random and used for one message. The key is
 * HMAC-SHA256(secret, "SKV-POLY1305-KEY\n" head) - a PRF output over a
 * head that holds the message's fresh nonce, so every message has its
 * own key, and the key never leaves the signer and the verifier. The
 * signature then authenticates head and tag under a different prefix
 * (sign.c), so a forged body needs a Poly1305 forgery under an unknown
 * key (probability about len/16 * 2^-106 per try).
 * SPDX-License-Identifier: Apache-2.0 */
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "auth_internal.h"
#include "skv_internal.h"
#include "skv_sha256.h"

static EVP_MAC *g_poly;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void fetch_poly(void)
{
    g_poly = EVP_MAC_fetch(NULL, "POLY1305", NULL);
}

/* HMAC-SHA256(secret, "SKV-POLY1305-KEY\n" head): 32 bytes = (r, s). */
static int one_time_key(uint8_t key[SKV__SHA256_BYTES], const char *secret,
                        size_t secret_len, const char *head, size_t head_len,
                        skv_error *err)
{
    static const char prefix[] = "SKV-POLY1305-KEY\n";
    skv__hmac256 st;
    int rc = skv__hmac256_init(&st, secret, secret_len, err);
    if (!rc) {
        skv__hmac256_update(&st, prefix, sizeof prefix - 1);
        skv__hmac256_update(&st, head, head_len);
        rc = skv__hmac256_final(&st, key, err);
    }
    skv__hmac256_free(&st);
    return rc;
}

static int poly1305(uint8_t tag[SKV__AUTH_BODY_TAG_BYTES],
                    const uint8_t key[SKV__SHA256_BYTES], const void *body,
                    size_t len, skv_error *err)
{
    pthread_once(&g_once, fetch_poly);
    if (!g_poly)
        return skv__err(err, SKV_ENOTSUP, "libcrypto has no POLY1305 "
                        "(OpenSSL providers?)");
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(g_poly);
    size_t n = 0;
    int ok = c && EVP_MAC_init(c, key, SKV__SHA256_BYTES, NULL) == 1 &&
             EVP_MAC_update(c, body, len) == 1 &&
             EVP_MAC_final(c, tag, &n, SKV__AUTH_BODY_TAG_BYTES) == 1 &&
             n == SKV__AUTH_BODY_TAG_BYTES;
    EVP_MAC_CTX_free(c); /* wipes the key it holds */
    return ok ? 0 : skv__err(err, SKV_EIO, "poly1305: cannot tag the body");
}

int skv__auth_body_tag(uint8_t tag[SKV__AUTH_BODY_TAG_BYTES],
                       const char *secret, size_t secret_len,
                       const char *head, size_t head_len, const void *body,
                       size_t body_len, skv_error *err)
{
    uint8_t key[SKV__SHA256_BYTES];
    int rc = one_time_key(key, secret, secret_len, head, head_len, err);
    if (!rc)
        rc = poly1305(tag, key, body, body_len, err);
    OPENSSL_cleanse(key, sizeof key);
    return rc;
}
