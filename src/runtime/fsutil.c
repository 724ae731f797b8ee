/* File-system helpers of the runtime and image store: recursive mkdir and
 * removal (never following symlinks, never crossing mount points), atomic
 * small-file replacement, and running a helper program with fixed argv.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_internal.h"

int skv__rt_mkdir_p(const char *path, mode_t mode, skv_error *err)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof(buf))
        return skv__err(err, SKV_ERANGE, "path '%s' is empty or too long", path);
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return skv__err_sys(err, errno, "mkdir %s", buf);
        *p = saved;
        if (saved == '\0')
            break;
    }
    return 0;
}

/* Removes the tree below an open directory; stays on device `dev`. */
static int rm_tree_at(int dfd, dev_t dev, const char *where, skv_error *err)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return skv__err_sys(err, e, "opendir %s", where);
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != dev) {
                rc = skv__err(err, SKV_EBUSY, "%s/%s is a mount point",
                              where, de->d_name);
                break;
            }
            int sub = openat(dirfd(d), de->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                rc = skv__err_sys(err, errno, "open %s/%s", where, de->d_name);
                break;
            }
            rc = rm_tree_at(sub, dev, where, err);
            if (rc == 0 && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
                rc = skv__err_sys(err, errno, "rmdir %s/%s", where, de->d_name);
        } else if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT) {
            rc = skv__err_sys(err, errno, "unlink %s/%s", where, de->d_name);
        }
    }
    closedir(d);
    return rc;
}

int skv__rt_rm_rf(const char *path, skv_error *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : skv__err_sys(err, errno, "stat %s", path);
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) < 0 && errno != ENOENT)
            return skv__err_sys(err, errno, "unlink %s", path);
        return 0;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return skv__err_sys(err, errno, "open %s", path);
    int rc = rm_tree_at(fd, st.st_dev, path, err);
    if (rc == 0 && rmdir(path) < 0 && errno != ENOENT)
        rc = skv__err_sys(err, errno, "rmdir %s", path);
    return rc;
}

int skv__rt_write_file(const char *path, const char *data, size_t len,
                       skv_error *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
        (int)sizeof(tmp))
        return skv__err(err, SKV_ERANGE, "path '%s' is too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return skv__err_sys(err, errno, "create %s", tmp);
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return skv__err_sys(err, e, "write %s", tmp);
        }
        off += (size_t)n;
    }
    close(fd);
    /* rename() replaces atomically: readers see the old or the new file. */
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return skv__err_sys(err, e, "rename %s", tmp);
    }
    return 0;
}

int skv__rt_read_file_len(const char *path, char **out, size_t *len,
                          skv_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return skv__err(err, SKV_ENOENT, "%s does not exist", path);
        return skv__err_sys(err, errno, "open %s", path);
    }
    size_t cap = 1024, got = 0;
    char *buf = skv__malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (got + 1 >= cap) {
            char *nb = cap > (1u << 24) ? NULL : skv__realloc(buf, cap * 2);
            if (!nb) {
                skv__free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "reading %s", path);
    buf[got] = '\0';
    *out = buf;
    if (len)
        *len = got;
    return 0;
}

int skv__rt_read_file(const char *path, char **out, skv_error *err)
{
    return skv__rt_read_file_len(path, out, NULL, err);
}

/* Child side of skv__rt_run: only async-signal-safe calls. */
static void run_child(const char *const *argv, int out_fd)
{
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0)
        dup2(null, 0);
    if (out_fd >= 0) {
        dup2(out_fd, 1);
        dup2(out_fd, 2);
    } else if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    static char *const empty_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                      NULL};
    execve(argv[0], (char *const *)argv, empty_env);
    _exit(127);
}

int skv__rt_run(const char *const *argv, const char *out_path, int *status_out,
                skv_error *err)
{
    int out_fd = -1;
    if (out_path) {
        out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out_fd < 0)
            return skv__err_sys(err, errno, "create %s", out_path);
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (out_fd >= 0)
            close(out_fd);
        return skv__err_sys(err, e, "fork for %s", argv[0]);
    }
    if (pid == 0)
        run_child(argv, out_fd);
    if (out_fd >= 0)
        close(out_fd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return skv__err_sys(err, errno, "waitpid %s", argv[0]);
    }
    *status_out = st;
    return 0;
}

int skv__rt_pipe_pair(int a[2], int b[2], const char *what, skv_error *err)
{
    if (pipe2(a, O_CLOEXEC) < 0)
        return skv__err_sys(err, errno, "pipe for %s", what);
    if (pipe2(b, O_CLOEXEC) < 0) {
        int e = errno;
        close(a[0]);
        close(a[1]);
        return skv__err_sys(err, e, "pipe for %s", what);
    }
    return 0;
}
