/* Blocking socket I/O bounded by a deadline: poll first, then one
 * read/write. MSG_NOSIGNAL keeps a vanished manager from killing the
 * caller with SIGPIPE.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_internal.h"

#define READ_CHUNK 65536

static int wait_fd(int fd, short events, skv__client_deadline d,
                   const char *what, skv_error *err)
{
    struct pollfd p = {fd, events, 0};
    for (;;) {
        int n = poll(&p, 1, skv__client_deadline_left(d));
        if (n > 0)
            return 0;
        if (n == 0)
            return skv__err(err, SKV_ETIMEDOUT, "timed out %s", what);
        if (errno != EINTR)
            return skv__err_sys(err, errno, "poll while %s", what);
    }
}

int skv__client_write_all(int fd, const void *buf, size_t len,
                          skv__client_deadline d, skv_error *err)
{
    const char *p = buf;
    while (len > 0) {
        int rc = wait_fd(fd, POLLOUT, d, "sending the request", err);
        if (rc)
            return rc;
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            if (errno == EPIPE || errno == ECONNRESET)
                return skv__err(err, SKV_EIO, "the manager closed the "
                                "connection");
            return skv__err_sys(err, errno, "send");
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int skv__client_read_some(int fd, skv_proto_reader *r, skv__client_deadline d,
                          skv_error *err)
{
    char buf[READ_CHUNK];
    int rc = wait_fd(fd, POLLIN, d, "waiting for the response", err);
    if (rc)
        return rc;
    ssize_t n;
    do
        n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n < 0 && errno == ECONNRESET)
        n = 0;
    if (n < 0)
        return skv__err_sys(err, errno, "recv");
    if (n == 0)
        return skv__err(err, SKV_EIO, "the manager closed the connection");
    return skv_proto_reader_feed(r, buf, (size_t)n, err);
}
