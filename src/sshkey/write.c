/* Placing a key pair into a directory (a kernel's ~/.ssh).
 * All three files are first written under temporary names and only then
 * renamed, so a failure part-way leaves the directory as it was (save for
 * files of these names that an earlier rename already replaced, which are
 * removed so no mismatched pair remains).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_internal.h"
#include "sshkey_internal.h"

#define N_FILES 3

typedef struct target {
    const char *name;
    mode_t mode;
    const char *text;
    char final[PATH_MAX];
    char tmp[PATH_MAX];
} target;

static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* O_EXCL on the temporary name: never follow a planted link. fchmod
 * because the umask may have narrowed (or the file existed with) another
 * mode. */
static int write_tmp(target *t, skv_error *err)
{
    int fd = open(t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0600);
    if (fd < 0)
        return skv__err_sys(err, errno, "sshkey: cannot create '%s'", t->tmp);
    int bad = fchmod(fd, t->mode) != 0 || write_all(fd, t->text) != 0 ||
              fsync(fd) != 0;
    int saved = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        unlink(t->tmp);
        return skv__err_sys(err, saved, "sshkey: cannot write '%s'", t->tmp);
    }
    return 0;
}

/* Random temporary names: concurrent writers (threads or processes) into
 * the same directory never touch each other's files. */
static int set_paths(target *t, const char *dir, skv_error *err)
{
    int a = snprintf(t->final, sizeof t->final, "%s/%s", dir, t->name);
    int b = snprintf(t->tmp, sizeof t->tmp, "%s/.%s.skv-tmp.%08x%08x", dir,
                     t->name, randombytes_random(), randombytes_random());
    if (a < 0 || b < 0 || (size_t)a >= sizeof t->final ||
        (size_t)b >= sizeof t->tmp)
        return skv__err(err, SKV_ERANGE, "sshkey: directory path too long");
    return 0;
}

static int check_dir(const char *dir, skv_error *err)
{
    struct stat st;
    if (!dir || !dir[0])
        return skv__err(err, SKV_EINVAL, "sshkey: empty directory");
    if (stat(dir, &st) != 0)
        return skv__err_sys(err, errno, "sshkey: directory '%s'", dir);
    if (!S_ISDIR(st.st_mode))
        return skv__err(err, SKV_EINVAL, "sshkey: '%s' is not a directory", dir);
    return 0;
}

int skv_sshkey_write_files(const skv_sshkey *key, const char *dir,
                           skv_error *err)
{
    if (!key)
        return skv__err(err, SKV_EINVAL, "sshkey: NULL key");
    int rc = check_dir(dir, err);
    if (rc)
        return rc;
    target t[N_FILES] = {
        {"id_ed25519", 0600, key->private_text, {0}, {0}},
        {"id_ed25519.pub", 0644, key->public_line, {0}, {0}},
        {"authorized_keys", 0600, key->public_line, {0}, {0}},
    };
    int written = 0;
    for (; written < N_FILES && !rc; written++) {
        rc = set_paths(&t[written], dir, err);
        if (!rc)
            rc = write_tmp(&t[written], err);
        if (rc)
            break;
    }
    for (int i = 0; i < N_FILES && !rc; i++) {
        if (rename(t[i].tmp, t[i].final) != 0) {
            rc = skv__err_sys(err, errno, "sshkey: cannot rename '%s'", t[i].tmp);
            for (int j = 0; j < i; j++)
                unlink(t[j].final);
        }
    }
    if (rc)
        for (int i = 0; i < written; i++)
            unlink(t[i].tmp); /* renamed ones are gone: ENOENT is fine */
    return rc;
}
