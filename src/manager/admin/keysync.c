/* Mirroring key pairs into the request verifier. Keys are touched only
 * when their state changes: re-adding a key would wipe its nonce cache and
 * reopen the replay window.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

void skv__mgr_admin_forget_keys(skv__mgr_admin_ctx *ctx, char **keys,
                                size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv_auth_verifier_remove_key(ctx->verifier, keys[i], NULL);
}

typedef struct keysync {
    skv__mgr_admin_ctx *ctx;
    bool reset;
} keysync;

/* Make the verifier know the row's key (when usable) or not. */
static int sync_one(void *arg, const skv__mgr_store_admin_key *k,
                    skv_error *err)
{
    keysync *ks = arg;
    if (!k->usable || ks->reset)
        skv_auth_verifier_remove_key(ks->ctx->verifier, k->access_key, NULL);
    if (!k->usable)
        return 0;
    skv_auth_principal p;
    memset(&p, 0, sizeof p);
    snprintf(p.user, sizeof p.user, "%s", k->user);
    int rc = skv_auth_role_parse(&p.role, k->role, err);
    if (!rc)
        rc = skv_auth_verifier_add_key(ks->ctx->verifier, k->access_key,
                                       k->secret_key, &p, NULL);
    if (rc == SKV_EEXIST)   /* known already: keep its nonce cache */
        return 0;
    if (rc)
        return skv__err(err, rc, "key '%s' of user '%s' cannot be "
                        "registered with the verifier (%s)", k->access_key,
                        k->user, skv_strerror(rc));
    return 0;
}

int skv__mgr_admin_sync_user_keys(skv__mgr_admin_ctx *ctx, const char *user,
                                  bool reset, skv_error *err)
{
    keysync ks = {ctx, reset};
    return skv__mgr_store_admin_key_each(ctx->db, user, sync_one, &ks, err);
}
