/* Host-level pieces: routes to other agents' subnets, IPv4 forwarding and
 * link listing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>

#include "net_internal.h"

static int route(bool add, const char *subnet, const char *via,
                 skv_error *err)
{
    skv__cidr dst;
    uint32_t gw;
    int rc = skv__subnet_cidr_parse(subnet, 8, 32, &dst, "route subnet", err);
    if (rc == 0)
        rc = skv__subnet_ip_parse(via, &gw, "route gateway", err);
    if (rc == 0 && (gw == 0 || (gw & skv__subnet_mask(dst.plen)) == dst.addr))
        rc = skv__err(err, SKV_EINVAL, "route gateway %s cannot be 0.0.0.0 or "
                      "lie inside %s", via, subnet);
    skv__nl nl;
    if (rc == 0)
        rc = skv__nl_open(&nl, err);
    if (rc < 0)
        return rc;
    int e = skv__nl_route(&nl, add, dst.addr, dst.plen, gw, 0);
    skv__nl_close(&nl);
    if (e == EEXIST)
        return skv__err(err, SKV_EEXIST, "a route to %s exists", subnet);
    if (!add && e == ESRCH)
        return skv__err(err, SKV_ENOENT, "no route to %s via %s", subnet,
                        via);
    if (e == ENETUNREACH)
        return skv__err(err, SKV_EINVAL, "gateway %s is not on a directly "
                        "connected network", via);
    return e ? skv__err_sys(err, e, "%s route %s via %s",
                            add ? "adding" : "removing", subnet, via)
             : 0;
}

int skv_net_route_add(const char *subnet, const char *via, skv_error *err)
{
    return route(true, subnet, via, err);
}

int skv_net_route_del(const char *subnet, const char *via, skv_error *err)
{
    return route(false, subnet, via, err);
}

int skv_net_forwarding_enable(skv_error *err)
{
    return skv__sys_write("/proc/sys/net/ipv4/ip_forward", "1", err);
}

int skv_net_links(const char *prefix, char ***names, size_t *n,
                  skv_error *err)
{
    if (!names || !n)
        return skv__err(err, SKV_EINVAL, "links: NULL out-pointer");
    int rc = skv__net_prefix_check(prefix, &prefix, err);
    skv__nl nl;
    if (rc == 0)
        rc = skv__nl_open(&nl, err);
    if (rc < 0)
        return rc;
    int e = skv__nl_link_list(&nl, prefix, names, n);
    skv__nl_close(&nl);
    return e ? skv__err_sys(err, e, "listing links '%s*'", prefix) : 0;
}
