/* "vfolder" share, accept, revoke: the owner invites a user (ro or rw),
 * the user accepts (an invitation is no access until then), the owner
 * revokes or the user leaves.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_vfolder.h"

static int share_user(skv_manager *m, const skv_proto_vfolder *q,
                      skv_error *err)
{
    skv__mgr_user_info ui;
    if (!q->user || !*q->user)
        return skv__err(err, SKV_EINVAL, "vfolder share: a user is required");
    return skv__mgr_admin_user(&m->admin, &ui, q->user, err);
}

int skv__mgr_vf_op_share(skv_manager *m, const skv__mgr_call *c,
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
    return rc ? rc : skv__mgr_vf_reply_one(m, c, f.row.id, "invited", err);
}

/* The invited user accepts: the folder is found among those shared with
 * them, accepted or not. */
int skv__mgr_vf_op_accept(skv_manager *m, const skv__mgr_call *c,
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
    return rc < 0 ? rc : skv__mgr_vf_reply_one(m, c, id, "accepted", err);
}

/* The owner revokes a share; a grantee may also leave one. */
int skv__mgr_vf_op_revoke(skv_manager *m, const skv__mgr_call *c,
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
    return rc < 0 ? rc : skv__mgr_vf_reply_one(m, c, id, "revoked", err);
}