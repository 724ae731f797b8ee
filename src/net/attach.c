/* Attaching a network namespace to a session: a veth pair whose host side
 * joins the bridge and whose other side is created directly inside the
 * namespace, then configured there through a socket opened in it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "net_internal.h"

static int check_ifname(const char *n, skv_error *err)
{
    size_t len = strlen(n);
    if (len == 0 || len >= SKV_NET_IFNAME_MAX ||
        strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789_.-") != len || strcmp(n, ".") == 0 ||
        strcmp(n, "..") == 0)
        return skv__err(err, SKV_EINVAL, "interface name '%s' must have 1..15 "
                        "of [A-Za-z0-9_.-]", n);
    return 0;
}

static int check_attach(const skv_net_session *s,
                        const skv_net_attach_options *o, uint32_t *ip,
                        skv_error *err)
{
    if (o->version != SKV_NET_ATTACH_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "net attach options version %u, "
                        "expected %u", o->version,
                        SKV_NET_ATTACH_OPTIONS_VERSION);
    if ((o->pid > 0) == (o->netns_path != NULL) || o->pid < 0)
        return skv__err(err, SKV_EINVAL, "attach: give exactly one of pid "
                        "(> 0) and netns_path");
    if (o->netns_path && o->netns_path[0] != '/')
        return skv__err(err, SKV_EINVAL, "netns path '%s' is not absolute",
                        o->netns_path);
    int rc = check_ifname(o->ifname ? o->ifname : "eth0", err);
    char buf[SKV_NET_ADDR_MAX];
    if (rc == 0)
        rc = skv_net_session_address(s, o->host_index, buf, sizeof(buf), err);
    *ip = s->subnet.addr + o->host_index;
    return rc;
}

/* Inside the namespace: address, up, loopback up, default route. */
static int configure_inside(skv__nl *ns, const skv_net_session *s,
                            const char *ifname, uint32_t ip, skv_error *err)
{
    static const char *const what[] = {
        "finding the interface", "adding the address",
        "bringing the interface up", "bringing the loopback up",
        "adding the default route"};
    int idx = 0, lo = 0, step = 0;
    int e = skv__nl_link_index(ns, ifname, &idx);
    if (e == 0 && ++step)
        e = skv__nl_addr_add(ns, idx, ip, s->subnet.plen);
    if (e == 0 && ++step)
        e = skv__nl_link_up(ns, idx);
    if (e == 0 && ++step && (e = skv__nl_link_index(ns, "lo", &lo)) == 0)
        e = skv__nl_link_up(ns, lo);
    /* A second interface in the same namespace keeps the first default
     * route. */
    if (e == 0 && ++step &&
        (e = skv__nl_route(ns, true, 0, 0, s->subnet.addr + 1, idx)) == EEXIST)
        e = 0;
    if (e != 0)
        return skv__err_sys(err, e, "network namespace of '%s' (session "
                            "'%s'): %s", ifname, s->session_id, what[step]);
    return 0;
}

static int veth_create(skv__nl *host, skv_net_session *s, const char *vname,
                       const char *ifname, int ns_fd, skv_error *err)
{
    int e = skv__nl_link_index(host, s->bridge, &s->bridge_idx);
    if (e != 0)
        return skv__err_sys(err, e, "bridge '%s' of session '%s' is missing",
                            s->bridge, s->session_id);
    e = skv__nl_veth_add(host, vname, s->bridge_idx, ifname, 0, ns_fd);
    if (e == EEXIST)
        return skv__err(err, SKV_EEXIST, "veth '%s' or '%s' in the target "
                        "namespace already exists", vname, ifname);
    return e ? skv__err_sys(err, e, "creating veth pair '%s'/'%s'", vname,
                            ifname)
             : 0;
}

int skv_net_attach(skv_net_session *s, const skv_net_attach_options *o,
                   skv_error *err)
{
    if (!s || !o)
        return skv__err(err, SKV_EINVAL, "attach: session or opts is NULL");
    uint32_t ip = 0;
    int rc = check_attach(s, o, &ip, err);
    if (rc < 0)
        return rc;
    const char *ifname = o->ifname ? o->ifname : "eth0";
    char vname[SKV_NET_IFNAME_MAX];
    skv__net_veth_name(s, o->host_index, vname);
    int ns_fd = -1, vidx = 0;
    bool created = false; /* from then on a failure removes the pair */
    skv__nl host = {0}, ns = {0};
    rc = skv__net_ns_open(o->pid, o->netns_path, &ns_fd, err);
    if (rc == 0)
        rc = skv__nl_open(&host, err);
    if (rc == 0)
        rc = skv__nl_open_netns(&ns, ns_fd, err);
    if (rc == 0)
        created = (rc = veth_create(&host, s, vname, ifname, ns_fd, err)) == 0;
    if (rc == 0) {
        int e = skv__nl_link_index(&host, vname, &vidx);
        if (e == 0)
            e = skv__nl_link_up(&host, vidx);
        if (e != 0)
            rc = skv__err_sys(err, e, "bringing veth '%s' up", vname);
    }
    if (rc == 0)
        rc = configure_inside(&ns, s, ifname, ip, err);
    if (rc < 0 && created && skv__nl_link_index(&host, vname, &vidx) == 0)
        skv__nl_link_del(&host, vidx); /* takes the peer with it */
    skv__nl_close(&ns);
    skv__nl_close(&host);
    if (ns_fd >= 0)
        close(ns_fd);
    return rc;
}

int skv_net_detach(skv_net_session *s, unsigned host_index, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "detach: session is NULL");
    char vname[SKV_NET_IFNAME_MAX], buf[SKV_NET_ADDR_MAX];
    int rc = skv_net_session_address(s, host_index, buf, sizeof(buf), err);
    skv__nl nl;
    if (rc == 0)
        rc = skv__nl_open(&nl, err);
    if (rc < 0)
        return rc;
    skv__net_veth_name(s, host_index, vname);
    int idx = 0;
    int e = skv__nl_link_index(&nl, vname, &idx);
    if (e == 0)
        e = skv__nl_link_del(&nl, idx);
    skv__nl_close(&nl);
    if (e == ENOENT || e == ENODEV)
        return skv__err(err, SKV_ENOENT, "session '%s' has no veth '%s'",
                        s->session_id, vname);
    return e ? skv__err_sys(err, e, "removing veth '%s'", vname) : 0;
}
