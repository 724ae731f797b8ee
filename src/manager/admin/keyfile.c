/* Key files for the admin user and bootstrap agents, written atomically
 * (temporary file, fsync, rename) with mode 0600 so that a reader never
 * sees a partial key and nobody else can read it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_int.h"

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

int skv__mgr_admin_keyfile_write(const char *path, const char *access_key,
                                 const char *secret_key, skv_error *err)
{
    char *tmp = skv__asprintf("%s.tmp.%ld", path, (long)getpid());
    char *text = skv__asprintf("access_key=%s\nsecret_key=%s\n", access_key,
                               secret_key);
    int rc = 0;
    if (!tmp || !text) {
        rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
        goto out;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                  0600);
    if (fd < 0) {
        rc = skv__err_sys(err, errno, "key file '%s'", tmp);
        goto out;
    }
    /* The umask cannot widen 0600, but an existing file's mode could. */
    if (fchmod(fd, 0600) < 0 || write_all(fd, text, strlen(text)) < 0 ||
        fsync(fd) < 0) {
        rc = skv__err_sys(err, errno, "key file '%s'", tmp);
        close(fd);
        unlink(tmp);
        goto out;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        rc = skv__err_sys(err, errno, "key file '%s'", path);
        unlink(tmp);
    }
out:
    if (text)
        skv_auth_wipe(text, strlen(text));
    skv__free(text);
    skv__free(tmp);
    return rc;
}
