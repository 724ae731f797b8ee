/*
 * sokovan/storage.h - storage hosts and virtual folders: persistent data
 * that outlives sessions, with filesystem-enforced quotas, safe file
 * operations inside a folder, streamed ranged reads, atomic resumable
 * uploads and a bind-mount plan for the container runtime.
 *
 * A storage host is a root directory laid out as
 *   <root>/folders/<name>   one directory (btrfs: one subvolume) per folder
 *   <root>/trash/<name>.<stamp>   deleted folders, until purged
 * with a quota backend:
 *   btrfs  a subvolume per folder limited by its qgroup (quota must be
 *          enabled on the filesystem: `btrfs quota enable <mnt>`);
 *   xfs, ext4  a project id per folder (FS_IOC_FSSETXATTR, inherited by
 *          everything below) limited by quotactl on PRJQUOTA (the
 *          filesystem must be mounted with project quotas on);
 *   none   no limit, usage by walking the tree; only when asked for.
 * SKV_STORAGE_QUOTA_AUTO picks from the filesystem type (statfs); a
 * filesystem without usable quotas is SKV_ENOTSUP at open unless the host
 * is configured with quota "none".
 *
 * Paths inside a folder are relative ("a/b.txt"); "", "." mean the folder
 * itself. Absolute paths, ".." components and symlinks resolving outside
 * the folder are refused (SKV_EPERM) by the kernel at the moment of use
 * (openat2 RESOLVE_BENEATH), so a symlink swapped in between a check and
 * a use cannot escape either. Writing past a quota is SKV_ENOSPC with
 * sys_errno EDQUOT.
 *
 * New files and directories made through this API belong to the folder's
 * owner (the uid/gid given at create), so a session running as that user
 * owns its files.
 *
 * Needs root (CAP_SYS_ADMIN for subvolumes and quotas, CAP_CHOWN).
 *
 * Thread-safety: a skv_storage_host may be used from several threads at
 * once (it is read-only after open; folder lifecycle changes are
 * serialised by an flock on the root, which also serialises separate
 * processes sharing one root). A skv_storage_reader or
 * skv_storage_upload belongs to one thread at a time.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_STORAGE_H
#define SOKOVAN_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Folder names: [A-Za-z0-9][A-Za-z0-9._-]*, at most this many bytes. */
#define SKV_STORAGE_NAME_MAX 64
/* Paths inside a folder and host paths, with the NUL. */
#define SKV_STORAGE_PATH_MAX 4096
#define SKV_STORAGE_SHA256_BYTES 32

typedef enum skv_storage_quota_kind {
    SKV_STORAGE_QUOTA_AUTO = 0,  /* from the filesystem type */
    SKV_STORAGE_QUOTA_NONE = 1,  /* explicit: no limit, usage by walking */
    SKV_STORAGE_QUOTA_BTRFS = 2, /* subvolume + qgroup */
    SKV_STORAGE_QUOTA_XFS = 3,   /* XFS project quota */
    SKV_STORAGE_QUOTA_EXT4 = 4   /* ext4 project quota */
} skv_storage_quota_kind;

/* "auto", "none", "btrfs", "xfs", "ext4" (config files). */
SKV_EXTERN int skv_storage_quota_parse(const char *text,
                                       skv_storage_quota_kind *out,
                                       skv_error *err);
SKV_EXTERN const char *skv_storage_quota_name(skv_storage_quota_kind kind);

/* ---- host ---------------------------------------------------------------- */

typedef struct skv_storage_host skv_storage_host;

#define SKV_STORAGE_HOST_OPTIONS_VERSION 1
typedef struct skv_storage_host_options {
    unsigned version;             /* SKV_STORAGE_HOST_OPTIONS_VERSION */
    const char *root;             /* absolute, existing directory */
    skv_storage_quota_kind quota; /* default AUTO */
} skv_storage_host_options;

SKV_EXTERN void skv_storage_host_options_init(skv_storage_host_options *o);
/* Opens (and lays out, on first use) the root. SKV_ENOTSUP names the
 * reason when the filesystem cannot enforce the asked-for quota. */
SKV_EXTERN int skv_storage_host_open(skv_storage_host **out,
                                     const skv_storage_host_options *opts,
                                     skv_error *err);
SKV_EXTERN void skv_storage_host_close(skv_storage_host *host);
/* The backend in use (never AUTO) and the root as given. */
SKV_EXTERN skv_storage_quota_kind
skv_storage_host_quota(const skv_storage_host *host);
SKV_EXTERN const char *skv_storage_host_root(const skv_storage_host *host);

/* ---- folder lifecycle ---------------------------------------------------- */

#define SKV_STORAGE_FOLDER_INFO_VERSION 1
typedef struct skv_storage_folder_info {
    unsigned version;     /* set by the caller: SKV_STORAGE_FOLDER_INFO_VERSION */
    uint64_t usage_bytes; /* space charged to the folder */
    uint64_t quota_bytes; /* 0: unlimited */
    uint32_t uid, gid;    /* owner of the folder's top directory */
    uint64_t quota_id;    /* btrfs subvolume id or project id; 0 for none */
} skv_storage_folder_info;

/* Create folder NAME owned by uid:gid with a limit of quota_bytes (0:
 * unlimited; a non-zero quota on a "none" host is SKV_ENOTSUP). */
SKV_EXTERN int skv_storage_folder_create(skv_storage_host *host,
                                         const char *name,
                                         uint64_t quota_bytes, uint32_t uid,
                                         uint32_t gid, skv_error *err);
SKV_EXTERN int skv_storage_folder_info_get(skv_storage_host *host,
                                           const char *name,
                                           skv_storage_folder_info *info,
                                           skv_error *err);
SKV_EXTERN int skv_storage_folder_set_quota(skv_storage_host *host,
                                            const char *name,
                                            uint64_t quota_bytes,
                                            skv_error *err);
/* SKV_EEXIST when `to` exists. */
SKV_EXTERN int skv_storage_folder_rename(skv_storage_host *host,
                                         const char *from, const char *to,
                                         skv_error *err);
/* A copy with the same owner and quota: a btrfs snapshot, else a tree copy
 * (regular files, directories, symlinks; modes and owners kept). */
SKV_EXTERN int skv_storage_folder_clone(skv_storage_host *host,
                                        const char *from, const char *to,
                                        skv_error *err);
/* Moves the folder to the trash; the trash entry's name goes to
 * trash_name (cap >= SKV_STORAGE_NAME_MAX + 32), which may be NULL. */
SKV_EXTERN int skv_storage_folder_delete(skv_storage_host *host,
                                         const char *name, char *trash_name,
                                         size_t cap, skv_error *err);
/* Destroys one trash entry, or all of them when trash_name is NULL. */
SKV_EXTERN int skv_storage_trash_purge(skv_storage_host *host,
                                       const char *trash_name, skv_error *err);

/* Listing callbacks: return non-zero to stop (that value is returned). */
typedef int (*skv_storage_name_fn)(const char *name, void *ud);
SKV_EXTERN int skv_storage_folder_list(skv_storage_host *host,
                                       skv_storage_name_fn fn, void *ud,
                                       skv_error *err);
SKV_EXTERN int skv_storage_trash_list(skv_storage_host *host,
                                      skv_storage_name_fn fn, void *ud,
                                      skv_error *err);

/* ---- files inside a folder ----------------------------------------------- */

typedef struct skv_storage_entry {
    const char *name;  /* valid during the callback; NULL from stat */
    char type;         /* 'f' file, 'd' directory, 'l' symlink, 'o' other */
    uint64_t size;
    uint32_t mode;     /* permission bits */
    uint32_t uid, gid;
    int64_t mtime_s;
} skv_storage_entry;
typedef int (*skv_storage_entry_fn)(const skv_storage_entry *e, void *ud);

/* Entries of a directory (not "." or ".."; unsorted). Upload temp files
 * (".skv-upload.*") are not listed. */
SKV_EXTERN int skv_storage_ls(skv_storage_host *host, const char *folder,
                              const char *path, skv_storage_entry_fn fn,
                              void *ud, skv_error *err);
SKV_EXTERN int skv_storage_stat(skv_storage_host *host, const char *folder,
                                const char *path, skv_storage_entry *out,
                                skv_error *err);
/* One directory level; SKV_EEXIST when it exists. */
SKV_EXTERN int skv_storage_mkdir(skv_storage_host *host, const char *folder,
                                 const char *path, skv_error *err);
/* A file, symlink or empty directory; recursive removes a whole tree. */
SKV_EXTERN int skv_storage_rm(skv_storage_host *host, const char *folder,
                              const char *path, bool recursive,
                              skv_error *err);
/* Within one folder; SKV_EEXIST when `to` exists. */
SKV_EXTERN int skv_storage_mv(skv_storage_host *host, const char *folder,
                              const char *from, const char *to,
                              skv_error *err);
SKV_EXTERN int skv_storage_chown(skv_storage_host *host, const char *folder,
                                 const char *path, uint32_t uid, uint32_t gid,
                                 bool recursive, skv_error *err);

/* ---- streamed ranged read ------------------------------------------------ */

typedef struct skv_storage_reader skv_storage_reader;
#define SKV_STORAGE_READ_SHA256 1u /* hash the bytes read */
#define SKV_STORAGE_LEN_ALL UINT64_MAX

/* Read `length` bytes (SKV_STORAGE_LEN_ALL: to the end) from `offset` of
 * a regular file. An offset past the end is SKV_ERANGE. */
SKV_EXTERN int skv_storage_read_open(skv_storage_host *host,
                                     const char *folder, const char *path,
                                     uint64_t offset, uint64_t length,
                                     unsigned flags,
                                     skv_storage_reader **out, skv_error *err);
/* Up to cap bytes; *got 0 is the end of the range. */
SKV_EXTERN int skv_storage_read(skv_storage_reader *r, void *buf, size_t cap,
                                size_t *got, skv_error *err);
/* The file's size when opened. */
SKV_EXTERN uint64_t skv_storage_reader_file_size(const skv_storage_reader *r);
/* sha256 of the bytes read so far (SKV_STORAGE_READ_SHA256 only). */
SKV_EXTERN int skv_storage_reader_sha256(skv_storage_reader *r,
                                         uint8_t out[SKV_STORAGE_SHA256_BYTES],
                                         skv_error *err);
SKV_EXTERN void skv_storage_read_close(skv_storage_reader *r);

/* ---- atomic, resumable upload -------------------------------------------- */

typedef struct skv_storage_upload skv_storage_upload;

#define SKV_STORAGE_UPLOAD_OPTIONS_VERSION 1
typedef struct skv_storage_upload_options {
    unsigned version;      /* SKV_STORAGE_UPLOAD_OPTIONS_VERSION */
    /* [A-Za-z0-9_-]{1,64}: names the temp file so a later begin with the
     * same id and resume=true continues it; NULL: a one-shot upload whose
     * temp file goes when the handle is closed uncommitted. */
    const char *upload_id;
    bool resume;           /* keep what an earlier try wrote */
    bool sha256;           /* hash the content (checked/returned at commit) */
    uint32_t mode;         /* permission bits of the new file; 0: 0644 */
} skv_storage_upload_options;

SKV_EXTERN void skv_storage_upload_options_init(skv_storage_upload_options *o);
/* Content goes to a temp file beside the target; the target is replaced
 * only by commit (fsync + rename), so a killed writer leaves the old file
 * or the new one, never a mix. */
SKV_EXTERN int skv_storage_upload_begin(skv_storage_host *host,
                                        const char *folder, const char *path,
                                        const skv_storage_upload_options *o,
                                        skv_storage_upload **out,
                                        skv_error *err);
/* Bytes already in the temp file (where a resumed upload continues). */
SKV_EXTERN uint64_t skv_storage_upload_offset(const skv_storage_upload *u);
SKV_EXTERN int skv_storage_upload_write(skv_storage_upload *u,
                                        const void *buf, size_t len,
                                        skv_error *err);
/* Verifies `expect` (NULL: no check; SKV_EPROTO and nothing replaced on a
 * mismatch), writes the hash to `out` (NULL: not wanted; both need the
 * sha256 option), then publishes the file. The handle stays to be closed. */
SKV_EXTERN int skv_storage_upload_commit(
    skv_storage_upload *u, const uint8_t expect[SKV_STORAGE_SHA256_BYTES],
    uint8_t out[SKV_STORAGE_SHA256_BYTES], skv_error *err);
/* Removes the temp file (also a resumable one) and frees the handle. */
SKV_EXTERN void skv_storage_upload_abort(skv_storage_upload *u);
/* Frees the handle; an uncommitted one-shot temp file is removed, a
 * resumable one is kept for a later begin. */
SKV_EXTERN void skv_storage_upload_close(skv_storage_upload *u);

/* ---- mounting into containers -------------------------------------------- */

typedef struct skv_storage_mount {
    char source[SKV_STORAGE_PATH_MAX]; /* host path of the folder */
    char target[SKV_STORAGE_PATH_MAX]; /* absolute path in the container */
    bool readonly;
    uint64_t dev, ino; /* identity of the folder when planned */
} skv_storage_mount;

/* Describes a bind mount of folder at target (absolute, no ".."). */
SKV_EXTERN int skv_storage_mount_plan(skv_storage_host *host,
                                      const char *folder, const char *target,
                                      bool readonly, skv_storage_mount *out,
                                      skv_error *err);
/* Checks again that the source still resolves inside the host root and is
 * the same folder (SKV_EPERM otherwise), then adds the bind mount to spec
 * (skv_container_spec_add_mount). */
SKV_EXTERN int skv_storage_mount_add(skv_storage_host *host,
                                     const skv_storage_mount *m,
                                     skv_container_spec *spec,
                                     skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_STORAGE_H */
