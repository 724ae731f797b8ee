/* Cloning a folder: a btrfs snapshot (instant, shares extents), elsewhere a
 * fresh folder of the same backend filled by a tree copy. The clone gets
 * the source's owner and quota.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_internal.h"

static int make_copy(skv_storage_host *h, int src_fd, const char *to,
                     skv_error *err)
{
    int rc = h->be->make(h, to, err);
    if (rc < 0)
        return rc;
    int dst = skv__st_folder_fd(h, to, err);
    if (dst < 0)
        return dst;
    rc = skv__st_tree_copy(src_fd, dst, err);
    close(dst);
    return rc;
}

static int copy_attrs(skv_storage_host *h, int src_fd, const char *to,
                      skv_error *err)
{
    uint64_t used, limit, id;
    struct stat st;
    int rc = h->be->usage(h, src_fd, &used, &limit, &id, err);
    if (rc == 0 && fstat(src_fd, &st) < 0)
        rc = skv__err_sys(err, errno, "stat the source folder");
    int dst = rc < 0 ? rc : skv__st_folder_fd(h, to, err);
    if (dst < 0)
        return dst;
    rc = limit ? h->be->set_limit(h, dst, limit, err) : 0;
    if (rc == 0 && (fchown(dst, st.st_uid, st.st_gid) < 0 ||
                    fchmod(dst, st.st_mode & 07777) < 0))
        rc = skv__err_sys(err, errno, "set the owner of folder '%s'", to);
    close(dst);
    return rc;
}

int skv_storage_folder_clone(skv_storage_host *h, const char *from,
                             const char *to, skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    int rc = skv__st_check_name(to, err);
    if (rc == 0)
        rc = skv__st_lock(h, err);
    if (rc < 0)
        return rc;
    int src = skv__st_folder_fd(h, from, err);
    if (src < 0) {
        skv__st_unlock(h);
        return src;
    }
    bool exists = faccessat(h->folders_fd, to, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    rc = exists ? skv__err(err, SKV_EEXIST, "folder '%s' exists", to)
         : h->be->clone ? h->be->clone(h, src, to, err)
                        : make_copy(h, src, to, err);
    if (rc == 0)
        rc = copy_attrs(h, src, to, err);
    if (rc < 0 && !exists)
        h->be->destroy(h, h->folders_fd, to, NULL);
    close(src);
    skv__st_unlock(h);
    return rc;
}
