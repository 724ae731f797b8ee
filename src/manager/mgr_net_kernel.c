/* Cluster networking on the manager, per kernel: the session's SSH key
 * seed (drawn once, kept in session_ssh), and the address and published
 * ports an agent reported in its kernel.create.reply (kernel_net), shown by
 * session.show.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "sokovan/sshkey.h"

int skv__mgr_net_seed(skv_manager *m, const char *sid,
                      uint8_t seed[SKV_SSHKEY_SEED_BYTES], skv_error *err)
{
    int rc = skv__mgr_store_session_seed(m->store, sid, seed,
                                         SKV_SSHKEY_SEED_BYTES, err);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv_sshkey_seed_generate(seed, err);
    if (!rc)
        rc = skv__mgr_store_session_seed_put(m->store, sid, seed,
                                             SKV_SSHKEY_SEED_BYTES, err);
    return rc;
}

void skv__mgr_net_kernel_reply(skv_manager *m, const char *kid,
                               const skv_proto_kernel_create_reply *cr)
{
    if (!cr->address && cr->n_published == 0)
        return;
    size_t len = 1;
    for (size_t i = 0; i < cr->n_published; i++)
        len += strlen(cr->published[i] ? cr->published[i] : "") + 1;
    char *pub = skv__calloc(1, len);
    for (size_t i = 0; pub && i < cr->n_published; i++) {
        if (i)
            strcat(pub, ",");
        strcat(pub, cr->published[i] ? cr->published[i] : "");
    }
    skv_error e = SKV_ERROR_INIT;
    if (pub)
        skv__mgr_store_kernel_net_put(m->store, kid, cr->address, pub, &e);
    if (e.code)
        skv__log(SKV_LOG_WARN, "manager", "kernel %s address: %s", kid,
                 e.message);
    skv__free(pub);
}

/* "a,b,c" into a fresh string array. */
static int split(const char *s, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return 0;
    size_t cap = 1;
    for (const char *c = s; *c; c++)
        cap += *c == ',';
    char **v = skv__calloc(cap, sizeof *v);
    if (!v)
        return SKV_ENOMEM;
    *out = v;
    for (const char *p = s; p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (!(v[*n] = skv__strndup(p, l)))
            return SKV_ENOMEM;
        (*n)++;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

int skv__mgr_net_kernel_info(skv_manager *m, skv_proto_kernel_info *k,
                             skv_error *err)
{
    char *pub = NULL;
    int rc = skv__mgr_store_kernel_net(m->store, k->kernel_id, &k->address,
                                       &pub, err);
    if (rc == 1 && split(pub, &k->published, &k->n_published))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(pub);
    return rc < 0 ? rc : 0;
}
