/* The one place through which /sys, /proc, /dev and cgroupfs are reached,
 * so tests can point the whole library at a fake tree.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_internal.h"

/* Empty string means the real root: paths are used as given. */
static char sysroot[PATH_MAX];

int skv_sysroot_set(const char *root, skv_error *err)
{
    if (!root || strcmp(root, "/") == 0) {
        sysroot[0] = '\0';
        return 0;
    }
    if (root[0] != '/')
        return skv__err(err, SKV_EINVAL, "sysroot '%s' is not an absolute path",
                        root);
    size_t len = strlen(root);
    while (len > 1 && root[len - 1] == '/')
        len--;
    if (len >= sizeof(sysroot) - 64)
        return skv__err(err, SKV_ERANGE, "sysroot path is too long");
    memcpy(sysroot, root, len);
    sysroot[len] = '\0';
    return 0;
}

const char *skv_sysroot_get(void)
{
    return sysroot[0] ? sysroot : "/";
}

int skv__sys_path(char *buf, size_t bufsz, const char *abs_path, skv_error *err)
{
    if (!abs_path || abs_path[0] != '/')
        return skv__err(err, SKV_EINVAL, "system path '%s' is not absolute",
                        abs_path ? abs_path : "(null)");
    int n = snprintf(buf, bufsz, "%s%s", sysroot, abs_path);
    if (n < 0 || (size_t)n >= bufsz)
        return skv__err(err, SKV_ERANGE, "system path '%s' is too long",
                        abs_path);
    return 0;
}

static int open_sys(const char *abs_path, int flags, skv_error *err)
{
    char path[PATH_MAX];
    int rc = skv__sys_path(path, sizeof(path), abs_path, err);
    if (rc < 0)
        return rc;
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return skv__err(err, SKV_ENOENT, "%s does not exist", path);
        return skv__err_sys(err, e, "open %s", path);
    }
    return fd;
}

int skv__sys_read(const char *abs_path, char *buf, size_t bufsz,
                  size_t *len_out, skv_error *err)
{
    if (bufsz == 0)
        return skv__err(err, SKV_EINVAL, "zero-sized read buffer");
    int fd = open_sys(abs_path, O_RDONLY, err);
    if (fd < 0)
        return fd;
    size_t got = 0;
    while (got < bufsz - 1) {
        ssize_t n = read(fd, buf + got, bufsz - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return skv__err_sys(err, e, "read %s", abs_path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    if (len_out)
        *len_out = got;
    return 0;
}

int skv__sys_read_alloc(const char *abs_path, char **out, size_t *len_out,
                        skv_error *err)
{
    int fd = open_sys(abs_path, O_RDONLY, err);
    if (fd < 0)
        return fd;
    size_t cap = 4096, got = 0;
    char *buf = skv__malloc(cap);
    while (buf) {
        if (got + 1 >= cap) {
            char *nb = skv__realloc(buf, cap * 2);
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
        if (n < 0) {
            int e = errno;
            close(fd);
            skv__free(buf);
            return skv__err_sys(err, e, "read %s", abs_path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "reading %s", abs_path);
    buf[got] = '\0';
    *out = buf;
    if (len_out)
        *len_out = got;
    return 0;
}

int skv__sys_write(const char *abs_path, const char *value, skv_error *err)
{
    int fd = open_sys(abs_path, O_WRONLY | O_TRUNC, err);
    if (fd < 0)
        return fd;
    size_t len = strlen(value);
    ssize_t n;
    do {
        n = write(fd, value, len);
    } while (n < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (n < 0)
        return skv__err_sys(err, e, "write '%s' to %s", value, abs_path);
    if ((size_t)n != len)
        return skv__err(err, SKV_EIO, "short write to %s", abs_path);
    return 0;
}

bool skv__sys_exists(const char *abs_path)
{
    char path[PATH_MAX];
    struct stat st;
    if (skv__sys_path(path, sizeof(path), abs_path, NULL) < 0)
        return false;
    return stat(path, &st) == 0;
}
