/* Links through rtnetlink: look up, create bridge and veth pair, bring up,
 * delete. Each call is one acknowledged request; the result is an errno.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <string.h>

#include "net_internal.h"

static struct ifinfomsg *ifi_put(struct nlmsghdr *nlh, int idx)
{
    struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = idx;
    return ifi;
}

static int index_cb(const struct nlmsghdr *nlh, void *data)
{
    const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
    *(int *)data = ifi->ifi_index;
    return MNL_CB_OK;
}

int skv__nl_link_index(skv__nl *nl, const char *name, int *idx)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_GETLINK, 0);
    ifi_put(nlh, 0);
    mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
    *idx = 0;
    if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
        return errno;
    /* A GETLINK answers with the link (no ack), or with an error. */
    char rbuf[SKV__NL_BUF];
    ssize_t n = mnl_socket_recvfrom(nl->sock, rbuf, sizeof(rbuf));
    if (n < 0)
        return errno;
    int rc = mnl_cb_run(rbuf, (size_t)n, nlh->nlmsg_seq, nl->portid, index_cb,
                        idx);
    if (rc == MNL_CB_ERROR) /* the kernel says ENODEV for a missing name */
        return errno == ENODEV ? ENOENT : errno ? errno : EIO;
    return *idx > 0 ? 0 : ENOENT;
}

/* A fixed, locally administered MAC from the 8 hex digits ending the
 * bridge name. Without an address of its own, a bridge takes the lowest
 * MAC of its ports, so attaching a kernel could change the gateway's MAC
 * under the others' ARP caches and stall their routed traffic for
 * seconds. */
static void bridge_mac(const char *name, uint8_t mac[6])
{
    size_t len = strlen(name);
    mac[0] = 0x02;
    mac[1] = 0x53;
    for (size_t i = 0; i < 4; i++) {
        unsigned v = 0;
        for (size_t j = 0; j < 2 && len >= 8; j++) {
            char c = name[len - 8 + 2 * i + j];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        mac[2 + i] = (uint8_t)v;
    }
}

int skv__nl_bridge_add(skv__nl *nl, const char *name)
{
    char buf[SKV__NL_BUF];
    uint8_t mac[6];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_NEWLINK,
                                       NLM_F_CREATE | NLM_F_EXCL);
    ifi_put(nlh, 0);
    mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
    bridge_mac(name, mac);
    mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
    struct nlattr *li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
    mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
    mnl_attr_nest_end(nlh, li);
    return skv__nl_talk(nl, nlh);
}

int skv__nl_veth_add(skv__nl *nl, const char *name, int master,
                     const char *peer, int64_t peer_pid, int peer_fd)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_NEWLINK,
                                       NLM_F_CREATE | NLM_F_EXCL);
    ifi_put(nlh, 0);
    mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
    if (master > 0)
        mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)master);
    struct nlattr *li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
    mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
    struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
    struct nlattr *pa = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
    /* The peer's description is a struct ifinfomsg followed by its own
     * attributes, all inside VETH_INFO_PEER. */
    ifi_put(nlh, 0);
    mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
    if (peer_pid > 0)
        mnl_attr_put_u32(nlh, IFLA_NET_NS_PID, (uint32_t)peer_pid);
    else if (peer_fd >= 0)
        mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)peer_fd);
    mnl_attr_nest_end(nlh, pa);
    mnl_attr_nest_end(nlh, data);
    mnl_attr_nest_end(nlh, li);
    return skv__nl_talk(nl, nlh);
}

int skv__nl_link_up(skv__nl *nl, int idx)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_NEWLINK, 0);
    struct ifinfomsg *ifi = ifi_put(nlh, idx);
    ifi->ifi_change = IFF_UP;
    ifi->ifi_flags = IFF_UP;
    return skv__nl_talk(nl, nlh);
}

int skv__nl_link_del(skv__nl *nl, int idx)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_DELLINK, 0);
    ifi_put(nlh, idx);
    return skv__nl_talk(nl, nlh);
}
