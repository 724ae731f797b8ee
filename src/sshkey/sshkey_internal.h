/* Internal to src/sshkey: the key object and the OpenSSH encoders.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SSHKEY_INTERNAL_H
#define SKV_SSHKEY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/sshkey.h"

#define SKV__SSHKEY_SECRET_BYTES 64 /* libsodium's sk: seed || public key */

struct skv_sshkey {
    uint8_t pk[SKV_SSHKEY_PUBLIC_BYTES];
    uint8_t sk[SKV__SSHKEY_SECRET_BYTES];
    char *private_text; /* wiped on free */
    size_t private_len;
    char *public_line;
};

/* Fill key->private_text and key->public_line from pk, sk and comment
 * (already validated). On failure nothing is allocated. */
int skv__sshkey_encode(skv_sshkey *key, const char *comment, skv_error *err);

#endif
