/* The one door through which files inside a storage folder are reached:
 * every path a client names is resolved by the kernel beneath the folder's
 * directory descriptor (openat2 RESOLVE_BENEATH), at the moment of use, so
 * neither "..", an absolute path nor a symlink (also one swapped in after a
 * check) can lead outside. Kernels without openat2 get a component walk
 * that refuses every symlink and "..".
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "storage_internal.h"

/* Atomic: any thread may find out that the kernel lacks openat2. */
static _Atomic bool force_fallback;

void skv__st_force_fallback(bool on)
{
    force_fallback = on;
}

int skv__st_errno(skv_error *err, int e, const char *what, const char *path)
{
    switch (e) {
    case ENOENT:
        return skv__err(err, SKV_ENOENT, "%s '%s': no such file or directory",
                        what, path);
    case EEXIST:
    case ENOTEMPTY:
        return skv__err(err, e == EEXIST ? SKV_EEXIST : SKV_EBUSY,
                        "%s '%s': %s", what, path, strerror(e));
    case EXDEV:
    case ELOOP:
        /* RESOLVE_BENEATH says EXDEV for an escape, O_NOFOLLOW ELOOP. */
        return skv__err(err, SKV_EPERM,
                        "%s '%s': path leaves the folder (refused)", what,
                        path);
    case EDQUOT:
    case ENOSPC: {
        int rc = skv__err(err, SKV_ENOSPC, "%s '%s': %s", what, path,
                          strerror(e));
        if (err)
            err->sys_errno = e;
        return rc;
    }
    case ENOTDIR:
    case EISDIR:
        return skv__err(err, SKV_EINVAL, "%s '%s': %s", what, path,
                        strerror(e));
    default:
        return skv__err_sys(err, e, "%s '%s'", what, path);
    }
}

int skv__st_check_rel(const char *rel, skv_error *err)
{
    if (!rel)
        return skv__err(err, SKV_EINVAL, "path is NULL");
    size_t n = strnlen(rel, SKV_STORAGE_PATH_MAX);
    if (n >= SKV_STORAGE_PATH_MAX)
        return skv__err(err, SKV_ERANGE, "path is too long");
    if (rel[0] == '/')
        return skv__err(err, SKV_EPERM,
                        "path '%s' is absolute (paths are relative to the "
                        "folder)", rel);
    /* ".." is refused by name as well, so "a/../../x" fails the same way
     * whether or not "a" exists. */
    for (const char *c = rel; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 2 && c[0] == '.' && c[1] == '.')
            return skv__err(err, SKV_EPERM,
                            "path '%s' has a '..' component (refused)", rel);
        c += len;
        c += *c == '/';
    }
    return 0;
}

static int openat2_beneath(int dir_fd, const char *rel, int flags, mode_t mode)
{
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, dir_fd, rel, &how, sizeof(how));
}

/* Fallback: one component at a time, never following a symlink and never
 * accepting "..", so nothing can leave dir_fd. */
static int walk_beneath(int dir_fd, const char *rel, int flags, mode_t mode)
{
    char buf[SKV_STORAGE_PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", rel);
    int cur = dup(dir_fd);
    char *save = NULL;
    char *c = strtok_r(buf, "/", &save);
    while (cur >= 0 && c) {
        char *next = strtok_r(NULL, "/", &save);
        if (strcmp(c, "..") == 0) {
            close(cur);
            errno = EXDEV;
            return -1;
        }
        int f = next ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                     : flags | O_NOFOLLOW | O_CLOEXEC;
        int fd = openat(cur, c, f, mode);
        int e = errno;
        struct stat st;
        if (fd < 0 && (e == ENOTDIR || e == ELOOP) &&
            fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
            e = ELOOP; /* a link: refused, whatever O_DIRECTORY said */
        close(cur);
        errno = e;
        cur = fd;
        c = next;
    }
    return cur;
}

int skv__st_open_beneath(int dir_fd, const char *rel, int flags, mode_t mode,
                         skv_error *err)
{
    int rc = skv__st_check_rel(rel, err);
    if (rc < 0)
        return rc;
    const char *p = rel[0] ? rel : ".";
    int fd = -1;
    if (!force_fallback) {
        fd = openat2_beneath(dir_fd, p, flags, mode);
        if (fd < 0 && errno == ENOSYS)
            force_fallback = true; /* the kernel lacks openat2 */
    }
    if (force_fallback)
        fd = walk_beneath(dir_fd, p, flags, mode);
    if (fd < 0)
        return skv__st_errno(err, errno, "open", rel);
    return fd;
}

int skv__st_open_parent(int dir_fd, const char *rel, char *base, size_t cap,
                        skv_error *err)
{
    int rc = skv__st_check_rel(rel, err);
    if (rc < 0)
        return rc;
    char dir[SKV_STORAGE_PATH_MAX];
    size_t n = strlen(rel);
    while (n > 0 && rel[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && rel[b - 1] != '/')
        b--;
    if (n - b == 0 || n - b >= cap || n - b > NAME_MAX)
        return skv__err(err, SKV_EINVAL, "path '%s' names no entry", rel);
    memcpy(base, rel + b, n - b);
    base[n - b] = '\0';
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return skv__err(err, SKV_EPERM, "path '%s' ends in '%s' (refused)",
                        rel, base);
    memcpy(dir, rel, b);
    dir[b] = '\0';
    return skv__st_open_beneath(dir_fd, dir, O_RDONLY | O_DIRECTORY, 0, err);
}
