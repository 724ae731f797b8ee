/* Streamed SHA-256 and HMAC-SHA256 on OpenSSL's libcrypto (EVP), which
 * uses the CPU's SHA extensions where there are some: the request HMAC and
 * the content hashes of file transfer run over every byte moved, so their
 * speed is the transfer's (libsodium's portable SHA-256 was 73 % of the
 * manager's CPU in an upload). Internal (not installed).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SHA256_H
#define SKV_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#define SKV__SHA256_BYTES 32

/* ctx is NULL until init and after free; free accepts either. bad: an
 * update failed, so peek/final refuse instead of giving a wrong digest. */
typedef struct skv__sha256 {
    void *ctx;
    bool bad;
} skv__sha256;

int skv__sha256_init(skv__sha256 *h, skv_error *err);
void skv__sha256_update(skv__sha256 *h, const void *data, size_t len);
/* The digest of everything so far; the state goes on (a copy is
 * finalised), so more updates may follow. */
int skv__sha256_peek(const skv__sha256 *h, uint8_t out[SKV__SHA256_BYTES],
                     skv_error *err);
void skv__sha256_free(skv__sha256 *h);

typedef struct skv__hmac256 {
    void *ctx;
    bool bad;
} skv__hmac256;

int skv__hmac256_init(skv__hmac256 *h, const void *key, size_t key_len,
                      skv_error *err);
void skv__hmac256_update(skv__hmac256 *h, const void *data, size_t len);
int skv__hmac256_final(skv__hmac256 *h, uint8_t out[SKV__SHA256_BYTES],
                       skv_error *err);
/* Frees the context, which wipes the key material it holds. */
void skv__hmac256_free(skv__hmac256 *h);

#endif
