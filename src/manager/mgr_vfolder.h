/* Virtual folders in the manager (docs/architecture.md, "Virtual
 * folders"): the storage hosts it serves (mgr_vf_hosts.c), who may do what
 * to a folder (mgr_vf_access.c), the "vfolder" requests (mgr_vfolder.c),
 * file operations and downloads (mgr_vf_files.c), uploads
 * (mgr_vf_upload.c) and the mounts of session.submit (mgr_vf_mount.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_VFOLDER_H
#define SKV_MGR_VFOLDER_H

#include "mgr_int.h"
#include "sokovan/storage.h"
#include "store/vfolders.h"

/* Containers run as nobody (the runtime's default user, which the agent
 * keeps): folders and the files put in them belong to it, so sessions
 * can write what users upload and the other way round. */
#define SKV__MGR_VF_UID 65534u
#define SKV__MGR_VF_GID 65534u
/* Largest chunk of one upload write or download reply. */
#define SKV__MGR_VF_CHUNK_MAX (4u * 1024 * 1024)
#define SKV__MGR_VF_CHUNK_DEFAULT (1u * 1024 * 1024)
/* Open uploads per connection. */
#define SKV__MGR_VF_UPLOADS_MAX 8

typedef struct skv__mgr_vf_host {
    char name[64];
    bool shared;
    skv_storage_host *h;
} skv__mgr_vf_host;

typedef struct skv__mgr_vf_up {
    uint64_t conn;
    char upload_id[SKV__VF_TEXT_MAX];
    char folder_id[SKV__VF_ID_MAX];
    skv_storage_upload *u;
    bool verify;                /* begun with verify: hashed, sha256 */
} skv__mgr_vf_up;

struct skv__mgr_vf {
    skv__mgr_vf_host *hosts;
    size_t n_hosts;
    skv__mgr_vf_up ups[64];
    size_t n_ups;
};

/* mgr_vf_hosts.c */
int skv__mgr_vf_open(skv_manager *m, const skv_manager_options *o,
                     skv_error *err);
void skv__mgr_vf_close(skv_manager *m);
void skv__mgr_vf_conn_gone(skv_manager *m, uint64_t conn);
/* NULL when no host has that name. */
skv__mgr_vf_host *skv__mgr_vf_host_find(skv_manager *m, const char *name);

/* mgr_vf_access.c: what a principal may do to a folder. */
typedef enum skv__mgr_vf_perm {
    SKV__VF_NONE = 0,
    SKV__VF_RO = 1,
    SKV__VF_RW = 2,
    SKV__VF_OWNER = 3
} skv__mgr_vf_perm;
typedef struct skv__mgr_vf_ref {
    skv__mgr_vfolder_row row;
    skv__mgr_vf_host *host;
    skv__mgr_vf_perm perm;
} skv__mgr_vf_ref;
bool skv__mgr_vf_is_admin(const skv_auth_principal *who);
/* The ready folder key (name or id) that who may use with at least need:
 * SKV_ENOENT when who cannot see it, SKV_EPERM when the access is short. */
int skv__mgr_vf_access(skv_manager *m, const skv_auth_principal *who,
                       const char *key, skv__mgr_vf_perm need,
                       skv__mgr_vf_ref *out, skv_error *err);
/* who's permission on a row (admins: owner). */
int skv__mgr_vf_perm_of(skv_manager *m, const skv_auth_principal *who,
                        const skv__mgr_vfolder_row *r, skv__mgr_vf_perm *out,
                        skv_error *err);

/* Request handlers. */
int skv__mgr_on_vfolder(skv_manager *m, const skv__mgr_call *c,
                        skv_error *err);
int skv__mgr_on_vfolder_file(skv_manager *m, const skv__mgr_call *c,
                             skv_error *err);
int skv__mgr_on_vfolder_upload(skv_manager *m, const skv__mgr_call *c,
                               skv_error *err);
int skv__mgr_on_vfolder_download(skv_manager *m, const skv__mgr_call *c,
                                 skv_error *err);

/* mgr_vf_reply.c: "vfolder.reply" with one folder (id), a list, or only
 * a message. */
int skv__mgr_vf_reply_one(skv_manager *m, const skv__mgr_call *c,
                          const char *id, const char *msg, skv_error *err);
int skv__mgr_vf_reply_list(skv_manager *m, const skv__mgr_call *c,
                           const skv__mgr_vfolder_row *rows, size_t n,
                           skv_error *err);
int skv__mgr_vf_reply_msg(skv_manager *m, const skv__mgr_call *c,
                          const char *msg);
/* mgr_vf_share.c: ops of "vfolder". */
int skv__mgr_vf_op_share(skv_manager *m, const skv__mgr_call *c,
                         const skv_proto_vfolder *q, skv_error *err);
int skv__mgr_vf_op_accept(skv_manager *m, const skv__mgr_call *c,
                          const skv_proto_vfolder *q, skv_error *err);
int skv__mgr_vf_op_revoke(skv_manager *m, const skv__mgr_call *c,
                          const skv_proto_vfolder *q, skv_error *err);

/* mgr_vf_mount.c: session.submit's mounts checked for the session's owner
 * and resolved (source, folder_id filled in) before it is recorded;
 * then recorded with it (inside the submission's transaction). */
int skv__mgr_vf_mounts_resolve(skv_manager *m, skv_proto_session_submit *s,
                               skv_error *err);
int skv__mgr_vf_mounts_record(skv_manager *m,
                              const skv_proto_session_submit *s,
                              const char *sid, skv_error *err);

#endif
