/* The session's SSH key pair for its owner (app.token with ssh_key, what
 * `sokovan ssh` uses): derived from the session's stored seed exactly as
 * the agents derive the files they mount at ~/.ssh (same seed, same
 * comment), so the private key matches the kernels' authorized_keys and,
 * in images whose sshd uses ~/.ssh/id_ed25519 as its host key, the public
 * key is also the host key the client can pin.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>

#include "mgr_app.h"
#include "sokovan/sshkey.h"

int skv__mgr_app_ssh_key(skv_manager *m, const char *sid,
                         skv_proto_app_token_reply *r, skv_error *err)
{
    uint8_t seed[SKV_SSHKEY_SEED_BYTES];
    skv_sshkey *key = NULL;
    char *comment = skv__asprintf("sokovan-%s", sid);
    int rc = comment ? skv__mgr_net_seed(m, sid, seed, err)
                     : skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = skv_sshkey_from_seed(&key, seed, comment, err);
    sodium_memzero(seed, sizeof seed);
    skv__free(comment);
    if (!rc && (!(r->ssh_private_key = skv__strdup(skv_sshkey_private(key))) ||
                !(r->ssh_public_key = skv__strdup(skv_sshkey_public(key)))))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    skv_sshkey_free(key);
    return rc;
}
