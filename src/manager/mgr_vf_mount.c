/* session.submit's mounts: each folder checked for the session's owner
 * (read-only mounts need read access, others read-write), its host path
 * resolved by the storage library (which also checks the target), and a
 * multi-node session refused unless the folder's host is shared by the
 * agents, all before the session is recorded, so a refused mount never
 * reaches the scheduler. The resolved source goes into the stored body
 * and from there into every kernel.create.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_vfolder.h"

static int set_dup(char **field, const char *v, skv_error *err)
{
    char *d = skv__strdup(v);
    if (!d)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(*field);
    *field = d;
    return 0;
}

static bool multi_node(const skv_proto_session_submit *s)
{
    return s->cluster_size > 1 && s->cluster_mode &&
           strcmp(s->cluster_mode, "multi-node") == 0;
}

static int dup_target(const skv_proto_session_submit *s, size_t i,
                      skv_error *err)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(s->mounts[j].target, s->mounts[i].target) == 0)
            return skv__err(err, SKV_EINVAL, "mount target %s is used twice",
                            s->mounts[i].target);
    return 0;
}

static int resolve_one(skv_manager *m, skv_proto_session_submit *s,
                       const skv_auth_principal *owner, size_t i,
                       skv_error *err)
{
    skv_proto_mount *mt = &s->mounts[i];
    skv__mgr_vf_ref f;
    if (mt->source || mt->folder_id)
        return skv__err(err, SKV_EINVAL, "mount '%s': source and folder_id "
                        "are the manager's to fill in", mt->folder);
    int rc = skv__mgr_vf_access(m, owner, mt->folder,
                                mt->readonly ? SKV__VF_RO : SKV__VF_RW, &f,
                                err);
    if (!rc && multi_node(s) && !f.host->shared)
        rc = skv__err(err, SKV_EINVAL, "mount '%s': a multi-node session "
                      "needs a folder on a storage host shared by the agents"
                      "; host '%s' is not (shared = no)", mt->folder,
                      f.host->name);
    if (!rc && !mt->target) {
        char *t = skv__asprintf("/home/work/%s", f.row.name);
        rc = t ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
        mt->target = t;
    }
    skv_storage_mount plan;
    if (!rc)
        rc = skv_storage_mount_plan(f.host->h, f.row.id, mt->target,
                                    mt->readonly != 0, &plan, err);
    if (!rc)
        rc = dup_target(s, i, err);
    if (!rc)
        rc = set_dup(&mt->source, plan.source, err);
    if (!rc)
        rc = set_dup(&mt->folder_id, f.row.id, err);
    if (rc)
        skv__err_prefix(err, "mount %zu", i + 1);
    return rc;
}

int skv__mgr_vf_mounts_resolve(skv_manager *m, skv_proto_session_submit *s,
                               skv_error *err)
{
    /* The owner's access counts, also when an admin submits for them. */
    skv_auth_principal owner = {{0}, SKV_AUTH_ROLE_USER};
    snprintf(owner.user, sizeof owner.user, "%s", s->owner);
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n_mounts; i++)
        rc = resolve_one(m, s, &owner, i, err);
    return rc;
}

int skv__mgr_vf_mounts_record(skv_manager *m,
                              const skv_proto_session_submit *s,
                              const char *sid, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n_mounts; i++)
        rc = skv__mgr_store_vfolder_mount_put(m->store, sid,
                                              s->mounts[i].folder_id, err);
    return rc;
}
