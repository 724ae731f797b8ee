/* Addresses: "host:port" for TCP, absolute paths for Unix sockets, and the
 * preparation of a Unix socket path before binding it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

int skvd_hostport_split(char *host, size_t hostlen, int *port,
                        const char *text, char *why, size_t wl)
{
    const char *h = text, *colon;
    size_t n;
    if (text[0] == '[') {               /* [v6]:port */
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return WHY("'%s' is not [ADDR]:PORT", text);
        h = text + 1;
        n = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || strchr(text, ':') != colon)
            return WHY("'%s' is not HOST:PORT", text);
        n = (size_t)(colon - text);
    }
    if (n == 0 || n >= hostlen)
        return WHY("'%s': empty or too long host", text);
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || p < 1 || p > 65535)
        return WHY("'%s': port must be 1..65535", text);
    memcpy(host, h, n);
    host[n] = 0;
    *port = (int)p;
    return 0;
}

int skvd_hostport_resolve(struct sockaddr_storage *out, const char *text,
                          char *why, size_t wl)
{
    char host[256], port[8];
    int p;
    struct addrinfo hints, *res = NULL;
    if (skvd_hostport_split(host, sizeof(host), &p, text, why, wl))
        return -1;
    snprintf(port, sizeof(port), "%d", p);
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return WHY("cannot resolve '%s': %s", host, gai_strerror(rc));
    memset(out, 0, sizeof(*out));
    memcpy(out, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int skvd_unix_path_check(const char *path, char *why, size_t wl)
{
    struct sockaddr_un sa;
    if (path[0] != '/')
        return WHY("'%s' is not an absolute path", path);
    if (strlen(path) >= sizeof(sa.sun_path))
        return WHY("'%s' is longer than a Unix socket path may be (%zu)",
                   path, sizeof(sa.sun_path) - 1);
    return 0;
}

/* mkdir -p with mode 0755 for the directories created. */
int skvd_mkdirs(const char *dir, char *why, size_t wl)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != 0)
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST)
            return WHY("cannot create directory %s: %s", buf,
                       strerror(errno));
        *p = c;
        if (!c)
            return 0;
    }
}

/* 1: someone accepts connections there; 0: nobody does. */
static int someone_listens(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    int e = errno;
    close(fd);
    return rc == 0 || (e != ECONNREFUSED && e != ENOENT);
}

int skvd_unix_path_prepare(const char *path, char *why, size_t wl)
{
    struct stat st;
    if (skvd_unix_path_check(path, why, wl))
        return -1;
    if (skvd_mkdirs_parent(path, why, wl))
        return -1;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0
               : WHY("cannot stat %s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return WHY("%s exists and is not a socket", path);
    if (someone_listens(path))
        return WHY("%s: another process is listening there", path);
    if (unlink(path) != 0 && errno != ENOENT)
        return WHY("cannot remove stale socket %s: %s", path,
                   strerror(errno));
    return 0;
}

int skvd_mkdirs_parent(const char *path, char *why, size_t wl)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    return skvd_mkdirs(dir, why, wl);
}
