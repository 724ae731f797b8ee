/* Who may do what to a virtual folder: its owner everything; an accepted
 * share what it grants (ro or rw); a member of the folder's project rw;
 * an admin everything on every folder. A folder a caller cannot see is
 * "not found", never "forbidden", so names do not leak.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_vfolder.h"

bool skv__mgr_vf_is_admin(const skv_auth_principal *who)
{
    return who->role == SKV_AUTH_ROLE_ADMIN;
}

int skv__mgr_vf_perm_of(skv_manager *m, const skv_auth_principal *who,
                        const skv__mgr_vfolder_row *r, skv__mgr_vf_perm *out,
                        skv_error *err)
{
    *out = SKV__VF_NONE;
    if (skv__mgr_vf_is_admin(who) || strcmp(r->owner, who->user) == 0) {
        *out = SKV__VF_OWNER;
        return 0;
    }
    char perm[8];
    bool accepted = false;
    int rc = skv__mgr_store_vfolder_share_get(m->store, r->id, who->user,
                                              perm, sizeof perm, &accepted,
                                              err);
    if (!rc && accepted)
        *out = strcmp(perm, "rw") == 0 ? SKV__VF_RW : SKV__VF_RO;
    if (!rc && r->project[0] && *out < SKV__VF_RW) {
        int mem = skv__mgr_store_vfolder_member(m->store, who->user,
                                                r->project, err);
        if (mem < 0)
            return mem;
        if (mem)
            *out = SKV__VF_RW;
    }
    return rc;
}

static const char *need_name(skv__mgr_vf_perm p)
{
    return p == SKV__VF_OWNER ? "the owner" : p == SKV__VF_RW
                                                  ? "read-write access"
                                                  : "read access";
}

int skv__mgr_vf_access(skv_manager *m, const skv_auth_principal *who,
                       const char *key, skv__mgr_vf_perm need,
                       skv__mgr_vf_ref *out, skv_error *err)
{
    char id[SKV__VF_ID_MAX];
    memset(out, 0, sizeof *out);
    if (!key || !*key)
        return skv__err(err, SKV_EINVAL, "vfolder: a folder name is required");
    int rc = skv__mgr_store_vfolder_find(m->store, who->user, key,
                                         skv__mgr_vf_is_admin(who), id,
                                         sizeof id, err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        rc = skv__mgr_store_vfolder_get(m->store, id, &out->row, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return skv__err(err, SKV_ENOENT, "no folder '%s' (of %s or shared "
                        "with them)", key, who->user);
    rc = skv__mgr_vf_perm_of(m, who, &out->row, &out->perm, err);
    if (rc)
        return rc;
    if (out->perm == SKV__VF_NONE)
        return skv__err(err, SKV_ENOENT, "folder '%s' is shared with %s but "
                        "not accepted yet ('sokovan vfolder accept %s')", key,
                        who->user, key);
    if (out->perm < need)
        return skv__err(err, SKV_EPERM, "folder '%s': %s has %s access; "
                        "this needs %s", key, who->user,
                        out->perm == SKV__VF_RO ? "read-only" : "read-write",
                        need_name(need));
    out->host = skv__mgr_vf_host_find(m, out->row.host);
    if (!out->host)
        return skv__err(err, SKV_ENOENT, "folder '%s' is on storage host "
                        "'%s', which this manager does not serve (check "
                        "storage_host in its configuration)", key,
                        out->row.host);
    return 0;
}
