/* Whole-tree operations on directory descriptors (remove, copy, usage,
 * chown). Every step is *at() relative to an already-open directory and
 * never follows a symlink, so a tree being changed underneath cannot send
 * us outside it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_internal.h"

/* Deeper trees are refused rather than running out of descriptors. */
#define TREE_DEPTH_MAX 256

typedef int (*entry_fn)(int dir_fd, const char *name, const struct stat *st,
                        int depth, void *ud, skv_error *err);

static int open_dir_at(int dir_fd, const char *name, skv_error *err)
{
    int fd = openat(dir_fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return skv__st_errno(err, errno, "open directory", name);
    return fd;
}

/* Calls fn for each entry of dir_fd (not . and ..). */
static int each_entry(int dir_fd, int depth, entry_fn fn, void *ud,
                      skv_error *err)
{
    if (depth > TREE_DEPTH_MAX)
        return skv__err(err, SKV_ERANGE, "directory tree deeper than %d",
                        TREE_DEPTH_MAX);
    int fd = open_dir_at(dir_fd, ".", err);
    if (fd < 0)
        return fd;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return skv__err_sys(err, errno, "read directory");
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            rc = skv__st_errno(err, errno, "stat", de->d_name);
        else
            rc = fn(fd, de->d_name, &st, depth, ud, err);
    }
    closedir(d);
    return rc;
}

static int remove_entry(int dir_fd, const char *name, const struct stat *st,
                        int depth, void *ud, skv_error *err)
{
    SKV__UNUSED(ud);
    if (S_ISDIR(st->st_mode)) {
        int sub = open_dir_at(dir_fd, name, err);
        if (sub < 0)
            return sub;
        int rc = each_entry(sub, depth + 1, remove_entry, NULL, err);
        close(sub);
        if (rc < 0)
            return rc;
    }
    if (unlinkat(dir_fd, name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0) < 0)
        return skv__st_errno(err, errno, "remove", name);
    return 0;
}

int skv__st_tree_remove(int parent_fd, const char *name, skv_error *err)
{
    struct stat st;
    if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return skv__st_errno(err, errno, "stat", name);
    return remove_entry(parent_fd, name, &st, 0, NULL, err);
}

static int usage_entry(int dir_fd, const char *name, const struct stat *st,
                       int depth, void *ud, skv_error *err)
{
    uint64_t *sum = ud;
    *sum += (uint64_t)st->st_blocks * 512;
    if (!S_ISDIR(st->st_mode))
        return 0;
    int sub = open_dir_at(dir_fd, name, err);
    if (sub < 0)
        return sub;
    int rc = each_entry(sub, depth + 1, usage_entry, ud, err);
    close(sub);
    return rc;
}

int skv__st_tree_usage(int dir_fd, uint64_t *bytes, skv_error *err)
{
    *bytes = 0;
    return each_entry(dir_fd, 0, usage_entry, bytes, err);
}

typedef struct owner {
    uint32_t uid, gid;
} owner;

static int chown_entry(int dir_fd, const char *name, const struct stat *st,
                       int depth, void *ud, skv_error *err)
{
    const owner *o = ud;
    if (fchownat(dir_fd, name, o->uid, o->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return skv__st_errno(err, errno, "chown", name);
    if (!S_ISDIR(st->st_mode))
        return 0;
    int sub = open_dir_at(dir_fd, name, err);
    if (sub < 0)
        return sub;
    int rc = each_entry(sub, depth + 1, chown_entry, ud, err);
    close(sub);
    return rc;
}

int skv__st_tree_chown(int dir_fd, uint32_t uid, uint32_t gid, skv_error *err)
{
    owner o = {uid, gid};
    return each_entry(dir_fd, 0, chown_entry, &o, err);
}

/* ---- copy ---------------------------------------------------------------- */

static int copy_bytes(int in, int out, skv_error *err)
{
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0)
            continue;
        if (errno == EINTR)
            continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EINVAL)
            return skv__st_errno(err, errno, "copy", "file");
        break;
    }
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        if (write(out, buf, (size_t)n) != n)
            return skv__st_errno(err, errno ? errno : EIO, "copy", "file");
    }
    return n < 0 ? skv__st_errno(err, errno, "copy", "file") : 0;
}

static int copy_file(int src_dir, int dst_dir, const char *name,
                     const struct stat *st, skv_error *err)
{
    int in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return skv__st_errno(err, errno, "open", name);
    int out = openat(dst_dir, name,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
    int rc = out < 0 ? skv__st_errno(err, errno, "create", name)
                     : copy_bytes(in, out, err);
    if (rc == 0 && (fchown(out, st->st_uid, st->st_gid) < 0 ||
                    fchmod(out, st->st_mode & 07777) < 0))
        rc = skv__st_errno(err, errno, "set owner of", name);
    if (out >= 0)
        close(out);
    close(in);
    return rc;
}

static int copy_link(int src_dir, int dst_dir, const char *name,
                     const struct stat *st, skv_error *err)
{
    char target[SKV_STORAGE_PATH_MAX];
    ssize_t n = readlinkat(src_dir, name, target, sizeof(target) - 1);
    if (n < 0)
        return skv__st_errno(err, errno, "read link", name);
    target[n] = '\0';
    if (symlinkat(target, dst_dir, name) < 0 ||
        fchownat(dst_dir, name, st->st_uid, st->st_gid,
                 AT_SYMLINK_NOFOLLOW) < 0)
        return skv__st_errno(err, errno, "create link", name);
    return 0;
}

static int copy_entry(int src_dir, const char *name, const struct stat *st,
                      int depth, void *ud, skv_error *err);

static int copy_dir(int src_dir, int dst_dir, const char *name,
                    const struct stat *st, int depth, skv_error *err)
{
    if (mkdirat(dst_dir, name, 0700) < 0)
        return skv__st_errno(err, errno, "create directory", name);
    int s = open_dir_at(src_dir, name, err);
    int d = s < 0 ? s : open_dir_at(dst_dir, name, err);
    int rc = d < 0 ? d : each_entry(s, depth + 1, copy_entry, &d, err);
    if (rc == 0 && (fchown(d, st->st_uid, st->st_gid) < 0 ||
                    fchmod(d, st->st_mode & 07777) < 0))
        rc = skv__st_errno(err, errno, "set owner of", name);
    if (d >= 0)
        close(d);
    if (s >= 0)
        close(s);
    return rc;
}

/* Devices, fifos and sockets are not data: skipped. */
static int copy_entry(int src_dir, const char *name, const struct stat *st,
                      int depth, void *ud, skv_error *err)
{
    int dst_dir = *(int *)ud;
    if (S_ISREG(st->st_mode))
        return copy_file(src_dir, dst_dir, name, st, err);
    if (S_ISLNK(st->st_mode))
        return copy_link(src_dir, dst_dir, name, st, err);
    if (S_ISDIR(st->st_mode))
        return copy_dir(src_dir, dst_dir, name, st, depth, err);
    return 0;
}

int skv__st_tree_copy(int src_fd, int dst_fd, skv_error *err)
{
    return each_entry(src_fd, 0, copy_entry, &dst_fd, err);
}
