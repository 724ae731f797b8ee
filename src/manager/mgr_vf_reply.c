/* The "vfolder.reply" of a request: folder rows with the caller's
 * permission, usage and quota from the filesystem, and the shares.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_vfolder.h"

typedef struct reply_buf {
    skv_proto_vfolder_reply r;
    char **owned;        /* strings to free after the reply */
    size_t n_owned;
} reply_buf;

static void reply_free(reply_buf *b)
{
    for (size_t i = 0; i < b->r.n_folders; i++)
        skv__free(b->r.folders[i].shares);
    skv__free(b->r.folders);
    for (size_t i = 0; i < b->n_owned; i++)
        skv__free(b->owned[i]);
    skv__free(b->owned);
}

static char *keep(reply_buf *b, char *s)
{
    char **v = s ? skv__reallocarray(b->owned, b->n_owned + 1, sizeof *v)
                 : NULL;
    if (!v) {
        skv__free(s);
        return NULL;
    }
    b->owned = v;
    v[b->n_owned++] = s;
    return s;
}

static const char *perm_word(skv__mgr_vf_perm p, bool admin, bool owner)
{
    if (admin && !owner)
        return "admin";
    return p == SKV__VF_OWNER ? "owner" : p == SKV__VF_RW ? "rw"
                                      : p == SKV__VF_RO ? "ro" : "invited";
}

typedef struct share_ctx {
    reply_buf *b;
    skv_proto_vfolder_info *fi;
    int rc;
} share_ctx;

static void on_share(void *ud, const char *user, const char *perm,
                     bool accepted)
{
    share_ctx *s = ud;
    skv_proto_vfolder_share *v = skv__reallocarray(
        s->fi->shares, s->fi->n_shares + 1, sizeof *v);
    if (!v) {
        s->rc = SKV_ENOMEM;
        return;
    }
    s->fi->shares = v;
    v = &v[s->fi->n_shares++];
    v->user = keep(s->b, skv__strdup(user));
    v->perm = keep(s->b, skv__strdup(perm));
    v->accepted = accepted;
    if (!v->user || !v->perm)
        s->rc = SKV_ENOMEM;
}

/* Usage and quota from the filesystem; a host that cannot say leaves 0. */
static void usage_of(skv_manager *m, const skv__mgr_vfolder_row *r,
                     skv_proto_vfolder_info *fi)
{
    skv__mgr_vf_host *h = skv__mgr_vf_host_find(m, r->host);
    skv_storage_folder_info inf = {SKV_STORAGE_FOLDER_INFO_VERSION};
    fi->quota_bytes = r->quota_bytes;
    if (h && strcmp(r->status, "ready") == 0 &&
        skv_storage_folder_info_get(h->h, r->id, &inf, NULL) == 0) {
        fi->usage_bytes = inf.usage_bytes;
        fi->quota_bytes = inf.quota_bytes;
    }
}

static int add_info(skv_manager *m, const skv__mgr_call *c, reply_buf *b,
                    const skv__mgr_vfolder_row *r, skv_error *err)
{
    skv__mgr_vf_perm p;
    int rc = skv__mgr_vf_perm_of(m, c->who, r, &p, err);
    skv_proto_vfolder_info *v = skv__reallocarray(
        b->r.folders, b->r.n_folders + 1, sizeof *v);
    if (rc || !v)
        return rc ? rc : skv__err(err, SKV_ENOMEM, "out of memory");
    b->r.folders = v;
    v = &v[b->r.n_folders++];
    memset(v, 0, sizeof *v);
    const char *f[] = {r->id, r->name, r->host, r->owner, r->project,
                       r->status, r->trash_name};
    char **to[] = {&v->id, &v->name, &v->host, &v->owner, &v->project,
                   &v->status, &v->trash_name};
    for (size_t i = 0; i < 7; i++)
        if (f[i][0] && !(*to[i] = keep(b, skv__strdup(f[i]))))
            return skv__err(err, SKV_ENOMEM, "out of memory");
    v->perm = (char *)perm_word(p, skv__mgr_vf_is_admin(c->who),
                                strcmp(r->owner, c->who->user) == 0);
    v->created_ms = r->created_ms;
    usage_of(m, r, v);
    share_ctx s = {b, v, 0};
    rc = skv__mgr_store_vfolder_shares(m->store, r->id, on_share, &s, err);
    return rc ? rc : s.rc ? skv__err(err, s.rc, "out of memory") : 0;
}

static int send_reply(skv_manager *m, const skv__mgr_call *c, reply_buf *b,
                      const char *msg)
{
    b->r.message = (char *)msg;
    int rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_VFOLDER_REPLY,
                            &b->r);
    reply_free(b);
    return rc;
}

/* One folder's row in the reply. */
int skv__mgr_vf_reply_one(skv_manager *m, const skv__mgr_call *c,
                          const char *id, const char *msg, skv_error *err)
{
    reply_buf b = {0};
    skv__mgr_vfolder_row r;
    int rc = skv__mgr_store_vfolder_get(m->store, id, &r, err);
    if (rc == 0)
        rc = skv__err(err, SKV_ENOENT, "folder %s is gone", id);
    if (rc == 1)
        rc = add_info(m, c, &b, &r, err);
    if (rc) {
        reply_free(&b);
        return rc;
    }
    return send_reply(m, c, &b, msg);
}

int skv__mgr_vf_reply_list(skv_manager *m, const skv__mgr_call *c,
                           const skv__mgr_vfolder_row *rows, size_t n,
                           skv_error *err)
{
    reply_buf b = {0};
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = add_info(m, c, &b, &rows[i], err);
    if (rc) {
        reply_free(&b);
        return rc;
    }
    return send_reply(m, c, &b, NULL);
}

int skv__mgr_vf_reply_msg(skv_manager *m, const skv__mgr_call *c,
                          const char *msg)
{
    reply_buf b = {0};
    return send_reply(m, c, &b, msg);
}
