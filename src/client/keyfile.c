/* Key files written by the manager: "access_key=...\nsecret_key=...\n".
 * A secret readable by others is refused outright (like ssh does), since
 * anyone who can read it can act as its owner. Every copy of the secret
 * made while parsing is wiped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"

#define KEYFILE_MAX 4096

static int read_small(char *buf, size_t cap, const char *path, skv_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return skv__err_sys(err, errno, "key file '%s'", path);
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = skv__err_sys(err, errno, "key file '%s': stat", path);
    else if (!S_ISREG(st.st_mode))
        rc = skv__err(err, SKV_EINVAL, "key file '%s' is not a regular file",
                      path);
    else if (st.st_mode & (S_IRWXG | S_IRWXO))
        rc = skv__err(err, SKV_EPERM, "key file '%s' is accessible by group "
                      "or others (mode %04o); run chmod 600 on it", path,
                      (unsigned)(st.st_mode & 07777));
    else if (st.st_size >= (off_t)cap)
        rc = skv__err(err, SKV_ERANGE, "key file '%s' is larger than %zu "
                      "bytes", path, cap - 1);
    size_t len = 0;
    while (!rc && len + 1 < cap) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = skv__err_sys(err, errno, "key file '%s': read", path);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = 0;
    if (!rc && strlen(buf) != len)
        rc = skv__err(err, SKV_EINVAL, "key file '%s' contains a NUL byte",
                      path);
    return rc;
}

/* Store one "key=value" line's value into the matching buffer. */
static int take_line(char *access_key, char *secret_key, int *seen, char *line,
                     const char *path, int lineno, skv_error *err)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return skv__err(err, SKV_EINVAL, "%s:%d: expected 'key=value'", path,
                        lineno);
    *eq = 0;
    const char *val = eq + 1;
    int bit;
    char *dst;
    size_t cap;
    if (strcmp(line, "access_key") == 0) {
        bit = 1, dst = access_key, cap = SKV_AUTH_ACCESS_KEY_MAX;
    } else if (strcmp(line, "secret_key") == 0) {
        bit = 2, dst = secret_key, cap = SKV_AUTH_SECRET_KEY_MAX;
    } else {
        return skv__err(err, SKV_EINVAL, "%s:%d: unknown key '%.64s'", path,
                        lineno, line);
    }
    if (*seen & bit)
        return skv__err(err, SKV_EINVAL, "%s:%d: '%s' given twice", path,
                        lineno, line);
    int rc = bit == 1 ? skv_auth_access_key_check(val, err)
                      : skv_auth_secret_key_check(val, err);
    if (rc) {
        skv__err_prefix(err, "%s:%d: ", path, lineno);
        return rc;
    }
    if (strlen(val) >= cap)
        return skv__err(err, SKV_ERANGE, "%s:%d: value too long", path,
                        lineno);
    strcpy(dst, val);
    *seen |= bit;
    return 0;
}

static int parse_keyfile(char *access_key, char *secret_key, char *text,
                         const char *path, skv_error *err)
{
    int seen = 0, lineno = 0, rc = 0;
    /* Line by line, counting every line so messages name the right one. */
    for (char *p = text; !rc && p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        size_t n = strlen(p);
        if (n && p[n - 1] == '\r')
            p[--n] = 0;
        if (n && p[0] != '#')
            rc = take_line(access_key, secret_key, &seen, p, path, lineno,
                           err);
        p = nl ? nl + 1 : NULL;
    }
    if (!rc && seen != 3)
        rc = skv__err(err, SKV_EINVAL, "key file '%s': no %s line", path,
                      (seen & 1) ? "'secret_key='" : "'access_key='");
    return rc;
}

int skv_client_read_keyfile(char *access_key, char *secret_key,
                            const char *path, skv_error *err)
{
    if (!access_key || !secret_key || !path || !path[0])
        return skv__err(err, SKV_EINVAL, "read_keyfile: NULL argument");
    char buf[KEYFILE_MAX];
    char ak[SKV_AUTH_ACCESS_KEY_MAX] = "", sk[SKV_AUTH_SECRET_KEY_MAX] = "";
    int rc = read_small(buf, sizeof buf, path, err);
    if (!rc)
        rc = parse_keyfile(ak, sk, buf, path, err);
    if (!rc) {
        strcpy(access_key, ak);
        strcpy(secret_key, sk);
    }
    skv_auth_wipe(buf, sizeof buf);
    skv_auth_wipe(sk, sizeof sk);
    return rc;
}
