/* The rows of virtual folders (vfolders.c): the folder itself, its shares
 * and the sessions mounting it. The rules (who may do what) are the
 * manager's (mgr_vfolder*.c); these functions only read and write rows.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_VFOLDERS_H
#define SKV_MANAGER_STORE_VFOLDERS_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

#define SKV__VF_ID_MAX 40
#define SKV__VF_TEXT_MAX 256

typedef struct skv__mgr_vfolder_row {
    char id[SKV__VF_ID_MAX];           /* "f-<16 hex>", its directory name */
    char name[SKV__VF_TEXT_MAX];
    char host[SKV__VF_TEXT_MAX];
    char owner[SKV__VF_TEXT_MAX];
    char project[SKV__VF_TEXT_MAX];    /* "" : a user folder */
    char status[16];                   /* "ready", "trash" */
    char trash_name[SKV__VF_TEXT_MAX];
    uint64_t quota_bytes;
    int64_t created_ms;
} skv__mgr_vfolder_row;

int skv__mgr_store_vfolder_insert(skv__db *db, const skv__mgr_vfolder_row *r,
                                  skv_error *err);
/* 1 found, 0 not, < 0 error. */
int skv__mgr_store_vfolder_get(skv__db *db, const char *id,
                               skv__mgr_vfolder_row *out, skv_error *err);
/* The ready folder `key` (its id or its name) that user may see: their
 * own first, then shared with them, then their projects'; any when all.
 * 1 found (id in out), 0 not, < 0 error. */
int skv__mgr_store_vfolder_find(skv__db *db, const char *user,
                                const char *key, bool all, char *id,
                                size_t cap, skv_error *err);
/* 1 when owner already has a ready folder called name. */
int skv__mgr_store_vfolder_name_taken(skv__db *db, const char *owner,
                                      const char *name, skv_error *err);
/* Folders user may see (all: every one) in status ("ready"/"trash"). */
int skv__mgr_store_vfolder_list(skv__db *db, const char *user, bool all,
                                const char *status,
                                skv__mgr_vfolder_row **out, size_t *n,
                                skv_error *err);
int skv__mgr_store_vfolder_rename(skv__db *db, const char *id,
                                  const char *name, skv_error *err);
int skv__mgr_store_vfolder_trash(skv__db *db, const char *id,
                                 const char *trash_name, skv_error *err);
/* Removes the row, its shares and its mount records. */
int skv__mgr_store_vfolder_remove(skv__db *db, const char *id,
                                  skv_error *err);

/* Shares: perm "ro"/"rw"; an invitation until accepted. */
int skv__mgr_store_vfolder_share_put(skv__db *db, const char *id,
                                     const char *user, const char *perm,
                                     skv_error *err);
/* 1 accepted, 0 no invitation for user. */
int skv__mgr_store_vfolder_share_accept(skv__db *db, const char *id,
                                        const char *user, skv_error *err);
/* 1 removed, 0 none. */
int skv__mgr_store_vfolder_share_del(skv__db *db, const char *id,
                                     const char *user, skv_error *err);
/* user's share of id: perm ("" none) and whether accepted. */
int skv__mgr_store_vfolder_share_get(skv__db *db, const char *id,
                                     const char *user, char *perm,
                                     size_t cap, bool *accepted,
                                     skv_error *err);
typedef void (*skv__mgr_vfolder_share_fn)(void *ud, const char *user,
                                          const char *perm, bool accepted);
int skv__mgr_store_vfolder_shares(skv__db *db, const char *id,
                                  skv__mgr_vfolder_share_fn fn, void *ud,
                                  skv_error *err);
/* 1 when user is a member of project. */
int skv__mgr_store_vfolder_member(skv__db *db, const char *user,
                                  const char *project, skv_error *err);

/* The folders a session mounts (recorded with the session). */
int skv__mgr_store_vfolder_mount_put(skv__db *db, const char *sid,
                                     const char *id, skv_error *err);
/* A session not in a final state that mounts id: 1 (its id in sid), 0. */
int skv__mgr_store_vfolder_mounted(skv__db *db, const char *id, char *sid,
                                   size_t cap, skv_error *err);

#endif
