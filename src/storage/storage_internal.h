/* Internal state of storage hosts shared by src/storage/ files.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_STORAGE_INTERNAL_H
#define SKV_STORAGE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "skv_internal.h"
#include "sokovan/storage.h"

#define SKV__ST_UPLOAD_PREFIX ".skv-upload."

typedef struct skv__st_backend skv__st_backend;

struct skv_storage_host {
    char *root;
    int root_fd;    /* O_PATH of the root */
    int folders_fd; /* O_RDONLY|O_DIRECTORY of <root>/folders */
    int trash_fd;   /* O_RDONLY|O_DIRECTORY of <root>/trash */
    skv_storage_quota_kind kind;
    const skv__st_backend *be;
    pthread_mutex_t mu; /* flock is per open file: threads need this too */
};

/* A quota backend: how a folder's top directory is made, limited, measured
 * and destroyed. dir_fd is the folder's top directory (O_RDONLY). */
struct skv__st_backend {
    skv_storage_quota_kind kind;
    /* Whether the filesystem under root can enforce quotas now. */
    int (*check)(skv_storage_host *h, skv_error *err);
    /* Make <folders>/name (mode 0700, owned by root until chowned). */
    int (*make)(skv_storage_host *h, const char *name, skv_error *err);
    int (*set_limit)(skv_storage_host *h, int dir_fd, uint64_t bytes,
                     skv_error *err);
    int (*usage)(skv_storage_host *h, int dir_fd, uint64_t *used,
                 uint64_t *limit, uint64_t *id, skv_error *err);
    /* Clone src_fd to <folders>/to; NULL: tree copy after make. */
    int (*clone)(skv_storage_host *h, int src_fd, const char *to,
                 skv_error *err);
    /* Destroy <parent_fd>/name completely. */
    int (*destroy)(skv_storage_host *h, int parent_fd, const char *name,
                   skv_error *err);
};

extern const skv__st_backend skv__st_btrfs;
extern const skv__st_backend skv__st_xfs;
extern const skv__st_backend skv__st_ext4;
extern const skv__st_backend skv__st_none;

/* ---- the one door to the filesystem (fsdoor.c) ----------------------- */
/* Open rel beneath dir_fd: no "..", no absolute path, no symlink leaving
 * dir_fd, no magic links; checked by the kernel at use (openat2). */
int skv__st_open_beneath(int dir_fd, const char *rel, int flags, mode_t mode,
                         skv_error *err);
/* Split rel into its parent (opened beneath dir_fd, O_RDONLY|O_DIRECTORY)
 * and the last component (copied to base). An empty last component, ".",
 * ".." are refused. */
int skv__st_open_parent(int dir_fd, const char *rel, char *base,
                        size_t cap, skv_error *err);
/* Checks a relative path lexically (no NUL tricks, not absolute, not
 * too long); ".." is left to the kernel. */
int skv__st_check_rel(const char *rel, skv_error *err);
/* Map an errno from a path operation to an SKV_E code with a message. */
int skv__st_errno(skv_error *err, int e, const char *what, const char *path);
/* Test hook: pretend the kernel lacks openat2 (component walk fallback). */
void skv__st_force_fallback(bool on);

/* ---- folder names, locking, folder fds (host.c, names.c) ------------- */
int skv__st_check_name(const char *name, skv_error *err);
/* flock on the root: lifecycle changes of folders, across processes. */
int skv__st_lock(skv_storage_host *h, skv_error *err);
void skv__st_unlock(skv_storage_host *h);
/* The folder's top directory, O_RDONLY|O_DIRECTORY, not following links. */
int skv__st_folder_fd(skv_storage_host *h, const char *name, skv_error *err);

int skv__st_move_name(int from_dir, const char *from, int to_dir,
                      const char *to, skv_error *err);
int skv__st_list_names(int dir_fd, skv_storage_name_fn fn, void *ud,
                       skv_error *err);

/* ---- trees (tree.c) --------------------------------------------------- */
int skv__st_tree_remove(int parent_fd, const char *name, skv_error *err);
int skv__st_tree_copy(int src_fd, int dst_fd, skv_error *err);
int skv__st_tree_usage(int dir_fd, uint64_t *bytes, skv_error *err);
int skv__st_tree_chown(int dir_fd, uint32_t uid, uint32_t gid,
                       skv_error *err);

#endif
