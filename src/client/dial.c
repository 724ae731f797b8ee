/* Endpoint parsing and connecting: "unix:/path", "tcp:host:port",
 * "host:port" ("[v6addr]:port" for IPv6 literals). The connect itself is
 * non-blocking so it honours the deadline; the socket is blocking
 * afterwards (every wait goes through poll with the time left).
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"

#define HOST_MAX 256

/* Finish a non-blocking connect: wait for writability, then read the
 * outcome from SO_ERROR. Leaves the socket blocking on success. */
static int connect_wait(int fd, const struct sockaddr *sa, socklen_t len,
                        skv__client_deadline d, const char *what,
                        skv_error *err)
{
    if (connect(fd, sa, len) != 0) {
        if (errno != EINPROGRESS && errno != EAGAIN)
            return skv__err_sys(err, errno, "connect to %s", what);
        struct pollfd p = {fd, POLLOUT, 0};
        int n;
        do
            n = poll(&p, 1, skv__client_deadline_left(d));
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return skv__err_sys(err, errno, "connect to %s: poll", what);
        if (n == 0)
            return skv__err(err, SKV_ETIMEDOUT, "connect to %s: timed out",
                            what);
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            soerr = errno;
        if (soerr)
            return skv__err_sys(err, soerr, "connect to %s", what);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return skv__err_sys(err, errno, "connect to %s: fcntl", what);
    return 0;
}

static int dial_unix(int *fd_out, const char *path, skv__client_deadline d,
                     skv_error *err)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (!path[0])
        return skv__err(err, SKV_EINVAL, "endpoint 'unix:': empty socket path");
    if (strlen(path) >= sizeof sun.sun_path)
        return skv__err(err, SKV_ERANGE, "endpoint 'unix:%s': path longer "
                        "than %zu bytes", path, sizeof sun.sun_path - 1);
    strcpy(sun.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return skv__err_sys(err, errno, "socket(AF_UNIX)");
    char what[sizeof sun.sun_path + 8];
    snprintf(what, sizeof what, "unix:%s", path);
    int rc = connect_wait(fd, (struct sockaddr *)&sun, sizeof sun, d, what, err);
    if (rc) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* Split "host:port" / "[v6]:port" into host and a validated port. */
static int split_hostport(char *host, char *port, const char *text,
                          skv_error *err)
{
    const char *colon;
    const char *h = text;
    size_t hlen;
    if (text[0] == '[') {
        const char *close_b = strchr(text, ']');
        if (!close_b || close_b[1] != ':')
            return skv__err(err, SKV_EINVAL, "endpoint '%s': expected "
                            "'[address]:port'", text);
        h = text + 1;
        hlen = (size_t)(close_b - h);
        colon = close_b + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return skv__err(err, SKV_EINVAL, "endpoint '%s': expected "
                            "'unix:/path', 'tcp:host:port' or 'host:port'",
                            text);
        hlen = (size_t)(colon - text);
        if (memchr(text, ':', hlen))
            return skv__err(err, SKV_EINVAL, "endpoint '%s': write IPv6 "
                            "addresses as '[address]:port'", text);
    }
    if (hlen == 0 || hlen >= HOST_MAX)
        return skv__err(err, SKV_EINVAL, "endpoint '%s': bad host", text);
    const char *p = colon + 1;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (!isdigit((unsigned char)p[0]) || *end || errno || v < 1 ||
        v > 65535)
        return skv__err(err, SKV_EINVAL, "endpoint '%s': port '%s' is not "
                        "1..65535", text, p);
    memcpy(host, h, hlen);
    host[hlen] = 0;
    snprintf(port, 8, "%ld", v);
    return 0;
}

static int try_addr(int *fd_out, const struct addrinfo *ai,
                    skv__client_deadline d, const char *what, skv_error *err)
{
    int fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0)
        return skv__err_sys(err, errno, "socket for %s", what);
    int rc = connect_wait(fd, ai->ai_addr, ai->ai_addrlen, d, what, err);
    /* Requests are small and latency-bound: never wait for Nagle. */
    int one = 1;
    if (!rc && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one))
        rc = skv__err_sys(err, errno, "%s: TCP_NODELAY", what);
    if (rc) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

static int dial_tcp(int *fd_out, const char *hostport, skv__client_deadline d,
                    skv_error *err)
{
    char host[HOST_MAX], port[8];
    int rc = split_hostport(host, port, hostport, err);
    if (rc)
        return rc;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0)
        return skv__err(err, SKV_ENOENT, "endpoint '%s': cannot resolve "
                        "'%s': %s", hostport, host, gai_strerror(g));
    rc = SKV_ENOENT;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        rc = try_addr(fd_out, ai, d, hostport, err);
        if (rc == 0 || rc == SKV_ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    return rc;
}

int skv__client_dial(int *fd_out, const char *endpoint, skv__client_deadline d,
                     skv_error *err)
{
    if (strncmp(endpoint, "unix:", 5) == 0)
        return dial_unix(fd_out, endpoint + 5, d, err);
    if (endpoint[0] == '/')
        return dial_unix(fd_out, endpoint, d, err);
    if (strncmp(endpoint, "tcp:", 4) == 0)
        return dial_tcp(fd_out, endpoint + 4, d, err);
    return dial_tcp(fd_out, endpoint, d, err);
}

int skv__client_endpoint_host(char *host, const char *endpoint,
                              skv_error *err)
{
    char port[8];
    if (strncmp(endpoint, "tcp:", 4) == 0)
        endpoint += 4;
    return split_hostport(host, port, endpoint, err);
}
