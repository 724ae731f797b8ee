/* Finding the routes this library added (by their protocol number) and
 * removing them: an agent that restarts drops the routes of a cluster
 * layout it no longer knows, then adds the current ones.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "net_internal.h"

typedef struct found_route {
    uint32_t dst, gw;
    unsigned plen;
} found_route;

typedef struct route_scan {
    found_route *v;
    size_t n;
    int failed;
} route_scan;

static int route_attr_cb(const struct nlattr *a, void *data)
{
    found_route *r = data;
    uint16_t t = mnl_attr_get_type(a);
    if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
        return MNL_CB_OK;
    if (t == RTA_DST)
        r->dst = ntohl(mnl_attr_get_u32(a));
    else if (t == RTA_GATEWAY)
        r->gw = ntohl(mnl_attr_get_u32(a));
    return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
    route_scan *s = data;
    const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
    if (rtm->rtm_protocol != SKV__NET_RTPROT ||
        rtm->rtm_table != RT_TABLE_MAIN || s->failed)
        return MNL_CB_OK;
    found_route r = {0, 0, rtm->rtm_dst_len};
    mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, &r);
    found_route *v = skv__reallocarray(s->v, s->n + 1, sizeof(*v));
    if (!v) {
        s->failed = ENOMEM;
        return MNL_CB_OK;
    }
    s->v = v;
    s->v[s->n++] = r;
    return MNL_CB_OK;
}

int skv_net_route_flush(size_t *removed, skv_error *err)
{
    size_t count = 0;
    skv__nl nl;
    int rc = skv__nl_open(&nl, err);
    if (rc < 0)
        return rc;
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(&nl, buf, RTM_GETROUTE, 0);
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
    rtm->rtm_family = AF_INET;
    route_scan s = {0};
    int e = skv__nl_dump(&nl, nlh, route_cb, &s);
    for (int t = 1; e == EINTR && t < SKV__NL_DUMP_TRIES; t++) {
        skv__free(s.v);
        s = (route_scan){0};
        e = skv__nl_dump(&nl, nlh, route_cb, &s);
    }
    if (e == 0)
        e = s.failed;
    for (size_t i = 0; e == 0 && i < s.n; i++) {
        e = skv__nl_route(&nl, false, s.v[i].dst, s.v[i].plen, s.v[i].gw, 0);
        if (e == ESRCH) /* gone meanwhile */
            e = 0;
        else if (e == 0)
            count++;
    }
    skv__free(s.v);
    skv__nl_close(&nl);
    if (removed)
        *removed = count;
    return e ? skv__err_sys(err, e, "removing sokovan's routes") : 0;
}
