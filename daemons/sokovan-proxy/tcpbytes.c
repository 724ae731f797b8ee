/* The kernel's byte counters of a TCP socket (TCP_INFO). A file of its
 * own: glibc's <netinet/tcp.h> (which h2o's headers pull in) has an old
 * struct tcp_info without the byte counters, and it cannot be included
 * together with <linux/tcp.h>, which has them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

int proxy_tcp_bytes(int fd, uint64_t *moved);

/* Data bytes received plus data bytes the peer acknowledged, both ways of
 * the connection, as the kernel counts them: 0, -ENOSYS when the kernel
 * does not count them (before Linux 4.1), or -errno. */
int proxy_tcp_bytes(int fd, uint64_t *moved)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
        return -errno;
    if (len < offsetof(struct tcp_info, tcpi_bytes_received) +
                  sizeof ti.tcpi_bytes_received)
        return -ENOSYS;
    *moved = ti.tcpi_bytes_received + ti.tcpi_bytes_acked;
    return 0;
}
