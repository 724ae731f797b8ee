/* btrfs backend: a subvolume per folder, limited by its level-0 qgroup
 * (0/<subvolume id>) through BTRFS_IOC_QGROUP_LIMIT; usage and limit read
 * from the quota tree with BTRFS_IOC_TREE_SEARCH (libbtrfsutil has no
 * qgroup calls); subvolumes made, snapshotted and deleted by libbtrfsutil.
 * SPDX-License-Identifier: Apache-2.0 */
#include <btrfsutil.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "storage_internal.h"

static int util_err(skv_error *err, enum btrfs_util_error e, const char *what,
                    const char *name)
{
    int se = errno;
    if (se == EDQUOT || se == ENOSPC || se == EEXIST || se == ENOENT)
        return skv__st_errno(err, se, what, name);
    return skv__err(err, SKV_EIO, "%s '%s': %s (%s)", what, name,
                    btrfs_util_strerror(e), strerror(se));
}

/* One item of the quota tree: (0, type, offset). *found false when absent. */
static int quota_item(int fd, uint32_t type, uint64_t offset, void *item,
                      size_t len, bool *found, skv_error *err)
{
    struct btrfs_ioctl_search_args a;
    memset(&a, 0, sizeof(a));
    a.key.tree_id = BTRFS_QUOTA_TREE_OBJECTID;
    a.key.min_type = a.key.max_type = type;
    a.key.min_offset = a.key.max_offset = offset;
    a.key.max_transid = UINT64_MAX;
    a.key.nr_items = 1;
    *found = false;
    if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a) < 0) {
        if (errno == ENOENT) /* no quota tree: quotas are off */
            return 0;
        return skv__err_sys(err, errno, "search the btrfs quota tree");
    }
    if (a.key.nr_items == 0)
        return 0;
    const struct btrfs_ioctl_search_header *sh = (const void *)a.buf;
    if (sh->len < len)
        return skv__err(err, SKV_EPROTO, "short btrfs qgroup item");
    memcpy(item, a.buf + sizeof(*sh), len);
    *found = true;
    return 0;
}

static int bt_check(skv_storage_host *h, skv_error *err)
{
    struct btrfs_qgroup_status_item st;
    bool found;
    int rc = quota_item(h->root_fd, BTRFS_QGROUP_STATUS_KEY, 0, &st,
                        sizeof(st), &found, err);
    if (rc == 0 && !found)
        rc = skv__err(err, SKV_ENOTSUP,
                      "storage root %s: btrfs quotas are off (run `btrfs "
                      "quota enable` on its mount, or configure quota=none)",
                      h->root);
    return rc;
}

static int bt_make(skv_storage_host *h, const char *name, skv_error *err)
{
    enum btrfs_util_error e =
        btrfs_util_create_subvolume_fd(h->folders_fd, name, 0, NULL, NULL);
    return e ? util_err(err, e, "create subvolume", name) : 0;
}

static int subvol_id(int fd, uint64_t *id, skv_error *err)
{
    enum btrfs_util_error e = btrfs_util_subvolume_id_fd(fd, id);
    return e ? util_err(err, e, "subvolume id of", "folder") : 0;
}

static int bt_set_limit(skv_storage_host *h, int dir_fd, uint64_t bytes,
                        skv_error *err)
{
    SKV__UNUSED(h);
    uint64_t id;
    int rc = subvol_id(dir_fd, &id, err);
    if (rc < 0)
        return rc;
    struct btrfs_ioctl_qgroup_limit_args a;
    memset(&a, 0, sizeof(a));
    a.qgroupid = id; /* level 0: the subvolume's own qgroup */
    a.lim.flags = BTRFS_QGROUP_LIMIT_MAX_RFER;
    a.lim.max_rfer = bytes ? bytes : UINT64_MAX; /* all-ones clears it */
    if (ioctl(dir_fd, BTRFS_IOC_QGROUP_LIMIT, &a) < 0)
        return skv__err_sys(err, errno, "limit qgroup 0/%llu",
                            (unsigned long long)id);
    return 0;
}

static int bt_usage(skv_storage_host *h, int dir_fd, uint64_t *used,
                    uint64_t *limit, uint64_t *id, skv_error *err)
{
    SKV__UNUSED(h);
    int rc = subvol_id(dir_fd, id, err);
    if (rc < 0)
        return rc;
    /* Qgroup numbers are updated at transaction commit: commit first so
     * what was just written shows. */
    btrfs_util_sync_fd(dir_fd);
    struct btrfs_qgroup_info_item info;
    struct btrfs_qgroup_limit_item lim;
    bool found_i, found_l;
    rc = quota_item(dir_fd, BTRFS_QGROUP_INFO_KEY, *id, &info, sizeof(info),
                    &found_i, err);
    if (rc == 0)
        rc = quota_item(dir_fd, BTRFS_QGROUP_LIMIT_KEY, *id, &lim,
                        sizeof(lim), &found_l, err);
    if (rc < 0)
        return rc;
    if (!found_i)
        return skv__err(err, SKV_ENOENT, "no qgroup 0/%llu",
                        (unsigned long long)*id);
    *used = le64toh(info.rfer);
    bool has = found_l && (le64toh(lim.flags) & BTRFS_QGROUP_LIMIT_MAX_RFER);
    *limit = has ? le64toh(lim.max_rfer) : 0;
    return 0;
}

static int bt_clone(skv_storage_host *h, int src_fd, const char *to,
                    skv_error *err)
{
    enum btrfs_util_error e = btrfs_util_create_snapshot_fd2(
        src_fd, h->folders_fd, to, 0, NULL, NULL);
    return e ? util_err(err, e, "snapshot to", to) : 0;
}

/* The qgroup of a deleted subvolume stays until removed; it may still be
 * busy while the cleaner drops the subvolume, which only costs an item. */
static void drop_qgroup(int fd, uint64_t id)
{
    struct btrfs_ioctl_qgroup_create_args a = {.create = 0, .qgroupid = id};
    if (ioctl(fd, BTRFS_IOC_QGROUP_CREATE, &a) < 0)
        skv__log(SKV_LOG_DEBUG, "storage", "qgroup 0/%llu kept: %s",
                 (unsigned long long)id, strerror(errno));
}

static int bt_destroy(skv_storage_host *h, int parent_fd, const char *name,
                      skv_error *err)
{
    SKV__UNUSED(h);
    int fd = openat(parent_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return skv__st_errno(err, errno, "open", name);
    uint64_t id = 0;
    bool subvol = btrfs_util_is_subvolume_fd(fd) == BTRFS_UTIL_OK;
    if (subvol && btrfs_util_subvolume_id_fd(fd, &id) != BTRFS_UTIL_OK)
        id = 0;
    close(fd);
    if (!subvol)
        return skv__st_tree_remove(parent_fd, name, err);
    enum btrfs_util_error e = btrfs_util_delete_subvolume_fd(
        parent_fd, name, BTRFS_UTIL_DELETE_SUBVOLUME_RECURSIVE);
    if (e)
        return util_err(err, e, "delete subvolume", name);
    if (id)
        drop_qgroup(parent_fd, id);
    return 0;
}

const skv__st_backend skv__st_btrfs = {
    .kind = SKV_STORAGE_QUOTA_BTRFS,
    .check = bt_check,
    .make = bt_make,
    .set_limit = bt_set_limit,
    .usage = bt_usage,
    .clone = bt_clone,
    .destroy = bt_destroy,
};
