/* IPv4 addresses and routes through rtnetlink.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "net_internal.h"

int skv__nl_addr_add(skv__nl *nl, int idx, uint32_t addr, unsigned plen)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_NEWADDR,
                                       NLM_F_CREATE | NLM_F_EXCL);
    struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
    ifa->ifa_family = AF_INET;
    ifa->ifa_prefixlen = (unsigned char)plen;
    ifa->ifa_scope = RT_SCOPE_UNIVERSE;
    ifa->ifa_index = (unsigned)idx;
    mnl_attr_put_u32(nlh, IFA_LOCAL, htonl(addr));
    mnl_attr_put_u32(nlh, IFA_ADDRESS, htonl(addr));
    if (plen < 31)
        mnl_attr_put_u32(nlh, IFA_BROADCAST,
                         htonl(addr | ~skv__subnet_mask(plen)));
    return skv__nl_talk(nl, nlh);
}

int skv__nl_route(skv__nl *nl, bool add, uint32_t dst, unsigned plen,
                  uint32_t gw, int oif)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(
        nl, buf, add ? RTM_NEWROUTE : RTM_DELROUTE,
        add ? NLM_F_CREATE | NLM_F_EXCL : 0);
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
    rtm->rtm_family = AF_INET;
    rtm->rtm_dst_len = (unsigned char)plen;
    rtm->rtm_table = RT_TABLE_MAIN;
    rtm->rtm_protocol = add ? SKV__NET_RTPROT : RTPROT_UNSPEC;
    rtm->rtm_scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
    rtm->rtm_type = RTN_UNICAST;
    if (!add)
        rtm->rtm_scope = RT_SCOPE_NOWHERE;
    if (plen > 0)
        mnl_attr_put_u32(nlh, RTA_DST, htonl(dst));
    if (gw)
        mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gw));
    if (oif > 0)
        mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
    return skv__nl_talk(nl, nlh);
}
