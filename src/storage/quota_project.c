/* XFS and ext4 backends: a project id per folder set on its top directory
 * with FS_IOC_FSSETXATTR and FS_XFLAG_PROJINHERIT (so everything created
 * below is charged to it), limited with quotactl on PRJQUOTA (the XFS
 * interface Q_XSETQLIM on XFS, the generic Q_SETQUOTA on ext4). quotactl_fd
 * takes the root's descriptor, so no block device has to be found.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dqblk_xfs.h>
#include <linux/fs.h>
#include <linux/quota.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "storage_internal.h"

/* Below this, ids are left to the administrator's own projects. */
#define PROJID_FIRST 10000u

static int qctl(int fd, unsigned cmd, uint32_t id, void *addr)
{
    return (int)syscall(SYS_quotactl_fd, fd, QCMD(cmd, PRJQUOTA), id, addr);
}

static bool is_xfs(const skv_storage_host *h)
{
    return h->kind == SKV_STORAGE_QUOTA_XFS;
}

static int no_quota(skv_storage_host *h, int e, skv_error *err)
{
    return skv__err(err, SKV_ENOTSUP,
                    "storage root %s: %s project quotas are not available "
                    "(%s; the kernel needs %s and the filesystem mounted with "
                    "prjquota), or configure quota=none", h->root,
                    skv_storage_quota_name(h->kind), strerror(e),
                    is_xfs(h) ? "CONFIG_XFS_QUOTA" : "CONFIG_QFMT_V2");
}

static int pq_check(skv_storage_host *h, skv_error *err)
{
    if (is_xfs(h)) {
        struct fs_quota_statv sv;
        memset(&sv, 0, sizeof(sv));
        sv.qs_version = FS_QSTATV_VERSION1;
        if (qctl(h->root_fd, Q_XGETQSTATV, 0, &sv) < 0)
            return no_quota(h, errno, err);
        unsigned need = FS_QUOTA_PDQ_ACCT | FS_QUOTA_PDQ_ENFD;
        if ((sv.qs_flags & need) != need)
            return no_quota(h, ENOTSUP, err);
        return 0;
    }
    struct if_dqinfo di;
    if (qctl(h->root_fd, Q_GETINFO, 0, &di) < 0)
        return no_quota(h, errno, err);
    return 0;
}

static int get_projid(int fd, uint32_t *id, skv_error *err)
{
    struct fsxattr fa;
    if (ioctl(fd, FS_IOC_FSGETXATTR, &fa) < 0)
        return skv__err_sys(err, errno, "read project id");
    *id = fa.fsx_projid;
    return 0;
}

/* Highest project id under dir_fd's entries (folders and trash keep theirs
 * until purged), so a new folder never shares another's accounting. */
static uint32_t max_projid(int dir_fd, uint32_t floor)
{
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return floor;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        int c = openat(fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        uint32_t id = 0;
        if (c >= 0 && get_projid(c, &id, NULL) == 0 && id > floor)
            floor = id;
        if (c >= 0)
            close(c);
    }
    closedir(d);
    return floor;
}

static int set_projid(int fd, uint32_t id, skv_error *err)
{
    struct fsxattr fa;
    if (ioctl(fd, FS_IOC_FSGETXATTR, &fa) < 0)
        return skv__err_sys(err, errno, "read project attributes");
    fa.fsx_projid = id;
    fa.fsx_xflags |= FS_XFLAG_PROJINHERIT;
    if (ioctl(fd, FS_IOC_FSSETXATTR, &fa) < 0)
        return skv__err_sys(err, errno, "set project id %u", id);
    return 0;
}

/* Called under the host lock, so the id chosen stays unique. */
static int pq_make(skv_storage_host *h, const char *name, skv_error *err)
{
    if (mkdirat(h->folders_fd, name, 0700) < 0)
        return skv__st_errno(err, errno, "create folder", name);
    uint32_t id = max_projid(h->folders_fd, PROJID_FIRST - 1);
    id = max_projid(h->trash_fd, id) + 1;
    int fd = openat(h->folders_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = fd < 0 ? skv__st_errno(err, errno, "open folder", name)
                    : set_projid(fd, id, err);
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        unlinkat(h->folders_fd, name, AT_REMOVEDIR);
    return rc;
}

static int pq_set_limit(skv_storage_host *h, int dir_fd, uint64_t bytes,
                        skv_error *err)
{
    uint32_t id = 0;
    int rc = get_projid(dir_fd, &id, err);
    if (rc < 0)
        return rc;
    if (is_xfs(h)) {
        struct fs_disk_quota d;
        memset(&d, 0, sizeof(d));
        d.d_version = FS_DQUOT_VERSION;
        d.d_flags = FS_PROJ_QUOTA;
        d.d_id = id;
        d.d_fieldmask = FS_DQ_BHARD;
        d.d_blk_hardlimit = (bytes + 511) / 512; /* basic blocks */
        rc = qctl(h->root_fd, Q_XSETQLIM, id, &d);
    } else {
        struct if_dqblk q;
        memset(&q, 0, sizeof(q));
        q.dqb_bhardlimit = (bytes + QIF_DQBLKSIZE - 1) / QIF_DQBLKSIZE;
        q.dqb_valid = QIF_BLIMITS;
        rc = qctl(h->root_fd, Q_SETQUOTA, id, &q);
    }
    if (rc < 0)
        return skv__err_sys(err, errno, "set the limit of project %u", id);
    return 0;
}

static int pq_usage(skv_storage_host *h, int dir_fd, uint64_t *used,
                    uint64_t *limit, uint64_t *id64, skv_error *err)
{
    uint32_t id = 0;
    int rc = get_projid(dir_fd, &id, err);
    if (rc < 0)
        return rc;
    *id64 = id;
    if (is_xfs(h)) {
        struct fs_disk_quota d;
        memset(&d, 0, sizeof(d));
        rc = qctl(h->root_fd, Q_XGETQUOTA, id, &d);
        *used = d.d_bcount * 512;
        *limit = d.d_blk_hardlimit * 512;
    } else {
        struct if_dqblk q;
        memset(&q, 0, sizeof(q));
        rc = qctl(h->root_fd, Q_GETQUOTA, id, &q);
        *used = q.dqb_curspace;
        *limit = q.dqb_bhardlimit * QIF_DQBLKSIZE;
    }
    if (rc < 0)
        return skv__err_sys(err, errno, "read the quota of project %u", id);
    return 0;
}

/* The limit goes with the folder: a later folder reusing nothing of it. */
static int pq_destroy(skv_storage_host *h, int parent_fd, const char *name,
                      skv_error *err)
{
    int fd = openat(parent_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        pq_set_limit(h, fd, 0, NULL);
        close(fd);
    }
    return skv__st_tree_remove(parent_fd, name, err);
}

const skv__st_backend skv__st_xfs = {
    .kind = SKV_STORAGE_QUOTA_XFS,
    .check = pq_check,
    .make = pq_make,
    .set_limit = pq_set_limit,
    .usage = pq_usage,
    .clone = NULL,
    .destroy = pq_destroy,
};

const skv__st_backend skv__st_ext4 = {
    .kind = SKV_STORAGE_QUOTA_EXT4,
    .check = pq_check,
    .make = pq_make,
    .set_limit = pq_set_limit,
    .usage = pq_usage,
    .clone = NULL,
    .destroy = pq_destroy,
};
