/* rtnetlink requests over libmnl: one socket per operation sequence, each
 * request acknowledged, errors returned as the kernel's errno.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <time.h>

#include "net_internal.h"

int skv__nl_open(skv__nl *nl, skv_error *err)
{
    memset(nl, 0, sizeof(*nl));
    nl->sock = mnl_socket_open(NETLINK_ROUTE);
    if (!nl->sock)
        return skv__err_sys(err, errno, "opening a netlink socket");
    if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
        int e = errno;
        mnl_socket_close(nl->sock);
        nl->sock = NULL;
        return skv__err_sys(err, e, "binding a netlink socket");
    }
    nl->portid = mnl_socket_get_portid(nl->sock);
    nl->seq = (unsigned)time(NULL);
    return 0;
}

void skv__nl_close(skv__nl *nl)
{
    if (nl->sock)
        mnl_socket_close(nl->sock);
    nl->sock = NULL;
}

struct nlmsghdr *skv__nl_msg(skv__nl *nl, void *buf, uint16_t type,
                             uint16_t flags)
{
    memset(buf, 0, SKV__NL_BUF);
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
    nlh->nlmsg_seq = ++nl->seq;
    return nlh;
}

/* Whether a received buffer holds the end of a dump. */
static bool has_done(const char *buf, ssize_t n)
{
    int len = (int)n;
    for (const struct nlmsghdr *h = (const void *)buf; mnl_nlmsg_ok(h, len);
         h = mnl_nlmsg_next(h, &len))
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
            return true;
    return false;
}

/* After an interrupted dump, read its remaining parts so that the next
 * request on the socket does not see them. */
static void drain(skv__nl *nl)
{
    char buf[SKV__NL_BUF];
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
        if (n <= 0 || has_done(buf, n))
            return;
    }
}

/* Receive until the answer to nlh ends (ack, error or end of dump). A dump
 * the kernel marks as interrupted (the table changed meanwhile: libmnl
 * reports EINTR) is read to its end and answered with EINTR, so the
 * caller can start over. */
static int receive(skv__nl *nl, const struct nlmsghdr *nlh, skv__nl_cb cb,
                   void *data)
{
    char buf[SKV__NL_BUF];
    unsigned seq = nlh->nlmsg_seq;
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
        if (n < 0)
            return errno ? errno : EIO;
        int rc = mnl_cb_run(buf, (size_t)n, seq, nl->portid,
                            (mnl_cb_t)cb, data);
        if (rc == MNL_CB_ERROR) {
            int e = errno ? errno : EIO;
            if (e == EINTR && !has_done(buf, n))
                drain(nl);
            return e;
        }
        if (rc == MNL_CB_STOP)
            return 0;
    }
}

int skv__nl_talk(skv__nl *nl, struct nlmsghdr *nlh)
{
    nlh->nlmsg_flags |= NLM_F_ACK;
    if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
        return errno ? errno : EIO;
    return receive(nl, nlh, NULL, NULL);
}

int skv__nl_dump(skv__nl *nl, struct nlmsghdr *nlh, skv__nl_cb cb,
                 void *data)
{
    nlh->nlmsg_flags |= NLM_F_DUMP;
    if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
        return errno ? errno : EIO;
    return receive(nl, nlh, cb, data);
}
