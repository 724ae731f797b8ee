/* "vfolder": create, list, info, rename, delete (to the trash), purge,
 * clone, share, accept, revoke. Each op decides from the rows, acts on the
 * storage host, then records the outcome: a directory without a row (a
 * crash in between) is invisible and harmless, a row without its
 * directory would not be.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "../storage/storage_internal.h"
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
static int reply_one(skv_manager *m, const skv__mgr_call *c, const char *id,
                     const char *msg, skv_error *err)
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

static int new_id(char *id, size_t cap, skv_error *err)
{
    uint8_t r[SKV_AUTH_NONCE_BYTES];
    int rc = skv_auth_nonce_generate(r, err);
    if (rc)
        return rc;
    size_t off = (size_t)snprintf(id, cap, "f-");
    for (int i = 0; i < 8 && off + 2 < cap; i++)
        off += (size_t)snprintf(id + off, cap - off, "%02x", r[i]);
    return 0;
}

static int name_free(skv_manager *m, const char *owner, const char *name,
                     skv_error *err)
{
    int rc = skv__st_check_name(name, err);
    if (rc)
        return rc;
    if (strncmp(name, "f-", 2) == 0)
        return skv__err(err, SKV_EINVAL, "folder name '%s': names starting "
                        "with 'f-' are folder ids", name);
    rc = skv__mgr_store_vfolder_name_taken(m->store, owner, name, err);
    if (rc < 0)
        return rc;
    return rc ? skv__err(err, SKV_EEXIST, "%s already has a folder called "
                         "'%s'", owner, name) : 0;
}

/* The row of a folder whose directory was just made; without the row the
 * directory goes again. */
static int record_new(skv_manager *m, const skv__mgr_call *c,
                      skv__mgr_vf_host *h, skv__mgr_vfolder_row *r,
                      const char *name, const char *project, const char *msg,
                      skv_error *err)
{
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->host, sizeof r->host, "%s", h->name);
    snprintf(r->owner, sizeof r->owner, "%s", c->who->user);
    snprintf(r->project, sizeof r->project, "%s", project ? project : "");
    snprintf(r->status, sizeof r->status, "ready");
    r->created_ms = c->now_ms;
    int rc = skv__mgr_store_vfolder_insert(m->store, r, err);
    if (rc) {
        char t[SKV_STORAGE_NAME_MAX + 32];
        if (!skv_storage_folder_delete(h->h, r->id, t, sizeof t, NULL))
            skv_storage_trash_purge(h->h, t, NULL);
        return rc;
    }
    skv__log(SKV_LOG_INFO, "manager", "folder %s (%s) %s by %s on %s",
             r->name, r->id, msg, r->owner, r->host);
    return reply_one(m, c, r->id, msg, err);
}

static int op_create(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vfolder_row r = {0};
    skv__mgr_vf_host *h = q->host ? skv__mgr_vf_host_find(m, q->host)
                                  : &m->vf->hosts[0];
    if (!h)
        return skv__err(err, SKV_ENOENT, "no storage host '%s'", q->host);
    int rc = name_free(m, c->who->user, q->name, err);
    if (!rc && q->project && !skv__mgr_vf_is_admin(c->who)) {
        rc = skv__mgr_store_vfolder_member(m->store, c->who->user, q->project,
                                           err);
        if (rc == 0)
            rc = skv__err(err, SKV_EPERM, "%s is not a member of project "
                          "'%s'", c->who->user, q->project);
        rc = rc < 0 ? rc : 0;
    }
    if (!rc)
        rc = new_id(r.id, sizeof r.id, err);
    if (!rc)
        rc = skv_storage_folder_create(h->h, r.id, q->quota_bytes,
                                       SKV__MGR_VF_UID, SKV__MGR_VF_GID, err);
    if (rc)
        return rc;
    r.quota_bytes = q->quota_bytes;
    return record_new(m, c, h, &r, q->name, q->project, "created", err);
}

static int op_list(skv_manager *m, const skv__mgr_call *c,
                   const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vfolder_row *rows = NULL;
    size_t n = 0;
    reply_buf b = {0};
    int rc = skv__mgr_store_vfolder_list(m->store, c->who->user,
                                         skv__mgr_vf_is_admin(c->who),
                                         q->trash ? "trash" : "ready", &rows,
                                         &n, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = add_info(m, c, &b, &rows[i], err);
    skv__free(rows);
    if (rc) {
        reply_free(&b);
        return rc;
    }
    return send_reply(m, c, &b, NULL);
}

static int op_info(skv_manager *m, const skv__mgr_call *c,
                   const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_RO, &f, err);
    return rc ? rc : reply_one(m, c, f.row.id, NULL, err);
}

static int op_rename(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_OWNER, &f, err);
    if (!rc)
        rc = name_free(m, f.row.owner, q->new_name, err);
    /* The directory is named by the id: a rename is the row alone, and
     * running sessions keep their mounts. */
    if (!rc)
        rc = skv__mgr_store_vfolder_rename(m->store, f.row.id, q->new_name,
                                           err);
    return rc ? rc : reply_one(m, c, f.row.id, "renamed", err);
}

static int op_delete(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    char sid[SKV__VF_TEXT_MAX], t[SKV_STORAGE_NAME_MAX + 32];
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_OWNER, &f, err);
    if (!rc)
        rc = skv__mgr_store_vfolder_mounted(m->store, f.row.id, sid,
                                            sizeof sid, err);
    if (rc == 1)
        return skv__err(err, SKV_EBUSY, "folder '%s' is mounted by session "
                        "%s, which has not ended: terminate it first",
                        q->name, sid);
    if (!rc)
        rc = skv_storage_folder_delete(f.host->h, f.row.id, t, sizeof t, err);
    if (!rc)
        rc = skv__mgr_store_vfolder_trash(m->store, f.row.id, t, err);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "folder %s (%s) moved to the "
                 "trash by %s", f.row.name, f.row.id, c->who->user);
    return rc ? rc : reply_one(m, c, f.row.id, "moved to the trash", err);
}

/* Trash rows the caller owns whose name or id is key (NULL: all). */
static int op_purge(skv_manager *m, const skv__mgr_call *c,
                    const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vfolder_row *rows = NULL;
    size_t n = 0, done = 0;
    int rc = skv__mgr_store_vfolder_list(m->store, c->who->user,
                                         skv__mgr_vf_is_admin(c->who),
                                         "trash", &rows, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        skv__mgr_vfolder_row *r = &rows[i];
        skv__mgr_vf_host *h = skv__mgr_vf_host_find(m, r->host);
        bool mine = skv__mgr_vf_is_admin(c->who) ||
                    strcmp(r->owner, c->who->user) == 0;
        if (!mine || !h || (q->name && strcmp(q->name, r->name) &&
                            strcmp(q->name, r->id)))
            continue;
        rc = skv_storage_trash_purge(h->h, r->trash_name, err);
        if (rc == SKV_ENOENT)   /* purged before a crash: the row is left */
            rc = 0;
        if (!rc)
            rc = skv__mgr_store_vfolder_remove(m->store, r->id, err);
        done += !rc;
    }
    skv__free(rows);
    if (!rc && q->name && done == 0)
        rc = skv__err(err, SKV_ENOENT, "no folder '%s' of %s in the trash",
                      q->name, c->who->user);
    if (rc)
        return rc;
    char msg[64];
    snprintf(msg, sizeof msg, "purged %zu folder%s", done, done == 1 ? ""
                                                                     : "s");
    reply_buf b = {0};
    return send_reply(m, c, &b, msg);
}

static int op_clone(skv_manager *m, const skv__mgr_call *c,
                    const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    skv__mgr_vfolder_row r = {0};
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_RO, &f, err);
    if (!rc)
        rc = name_free(m, c->who->user, q->new_name, err);
    if (!rc)
        rc = new_id(r.id, sizeof r.id, err);
    if (!rc)
        rc = skv_storage_folder_clone(f.host->h, f.row.id, r.id, err);
    if (rc)
        return rc;
    r.quota_bytes = f.row.quota_bytes;
    return record_new(m, c, f.host, &r, q->new_name, NULL, "cloned", err);
}

static int share_user(skv_manager *m, const skv_proto_vfolder *q,
                      skv_error *err)
{
    skv__mgr_user_info ui;
    if (!q->user || !*q->user)
        return skv__err(err, SKV_EINVAL, "vfolder share: a user is required");
    return skv__mgr_admin_user(&m->admin, &ui, q->user, err);
}

static int op_share(skv_manager *m, const skv__mgr_call *c,
                    const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    const char *perm = q->perm ? q->perm : "ro";
    if (strcmp(perm, "ro") && strcmp(perm, "rw"))
        return skv__err(err, SKV_EINVAL, "vfolder share: perm '%s' is not "
                        "ro or rw", perm);
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_OWNER, &f, err);
    if (!rc)
        rc = share_user(m, q, err);
    if (!rc && strcmp(q->user, f.row.owner) == 0)
        rc = skv__err(err, SKV_EINVAL, "'%s' owns folder '%s'", q->user,
                      q->name);
    if (!rc)
        rc = skv__mgr_store_vfolder_share_put(m->store, f.row.id, q->user,
                                              perm, err);
    return rc ? rc : reply_one(m, c, f.row.id, "invited", err);
}

/* The invited user accepts: the folder is found among those shared with
 * them, accepted or not. */
static int op_accept(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_vfolder *q, skv_error *err)
{
    char id[SKV__VF_ID_MAX];
    int rc = q->name ? skv__mgr_store_vfolder_find(m->store, c->who->user,
                                                   q->name, false, id,
                                                   sizeof id, err)
                     : skv__err(err, SKV_EINVAL, "a folder name is required");
    if (rc == 1)
        rc = skv__mgr_store_vfolder_share_accept(m->store, id, c->who->user,
                                                 err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "no invitation of %s to folder "
                        "'%s'", c->who->user, q->name ? q->name : "");
    return rc < 0 ? rc : reply_one(m, c, id, "accepted", err);
}

/* The owner revokes a share; a grantee may also leave one. */
static int op_revoke(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_vfolder *q, skv_error *err)
{
    char id[SKV__VF_ID_MAX];
    skv__mgr_vfolder_row r;
    const char *user = q->user ? q->user : c->who->user;
    int rc = q->name ? skv__mgr_store_vfolder_find(
                           m->store, c->who->user, q->name,
                           skv__mgr_vf_is_admin(c->who), id, sizeof id, err)
                     : skv__err(err, SKV_EINVAL, "a folder name is required");
    if (rc == 1)
        rc = skv__mgr_store_vfolder_get(m->store, id, &r, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "no folder '%s'", q->name);
    if (rc < 0)
        return rc;
    bool owner = skv__mgr_vf_is_admin(c->who) ||
                 strcmp(r.owner, c->who->user) == 0;
    if (!owner && strcmp(user, c->who->user) != 0)
        return skv__err(err, SKV_EPERM, "only the owner of '%s' revokes "
                        "other users' shares", q->name);
    rc = skv__mgr_store_vfolder_share_del(m->store, id, user, err);
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "folder '%s' is not shared with "
                        "'%s'", q->name, user);
    return rc < 0 ? rc : reply_one(m, c, id, "revoked", err);
}

typedef int (*op_fn)(skv_manager *, const skv__mgr_call *,
                     const skv_proto_vfolder *, skv_error *);

static const struct {
    const char *name;
    op_fn fn;
} ops[] = {
    {"create", op_create}, {"list", op_list},     {"info", op_info},
    {"rename", op_rename}, {"delete", op_delete}, {"purge", op_purge},
    {"clone", op_clone},   {"share", op_share},   {"accept", op_accept},
    {"revoke", op_revoke},
};

int skv__mgr_on_vfolder(skv_manager *m, const skv__mgr_call *c,
                        skv_error *err)
{
    const skv_proto_vfolder *q = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_SUBMIT, c->who->user,
                          err);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(q->op, ops[i].name) == 0)
            return ops[i].fn(m, c, q, err);
    return skv__err(err, SKV_EINVAL, "vfolder: unknown op '%s' (create, "
                    "list, info, rename, delete, purge, clone, share, "
                    "accept, revoke)", q->op);
}
