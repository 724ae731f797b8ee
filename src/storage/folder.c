/* Folder lifecycle: create (with its quota), info, quota changes, rename,
 * listing. Changes run under the host lock so two creators of one name, or
 * a rename racing a delete, see one order.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_internal.h"

static int check_host(skv_storage_host *h, skv_error *err)
{
    return h ? 0 : skv__err(err, SKV_EINVAL, "storage host is NULL");
}

/* Quota, owner and mode of a just-made top directory. */
static int finish_folder(skv_storage_host *h, const char *name,
                         uint64_t quota, uint32_t uid, uint32_t gid,
                         skv_error *err)
{
    int fd = skv__st_folder_fd(h, name, err);
    if (fd < 0)
        return fd;
    int rc = quota ? h->be->set_limit(h, fd, quota, err) : 0;
    if (rc == 0 && (fchown(fd, uid, gid) < 0 || fchmod(fd, 0755) < 0))
        rc = skv__err_sys(err, errno, "set the owner of folder '%s'", name);
    close(fd);
    return rc;
}

int skv_storage_folder_create(skv_storage_host *h, const char *name,
                              uint64_t quota_bytes, uint32_t uid, uint32_t gid,
                              skv_error *err)
{
    int rc = check_host(h, err);
    if (rc == 0)
        rc = skv__st_check_name(name, err);
    if (rc == 0 && quota_bytes && h->kind == SKV_STORAGE_QUOTA_NONE)
        rc = h->be->set_limit(h, -1, quota_bytes, err);
    if (rc == 0)
        rc = skv__st_lock(h, err);
    if (rc < 0)
        return rc;
    rc = h->be->make(h, name, err);
    if (rc == 0) {
        rc = finish_folder(h, name, quota_bytes, uid, gid, err);
        if (rc < 0) /* leave nothing half-made */
            h->be->destroy(h, h->folders_fd, name, NULL);
    }
    skv__st_unlock(h);
    return rc;
}

int skv_storage_folder_info_get(skv_storage_host *h, const char *name,
                                skv_storage_folder_info *info, skv_error *err)
{
    int rc = check_host(h, err);
    if (rc < 0)
        return rc;
    if (!info || info->version != SKV_STORAGE_FOLDER_INFO_VERSION)
        return skv__err(err, SKV_EVERSION, "folder info version");
    int fd = skv__st_folder_fd(h, name, err);
    if (fd < 0)
        return fd;
    struct stat st;
    rc = fstat(fd, &st) < 0 ? skv__err_sys(err, errno, "stat folder") : 0;
    if (rc == 0)
        rc = h->be->usage(h, fd, &info->usage_bytes, &info->quota_bytes,
                          &info->quota_id, err);
    if (rc == 0) {
        info->uid = st.st_uid;
        info->gid = st.st_gid;
    }
    close(fd);
    return rc;
}

int skv_storage_folder_set_quota(skv_storage_host *h, const char *name,
                                 uint64_t quota_bytes, skv_error *err)
{
    int rc = check_host(h, err);
    if (rc < 0)
        return rc;
    int fd = skv__st_folder_fd(h, name, err);
    if (fd < 0)
        return fd;
    rc = h->be->set_limit(h, fd, quota_bytes, err);
    close(fd);
    return rc;
}

/* renameat2 with RENAME_NOREPLACE: the existence check is the rename. */
int skv__st_move_name(int from_dir, const char *from, int to_dir,
                      const char *to, skv_error *err)
{
    if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) < 0)
        return skv__st_errno(err, errno, "rename", from);
    return 0;
}

int skv_storage_folder_rename(skv_storage_host *h, const char *from,
                              const char *to, skv_error *err)
{
    int rc = check_host(h, err);
    if (rc == 0)
        rc = skv__st_check_name(from, err);
    if (rc == 0)
        rc = skv__st_check_name(to, err);
    if (rc == 0)
        rc = skv__st_lock(h, err);
    if (rc < 0)
        return rc;
    rc = skv__st_move_name(h->folders_fd, from, h->folders_fd, to, err);
    skv__st_unlock(h);
    return rc;
}

/* Names of dir_fd's entries without a leading dot. */
int skv__st_list_names(int dir_fd, skv_storage_name_fn fn, void *ud,
                       skv_error *err)
{
    if (!fn)
        return skv__err(err, SKV_EINVAL, "list callback is NULL");
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return skv__err_sys(err, e, "read the folder list");
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)))
        if (de->d_name[0] != '.')
            rc = fn(de->d_name, ud);
    closedir(d);
    return rc;
}

int skv_storage_folder_list(skv_storage_host *h, skv_storage_name_fn fn,
                            void *ud, skv_error *err)
{
    int rc = check_host(h, err);
    return rc < 0 ? rc : skv__st_list_names(h->folders_fd, fn, ud, err);
}
