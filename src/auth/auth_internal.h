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

#endif
