/* File operations inside a folder: ls, stat, mkdir, rm, mv, chown. Each
 * resolves its path through fsdoor.c beneath the folder's descriptor and
 * then acts with *at() calls on the parent it got, never on a path string.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_internal.h"

static void fill_entry(skv_storage_entry *e, const char *name,
                       const struct stat *st)
{
    memset(e, 0, sizeof(*e));
    e->name = name;
    e->type = S_ISREG(st->st_mode)   ? 'f'
              : S_ISDIR(st->st_mode) ? 'd'
              : S_ISLNK(st->st_mode) ? 'l'
                                     : 'o';
    e->size = (uint64_t)st->st_size;
    e->mode = st->st_mode & 07777;
    e->uid = st->st_uid;
    e->gid = st->st_gid;
    e->mtime_s = st->st_mtim.tv_sec;
}

/* The folder's descriptor, checking the host first. */
static int folder(skv_storage_host *h, const char *name, skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    return skv__st_folder_fd(h, name, err);
}

static int list_dir(int dir, skv_storage_entry_fn fn, void *ud,
                    skv_error *err)
{
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return skv__err_sys(err, errno, "read directory");
    }
    int rc = 0;
    struct dirent *de;
    size_t plen = strlen(SKV__ST_UPLOAD_PREFIX);
    while (rc == 0 && (de = readdir(d))) {
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
            !strncmp(de->d_name, SKV__ST_UPLOAD_PREFIX, plen) ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        skv_storage_entry e;
        fill_entry(&e, de->d_name, &st);
        rc = fn(&e, ud);
    }
    closedir(d);
    return rc;
}

int skv_storage_ls(skv_storage_host *h, const char *fname, const char *path,
                   skv_storage_entry_fn fn, void *ud, skv_error *err)
{
    if (!fn)
        return skv__err(err, SKV_EINVAL, "ls callback is NULL");
    int f = folder(h, fname, err);
    if (f < 0)
        return f;
    int d = skv__st_open_beneath(f, path, O_RDONLY | O_DIRECTORY, 0, err);
    close(f);
    return d < 0 ? d : list_dir(d, fn, ud, err);
}

int skv_storage_stat(skv_storage_host *h, const char *fname, const char *path,
                     skv_storage_entry *out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "out is NULL");
    int f = folder(h, fname, err);
    if (f < 0)
        return f;
    /* O_PATH|O_NOFOLLOW: a final symlink is described, not followed. */
    int fd = skv__st_open_beneath(f, path, O_PATH | O_NOFOLLOW, 0, err);
    close(f);
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? skv__err_sys(err, errno, "stat") : 0;
    close(fd);
    if (rc == 0)
        fill_entry(out, NULL, &st);
    return rc;
}

/* Parent of path inside folder fname, and the last component. */
static int parent_of(skv_storage_host *h, const char *fname, const char *path,
                     char *base, uint32_t *uid, uint32_t *gid, skv_error *err)
{
    int f = folder(h, fname, err);
    if (f < 0)
        return f;
    struct stat st;
    if (uid && fstat(f, &st) == 0) {
        *uid = st.st_uid;
        *gid = st.st_gid;
    }
    int p = skv__st_open_parent(f, path, base, NAME_MAX + 1, err);
    close(f);
    return p;
}

int skv_storage_mkdir(skv_storage_host *h, const char *fname, const char *path,
                      skv_error *err)
{
    char base[NAME_MAX + 1];
    uint32_t uid = 0, gid = 0;
    int p = parent_of(h, fname, path, base, &uid, &gid, err);
    if (p < 0)
        return p;
    int rc = 0;
    if (mkdirat(p, base, 0755) < 0)
        rc = skv__st_errno(err, errno, "mkdir", path);
    else if (fchownat(p, base, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        rc = skv__st_errno(err, errno, "chown", path);
    close(p);
    return rc;
}

int skv_storage_rm(skv_storage_host *h, const char *fname, const char *path,
                   bool recursive, skv_error *err)
{
    char base[NAME_MAX + 1];
    int p = parent_of(h, fname, path, base, NULL, NULL, err);
    if (p < 0)
        return p;
    struct stat st;
    int rc = 0;
    if (fstatat(p, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        rc = skv__st_errno(err, errno, "rm", path);
    else if (recursive)
        rc = skv__st_tree_remove(p, base, err);
    else if (unlinkat(p, base, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
        rc = skv__st_errno(err, errno, "rm", path);
    close(p);
    return rc;
}

int skv_storage_mv(skv_storage_host *h, const char *fname, const char *from,
                   const char *to, skv_error *err)
{
    char b1[NAME_MAX + 1], b2[NAME_MAX + 1];
    int p1 = parent_of(h, fname, from, b1, NULL, NULL, err);
    if (p1 < 0)
        return p1;
    int p2 = parent_of(h, fname, to, b2, NULL, NULL, err);
    int rc = p2 < 0 ? p2 : skv__st_move_name(p1, b1, p2, b2, err);
    if (p2 >= 0)
        close(p2);
    close(p1);
    return rc;
}

int skv_storage_chown(skv_storage_host *h, const char *fname, const char *path,
                      uint32_t uid, uint32_t gid, bool recursive,
                      skv_error *err)
{
    int f = folder(h, fname, err);
    if (f < 0)
        return f;
    /* O_PATH|O_NOFOLLOW + AT_EMPTY_PATH: a final symlink is re-owned
     * itself, never what it points to. */
    int fd = skv__st_open_beneath(f, path, O_PATH | O_NOFOLLOW, 0, err);
    close(f);
    if (fd < 0)
        return fd;
    int rc = 0;
    struct stat st;
    if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ||
        fstat(fd, &st) < 0)
        rc = skv__err_sys(err, errno, "chown '%s'", path);
    if (rc == 0 && recursive && S_ISDIR(st.st_mode)) {
        int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = d < 0 ? skv__err_sys(err, errno, "open '%s'", path)
                   : skv__st_tree_chown(d, uid, gid, err);
        if (d >= 0)
            close(d);
    }
    close(fd);
    return rc;
}
