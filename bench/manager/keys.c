/* The simulated agents' credentials, made as an operator adds agents to a
 * running cluster: through the admin plane, a user of role "agent" named
 * after the agent (sim<i>, domain "default") and a keypair of it, whose
 * secret the reply carries (over the Unix socket). The manager verifies
 * these like the bootstrap keys of the end-to-end suite, which cannot be
 * used here: --bootstrap-agents takes at most 1023 characters (about 110
 * ids) and the bootstrap writes a bounded number of key files.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_manager.h"
#include "sokovan/client.h"
#include "sokovan/proto.h"

static int add_user(skv_client *cl, const char *id, skv_error *e)
{
    skv_proto_admin_user q = {0};
    skv_proto_admin_user_reply r = {0};
    q.op = SKV_PROTO_ADMIN_CREATE;
    q.user.name = (char *)id;
    q.user.role = "agent";
    q.user.domain = "default";
    q.user.active = 1;
    int rc = skv_client_call(cl, SKV_PROTO_ADMIN_USER, &q, &r, e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &r);
    return rc;
}

static int add_key(skv_client *cl, const char *id, bm_key *k, skv_error *e)
{
    skv_proto_admin_keypair q = {0};
    skv_proto_admin_keypair_reply r = {0};
    q.op = SKV_PROTO_ADMIN_CREATE;
    q.keypair.user = (char *)id;
    q.keypair.active = 1;
    int rc = skv_client_call(cl, SKV_PROTO_ADMIN_KEYPAIR, &q, &r, e);
    if (rc == 0 && (r.n_keypairs != 1 || !r.keypairs[0].access_key ||
                    !r.keypairs[0].secret_key)) {
        snprintf(e->message, sizeof(e->message), "admin.keypair create for "
                 "%s: no secret key in the reply", id);
        rc = SKV_EPROTO;
    }
    if (rc == 0) {
        snprintf(k->ak, sizeof(k->ak), "%s", r.keypairs[0].access_key);
        snprintf(k->sk, sizeof(k->sk), "%s", r.keypairs[0].secret_key);
    }
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &r);
    return rc;
}

int bm_keys_make(bm_key **out, int n, const char *endpoint, const char *ak,
                 const char *sk, char *why, size_t wl)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_client *cl = NULL;
    bm_key *k = calloc((size_t)n, sizeof(*k));
    o.endpoint = endpoint;
    o.access_key = ak;
    o.secret_key = sk;
    o.timeout_ms = 60000;
    int rc = k ? skv_client_connect(&cl, &o, &e) : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        snprintf(k[i].id, sizeof(k[i].id), "sim%d", i + 1);
        rc = add_user(cl, k[i].id, &e);
        if (rc == 0)
            rc = add_key(cl, k[i].id, &k[i], &e);
    }
    skv_client_free(cl);
    if (rc) {
        snprintf(why, wl, "agent credentials: %s", k ? e.message
                                                     : "out of memory");
        bm_keys_free(k, n);
        return -1;
    }
    *out = k;
    return 0;
}

void bm_keys_free(bm_key *k, int n)
{
    for (int i = 0; k && i < n; i++)
        skv_auth_wipe(k[i].sk, sizeof(k[i].sk));
    free(k);
}
