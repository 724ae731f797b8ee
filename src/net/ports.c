/* Listing and removing a session's published ports, read from the ruleset.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

static int port_cmp(const void *a, const void *b)
{
    const skv_net_port *x = a, *y = b;
    if (x->proto != y->proto)
        return x->proto < y->proto ? -1 : 1;
    return (x->host_port > y->host_port) - (x->host_port < y->host_port);
}

/* Each published port has one rule in prerouting: list those. */
static int collect(const skv_net_session *s, const skv__nft_rule *rules,
                   size_t count, skv_net_port **ports, size_t *n)
{
    skv_net_port *v = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < count; i++) {
        char bridge[SKV_NET_IFNAME_MAX];
        skv_net_port p = {0};
        if (strcmp(rules[i].chain, "prerouting") != 0 ||
            !skv__net_parse_pub(rules[i].comment, bridge, &p) ||
            strcmp(bridge, s->bridge) != 0)
            continue;
        if (skv_net_session_address(s, p.host_index, p.container_addr,
                                    sizeof(p.container_addr), NULL) < 0)
            continue; /* not an index of this subnet: not ours */
        skv_net_port *nvp = skv__reallocarray(v, nv + 1, sizeof(*v));
        if (!nvp) {
            skv__free(v);
            return SKV_ENOMEM;
        }
        v = nvp;
        v[nv++] = p;
    }
    if (nv > 1)
        qsort(v, nv, sizeof(*v), port_cmp);
    *ports = v;
    *n = nv;
    return 0;
}

int skv_net_ports(const skv_net_session *s, skv_net_port **ports, size_t *n,
                  skv_error *err)
{
    if (!s || !ports || !n)
        return skv__err(err, SKV_EINVAL, "ports: NULL argument");
    *ports = NULL;
    *n = 0;
    skv__nft nft;
    int rc = skv__nft_open(&nft, s->prefix, err);
    if (rc < 0)
        return rc;
    skv__nft_rule *rules = NULL;
    size_t count = 0;
    rc = skv__nft_rules(&nft, &rules, &count, err);
    skv__nft_close(&nft);
    if (rc == 0 && collect(s, rules, count, ports, n) < 0)
        rc = skv__err(err, SKV_ENOMEM, "ports of session '%s'",
                      s->session_id);
    skv__free(rules);
    return rc;
}

/* Rules of one published port of one session. */
typedef struct pub_key {
    const char *bridge;
    skv_net_proto proto;
    uint16_t port;
} pub_key;

static bool is_pub(const char *comment, void *data)
{
    const pub_key *k = data;
    char bridge[SKV_NET_IFNAME_MAX];
    skv_net_port p;
    return skv__net_parse_pub(comment, bridge, &p) &&
           strcmp(bridge, k->bridge) == 0 && p.proto == k->proto &&
           p.host_port == k->port;
}

int skv_net_unpublish(skv_net_session *s, skv_net_proto proto,
                      uint16_t host_port, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "unpublish: session is NULL");
    if (proto != SKV_NET_TCP && proto != SKV_NET_UDP)
        return skv__err(err, SKV_EINVAL, "unpublish: protocol %d is neither "
                        "TCP (6) nor UDP (17)", (int)proto);
    skv__nft n;
    int rc = skv__nft_open(&n, s->prefix, err);
    if (rc < 0)
        return rc;
    pub_key k = {s->bridge, proto, host_port};
    size_t removed = 0;
    rc = skv__nft_delete(&n, is_pub, &k, &removed, err);
    skv__nft_close(&n);
    if (rc == 0 && removed == 0)
        return skv__err(err, SKV_ENOENT, "session '%s' publishes no %s port "
                        "%u", s->session_id, skv__net_proto_name(proto),
                        host_port);
    return rc;
}
