/* Private to src/auth: the canonical string and HMAC shared by signing and
 * verification.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_AUTH_INTERNAL_H
#define SKV_AUTH_INTERNAL_H

#include "sokovan/auth.h"

/* Validate block (access key) and msg (type name, body pointer). */
int skv__auth_check_inputs(const skv_auth_block *block,
                           const skv_auth_message *msg, skv_error *err);
/* HMAC-SHA256 of the canonical string with key (len bytes). Inputs must
 * have passed skv__auth_check_inputs. Fails only when libcrypto cannot
 * set up a context (out of memory). */
int skv__auth_hmac(uint8_t mac[SKV_AUTH_SIG_BYTES], const skv_auth_block *block,
                   const skv_auth_message *msg, const char *key, size_t key_len,
                   skv_error *err);

/* Bodies this large (file chunks) are signed through their Poly1305 tag
 * (body_mac.c); smaller ones enter the HMAC whole. Part of the protocol:
 * signer and verifier must agree (docs/protocol.md, section 5). */
#define SKV__AUTH_BULK_MIN 65536
#define SKV__AUTH_BODY_TAG_BYTES 16

/* Poly1305 tag of body under HMAC-SHA256(secret, "SKV-POLY1305-KEY\n"
 * lines), lines being the canonical head after its prefix (it holds the
 * nonce, so the key is the message's own). */
int skv__auth_body_tag(uint8_t tag[SKV__AUTH_BODY_TAG_BYTES],
                       const char *secret, size_t secret_len,
                       const char *lines, size_t lines_len, const void *body,
                       size_t body_len, skv_error *err);

#endif
