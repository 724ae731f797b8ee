/* Storage hosts: open a root, lay out folders/ and trash/, pick and check
 * the quota backend from the filesystem type.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "storage_internal.h"

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif

void skv_storage_host_options_init(skv_storage_host_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->version = SKV_STORAGE_HOST_OPTIONS_VERSION;
    o->quota = SKV_STORAGE_QUOTA_AUTO;
}

static const skv__st_backend *backend_of(skv_storage_quota_kind k)
{
    switch (k) {
    case SKV_STORAGE_QUOTA_BTRFS: return &skv__st_btrfs;
    case SKV_STORAGE_QUOTA_XFS: return &skv__st_xfs;
    case SKV_STORAGE_QUOTA_EXT4: return &skv__st_ext4;
    case SKV_STORAGE_QUOTA_NONE: return &skv__st_none;
    default: return NULL;
    }
}

/* AUTO: the filesystem type decides; anything without a quota backend is
 * refused, because silently unlimited folders would fill the disk. */
static int detect(skv_storage_host *h, skv_storage_quota_kind want,
                  skv_error *err)
{
    struct statfs sf;
    if (fstatfs(h->root_fd, &sf) < 0)
        return skv__err_sys(err, errno, "statfs %s", h->root);
    skv_storage_quota_kind fs = SKV_STORAGE_QUOTA_AUTO;
    if (sf.f_type == BTRFS_SUPER_MAGIC)
        fs = SKV_STORAGE_QUOTA_BTRFS;
    else if (sf.f_type == XFS_SUPER_MAGIC)
        fs = SKV_STORAGE_QUOTA_XFS;
    else if (sf.f_type == EXT4_SUPER_MAGIC)
        fs = SKV_STORAGE_QUOTA_EXT4;
    if (want == SKV_STORAGE_QUOTA_NONE) {
        h->kind = want;
    } else if (fs == SKV_STORAGE_QUOTA_AUTO) {
        return skv__err(err, SKV_ENOTSUP,
                        "storage root %s: filesystem type 0x%lx has no quota "
                        "support (use btrfs, xfs or ext4, or configure "
                        "quota=none)", h->root, (unsigned long)sf.f_type);
    } else if (want != SKV_STORAGE_QUOTA_AUTO && want != fs) {
        return skv__err(err, SKV_ENOTSUP,
                        "storage root %s is %s, not %s", h->root,
                        skv_storage_quota_name(fs),
                        skv_storage_quota_name(want));
    } else {
        h->kind = fs;
    }
    h->be = backend_of(h->kind);
    return h->be->check(h, err);
}

static int open_sub(skv_storage_host *h, const char *name, skv_error *err)
{
    if (mkdirat(h->root_fd, name, 0711) < 0 && errno != EEXIST)
        return skv__err_sys(err, errno, "mkdir %s/%s", h->root, name);
    int fd = openat(h->root_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return skv__err_sys(err, errno, "open %s/%s", h->root, name);
    return fd;
}

static int check_opts(const skv_storage_host_options *o, skv_error *err)
{
    if (!o)
        return skv__err(err, SKV_EINVAL, "storage host options are NULL");
    if (o->version != SKV_STORAGE_HOST_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "storage host options version %u",
                        o->version);
    if (!o->root || o->root[0] != '/')
        return skv__err(err, SKV_EINVAL, "storage root '%s' is not absolute",
                        o->root ? o->root : "(null)");
    if ((unsigned)o->quota > SKV_STORAGE_QUOTA_EXT4)
        return skv__err(err, SKV_EINVAL, "unknown quota kind %d", o->quota);
    return 0;
}

static int host_init(skv_storage_host *h, const skv_storage_host_options *o,
                     skv_error *err)
{
    h->root_fd = open(h->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (h->root_fd < 0)
        return skv__st_errno(err, errno, "storage root", h->root);
    int rc = detect(h, o->quota, err);
    if (rc < 0)
        return rc;
    h->folders_fd = open_sub(h, "folders", err);
    if (h->folders_fd < 0)
        return h->folders_fd;
    h->trash_fd = open_sub(h, "trash", err);
    return h->trash_fd < 0 ? h->trash_fd : 0;
}

int skv_storage_host_open(skv_storage_host **out,
                          const skv_storage_host_options *opts, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "out is NULL");
    *out = NULL;
    int rc = check_opts(opts, err);
    if (rc < 0)
        return rc;
    skv_storage_host *h = skv__calloc(1, sizeof(*h));
    if (!h || !(h->root = skv__strdup(opts->root))) {
        skv__free(h);
        return skv__err(err, SKV_ENOMEM, "storage host");
    }
    h->root_fd = h->folders_fd = h->trash_fd = -1;
    pthread_mutex_init(&h->mu, NULL);
    rc = host_init(h, opts, err);
    if (rc < 0) {
        skv_storage_host_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

void skv_storage_host_close(skv_storage_host *h)
{
    if (!h)
        return;
    if (h->trash_fd >= 0)
        close(h->trash_fd);
    if (h->folders_fd >= 0)
        close(h->folders_fd);
    if (h->root_fd >= 0)
        close(h->root_fd);
    pthread_mutex_destroy(&h->mu);
    skv__free(h->root);
    skv__free(h);
}

skv_storage_quota_kind skv_storage_host_quota(const skv_storage_host *h)
{
    return h ? h->kind : SKV_STORAGE_QUOTA_AUTO;
}

const char *skv_storage_host_root(const skv_storage_host *h)
{
    return h ? h->root : NULL;
}

/* flock, not a mutex: two daemons (or a CLI beside a daemon) may share a
 * root, and a check-then-create of a folder name must not interleave. */
int skv__st_lock(skv_storage_host *h, skv_error *err)
{
    pthread_mutex_lock(&h->mu);
    while (flock(h->root_fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int e = errno;
            pthread_mutex_unlock(&h->mu);
            return skv__err_sys(err, e, "lock %s", h->root);
        }
    }
    return 0;
}

void skv__st_unlock(skv_storage_host *h)
{
    flock(h->root_fd, LOCK_UN);
    pthread_mutex_unlock(&h->mu);
}

int skv__st_folder_fd(skv_storage_host *h, const char *name, skv_error *err)
{
    int rc = skv__st_check_name(name, err);
    if (rc < 0)
        return rc;
    int fd = openat(h->folders_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT
                   ? skv__err(err, SKV_ENOENT, "folder '%s' does not exist",
                              name)
                   : skv__st_errno(err, errno, "folder", name);
    return fd;
}
