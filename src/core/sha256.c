/* skv_sha256.h on OpenSSL EVP. Updates return nothing (they run in the
 * middle of I/O loops); a failed one marks the state bad and the digest
 * is refused at peek/final, never given wrong.
 * SPDX-License-Identifier: Apache-2.0 */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "skv_internal.h"
#include "skv_sha256.h"

/* Fetched once: an explicit fetch per context would take OpenSSL's
 * provider locks on every request. */
static EVP_MD *g_md;
static EVP_MAC *g_mac;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void fetch_algs(void)
{
    g_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    g_mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

static int algs(skv_error *err)
{
    pthread_once(&g_once, fetch_algs);
    return g_md && g_mac ? 0
                         : skv__err(err, SKV_ENOTSUP, "libcrypto has no "
                                    "SHA256/HMAC (OpenSSL providers?)");
}

int skv__sha256_init(skv__sha256 *h, skv_error *err)
{
    h->ctx = NULL;
    h->bad = false;
    int rc = algs(err);
    EVP_MD_CTX *c = rc ? NULL : EVP_MD_CTX_new();
    if (!rc && (!c || EVP_DigestInit_ex2(c, g_md, NULL) != 1)) {
        EVP_MD_CTX_free(c);
        return skv__err(err, SKV_ENOMEM, "sha256: cannot set up a context");
    }
    h->ctx = c;
    return rc;
}

void skv__sha256_update(skv__sha256 *h, const void *data, size_t len)
{
    if (!h->ctx || (len && EVP_DigestUpdate(h->ctx, data, len) != 1))
        h->bad = true;
}

int skv__sha256_peek(const skv__sha256 *h, uint8_t out[SKV__SHA256_BYTES],
                     skv_error *err)
{
    EVP_MD_CTX *c = h->ctx && !h->bad ? EVP_MD_CTX_new() : NULL;
    unsigned n = 0;
    int ok = c && EVP_MD_CTX_copy_ex(c, h->ctx) == 1 &&
             EVP_DigestFinal_ex(c, out, &n) == 1 && n == SKV__SHA256_BYTES;
    EVP_MD_CTX_free(c);
    return ok ? 0 : skv__err(err, SKV_EIO, "sha256: digest failed");
}

void skv__sha256_free(skv__sha256 *h)
{
    if (h) {
        EVP_MD_CTX_free(h->ctx);
        h->ctx = NULL;
    }
}

int skv__hmac256_init(skv__hmac256 *h, const void *key, size_t key_len,
                      skv_error *err)
{
    h->ctx = NULL;
    h->bad = false;
    int rc = algs(err);
    EVP_MAC_CTX *c = rc ? NULL : EVP_MAC_CTX_new(g_mac);
    OSSL_PARAM p[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_end()};
    if (!rc && (!c || EVP_MAC_init(c, key, key_len, p) != 1)) {
        EVP_MAC_CTX_free(c);
        return skv__err(err, SKV_ENOMEM, "hmac-sha256: cannot set up a "
                        "context");
    }
    h->ctx = c;
    return rc;
}

void skv__hmac256_update(skv__hmac256 *h, const void *data, size_t len)
{
    if (!h->ctx || (len && EVP_MAC_update(h->ctx, data, len) != 1))
        h->bad = true;
}

int skv__hmac256_final(skv__hmac256 *h, uint8_t out[SKV__SHA256_BYTES],
                       skv_error *err)
{
    size_t n = 0;
    int ok = h->ctx && !h->bad &&
             EVP_MAC_final(h->ctx, out, &n, SKV__SHA256_BYTES) == 1 &&
             n == SKV__SHA256_BYTES;
    return ok ? 0 : skv__err(err, SKV_EIO, "hmac-sha256: final failed");
}

void skv__hmac256_free(skv__hmac256 *h)
{
    if (h) {
        EVP_MAC_CTX_free(h->ctx);
        h->ctx = NULL;
    }
}
