/* Published ports: DNAT of a host port to a kernel's port. Three rules per
 * port, all with the comment "<bridge> pub <proto> <host port> <index>
 * <container port>":
 *   prerouting  fib daddr type local <proto> dport P dnat to ADDR:CP
 *   output      the same, for connections made on the host itself
 *   postrouting ct status dnat oifname <bridge> ip saddr { 127.0.0.0/8,
 *               <subnet> } ... masquerade: a kernel cannot answer
 *               127.0.0.1, and a kernel of the session reaching the port
 *               through the host's address (hairpin) would get the answer
 *               from the wrong address; both leave with the gateway's
 *               address instead. Direct traffic inside the session is not
 *               DNATed, so it keeps its addresses.
 * The ruleset is the only record: listing reads it back.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_internal.h"

const char *skv__net_proto_name(skv_net_proto p)
{
    return p == SKV_NET_UDP ? "udp" : "tcp";
}

bool skv__net_parse_pub(const char *comment, char *bridge, skv_net_port *p)
{
    char proto[8];
    unsigned hp, idx, cp;
    char tail;
    if (sscanf(comment, "%15s pub %7s %u %u %u%c", bridge, proto, &hp, &idx,
               &cp, &tail) != 5 ||
        hp == 0 || hp > 65535 || cp == 0 || cp > 65535)
        return false;
    if (strcmp(proto, "tcp") == 0)
        p->proto = SKV_NET_TCP;
    else if (strcmp(proto, "udp") == 0)
        p->proto = SKV_NET_UDP;
    else
        return false;
    p->host_port = (uint16_t)hp;
    p->host_index = idx;
    p->container_port = (uint16_t)cp;
    return true;
}

/* Whether a socket of this namespace holds the port (any address). */
static bool bound_locally(skv_net_proto proto, uint16_t port)
{
    int fd = socket(AF_INET, (proto == SKV_NET_UDP ? SOCK_DGRAM : SOCK_STREAM)
                                 | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int one = 1; /* TIME_WAIT leftovers do not count */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    bool busy = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
                errno == EADDRINUSE;
    close(fd);
    return busy;
}

/* Whether any session of the table publishes proto/port. */
static bool published(const skv__nft_rule *rules, size_t count,
                      skv_net_proto proto, uint16_t port)
{
    for (size_t i = 0; i < count; i++) {
        char bridge[SKV_NET_IFNAME_MAX];
        skv_net_port p;
        if (skv__net_parse_pub(rules[i].comment, bridge, &p) &&
            p.proto == proto && p.host_port == port)
            return true;
    }
    return false;
}

static int check_opts(const skv_net_session *s,
                      const skv_net_publish_options *o, skv_net_port *want,
                      skv_error *err)
{
    if (!s || !o)
        return skv__err(err, SKV_EINVAL, "publish: session or opts is NULL");
    if (o->version != SKV_NET_PUBLISH_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "publish options version %u, "
                        "expected %u", o->version,
                        SKV_NET_PUBLISH_OPTIONS_VERSION);
    if (o->proto != SKV_NET_TCP && o->proto != SKV_NET_UDP)
        return skv__err(err, SKV_EINVAL, "publish: protocol %d is neither "
                        "TCP (6) nor UDP (17)", (int)o->proto);
    if (o->container_port == 0)
        return skv__err(err, SKV_ERANGE, "publish: container port 0");
    if (o->port_min > o->port_max || (o->port_min == 0 && o->port_max != 0))
        return skv__err(err, SKV_ERANGE, "publish: port range %u..%u",
                        o->port_min, o->port_max);
    int rc = skv_net_session_address(s, o->host_index, want->container_addr,
                                     sizeof(want->container_addr), err);
    if (rc < 0)
        return rc;
    want->proto = o->proto;
    want->host_port = o->host_port;
    want->host_index = o->host_index;
    want->container_port = o->container_port;
    return 0;
}

/* Settle want->host_port: the given one if free, else the lowest free one
 * of the range. */
static int choose_port(skv__nft *n, const skv_net_publish_options *o,
                       skv_net_port *want, skv_error *err)
{
    skv__nft_rule *rules = NULL;
    size_t count = 0;
    int rc = skv__nft_rules(n, &rules, &count, err);
    if (rc < 0)
        return rc;
    const char *pn = skv__net_proto_name(want->proto);
    if (want->host_port != 0) {
        if (published(rules, count, want->proto, want->host_port))
            rc = skv__err(err, SKV_EBUSY, "%s port %u is already published",
                          pn, want->host_port);
        else if (bound_locally(want->proto, want->host_port))
            rc = skv__err(err, SKV_EBUSY, "%s port %u is in use on the host",
                          pn, want->host_port);
        skv__free(rules);
        return rc;
    }
    unsigned lo = o->port_min ? o->port_min : SKV_NET_PORT_MIN_DEFAULT;
    unsigned hi = o->port_min ? o->port_max : SKV_NET_PORT_MAX_DEFAULT;
    for (unsigned p = lo; p <= hi && want->host_port == 0; p++)
        if (!published(rules, count, want->proto, (uint16_t)p) &&
            !bound_locally(want->proto, (uint16_t)p))
            want->host_port = (uint16_t)p;
    skv__free(rules);
    return want->host_port ? 0
                           : skv__err(err, SKV_ENOSPC, "no free %s port in "
                                      "%u..%u", pn, lo, hi);
}

static bool comment_is(const char *comment, void *data)
{
    return strcmp(comment, (const char *)data) == 0;
}

static int add_rules(skv__nft *n, const skv_net_session *s,
                     const skv_net_port *p, const char *comment,
                     skv_error *err)
{
    const char *pn = skv__net_proto_name(p->proto);
    int rc = skv__nft_setup(n, err);
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = skv__nft_run(n, err, "add rule ip %s %s fib daddr type local "
                          "%s dport %u dnat to %s:%u comment \"%s\"", n->table,
                          i == 0 ? "prerouting" : "output", pn, p->host_port,
                          p->container_addr, p->container_port, comment);
    if (rc == 0)
        rc = skv__nft_run(n, err, "add rule ip %s postrouting ct status dnat "
                          "oifname \"%s\" ip saddr { 127.0.0.0/8, %s } "
                          "ip daddr %s %s dport %u masquerade comment \"%s\"",
                          n->table, s->bridge, s->subnet_text,
                          p->container_addr, pn, p->container_port, comment);
    return rc;
}

int skv_net_publish(skv_net_session *s, const skv_net_publish_options *opts,
                    uint16_t *bound_port, skv_error *err)
{
    skv_net_port want = {0};
    int rc = check_opts(s, opts, &want, err);
    skv__nft n;
    if (rc == 0)
        rc = skv__nft_open(&n, s->prefix, err);
    if (rc < 0)
        return rc;
    char comment[SKV__NFT_COMMENT_MAX], path[64];
    rc = choose_port(&n, opts, &want, err);
    snprintf(comment, sizeof(comment), "%s pub %s %u %u %u", s->bridge,
             skv__net_proto_name(want.proto), want.host_port,
             want.host_index, want.container_port);
    bool tried = rc == 0; /* from here on, rules with comment are ours */
    if (rc == 0)
        rc = add_rules(&n, s, &want, comment, err);
    /* Connections to 127.0.0.1 are routed to the bridge only with
     * route_localnet on it (the bridge's own setting, gone with it). */
    snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/route_localnet",
             s->bridge);
    if (rc == 0)
        rc = skv__sys_write(path, "1", err);
    if (rc < 0 && tried) {
        size_t none = 0;
        skv__nft_delete(&n, comment_is, comment, &none, NULL);
    }
    skv__nft_close(&n);
    if (rc < 0)
        return rc;
    skv__log(SKV_LOG_INFO, "net", "session '%s': %s port %u -> %s:%u",
             s->session_id, skv__net_proto_name(want.proto), want.host_port,
             want.container_addr, want.container_port);
    if (bound_port)
        *bound_port = want.host_port;
    return 0;
}
