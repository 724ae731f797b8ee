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
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT seed FROM session_ssh WHERE "
                                 "session_id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    bool found = false;
    if (sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_bytes(st, 0) == SKV_SSHKEY_SEED_BYTES) {
        memcpy(seed, sqlite3_column_blob(st, 0), SKV_SSHKEY_SEED_BYTES);
        found = true;
    }
    skv__mgr_db_done(m, st);
    if (found)
        return 0;
    rc = skv_sshkey_seed_generate(seed, err);
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st, "INSERT OR REPLACE INTO "
                                 "session_ssh(session_id, seed) VALUES(?,?)",
                                 err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    sqlite3_bind_blob(st, 2, seed, SKV_SSHKEY_SEED_BYTES, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = skv__mgr_db_err(m, err, "session_ssh");
    skv__mgr_db_done(m, st);
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
    sqlite3_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    if (pub && skv__mgr_db_prepare(m, &st, "INSERT OR REPLACE INTO "
                                   "kernel_net(kernel_id, address, "
                                   "published) VALUES(?,?,?)", &e) == 0) {
        skv__mgr_bind_text(st, 1, kid);
        skv__mgr_bind_text(st, 2, cr->address);
        skv__mgr_bind_text(st, 3, pub);
        if (sqlite3_step(st) != SQLITE_DONE)
            skv__mgr_db_err(m, &e, "kernel_net");
        skv__mgr_db_done(m, st);
    }
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
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT address, published FROM "
                                 "kernel_net WHERE kernel_id=?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, k->kernel_id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        k->address = skv__mgr_col_dup(st, 0);
        if (split((const char *)sqlite3_column_text(st, 1), &k->published,
                  &k->n_published))
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
    }
    skv__mgr_db_done(m, st);
    return rc;
}
