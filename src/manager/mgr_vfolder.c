/* "vfolder": create, list, info, rename, delete (to the trash), purge,
 * clone (share, accept, revoke: mgr_vf_share.c; replies: mgr_vf_reply.c).
 * Each op decides from the rows, acts on the storage host, then records
 * the outcome: a directory without a row (a crash in between) is
 * invisible and harmless, a row without its directory would not be.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "../storage/storage_internal.h"
#include "mgr_vfolder.h"

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
    return skv__mgr_vf_reply_one(m, c, r->id, msg, err);
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
    int rc = skv__mgr_store_vfolder_list(m->store, c->who->user,
                                         skv__mgr_vf_is_admin(c->who),
                                         q->trash ? "trash" : "ready", &rows,
                                         &n, err);
    if (!rc)
        rc = skv__mgr_vf_reply_list(m, c, rows, n, err);
    skv__free(rows);
    return rc;
}

static int op_info(skv_manager *m, const skv__mgr_call *c,
                   const skv_proto_vfolder *q, skv_error *err)
{
    skv__mgr_vf_ref f;
    int rc = skv__mgr_vf_access(m, c->who, q->name, SKV__VF_RO, &f, err);
    return rc ? rc : skv__mgr_vf_reply_one(m, c, f.row.id, NULL, err);
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
    return rc ? rc : skv__mgr_vf_reply_one(m, c, f.row.id, "renamed", err);
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
    return rc ? rc : skv__mgr_vf_reply_one(m, c, f.row.id, "moved to the trash", err);
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
    return skv__mgr_vf_reply_msg(m, c, msg);
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


typedef int (*op_fn)(skv_manager *, const skv__mgr_call *,
                     const skv_proto_vfolder *, skv_error *);

static const struct {
    const char *name;
    op_fn fn;
} ops[] = {
    {"create", op_create}, {"list", op_list},     {"info", op_info},
    {"rename", op_rename}, {"delete", op_delete}, {"purge", op_purge},
    {"clone", op_clone},   {"share", skv__mgr_vf_op_share},
    {"accept", skv__mgr_vf_op_accept}, {"revoke", skv__mgr_vf_op_revoke},
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
