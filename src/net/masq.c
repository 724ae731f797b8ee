/* Outbound NAT of a session: one masquerade rule in the postrouting chain,
 * for traffic from the session's subnet that leaves through anything but a
 * session bridge of the prefix and goes outside the isolation CIDR (or, without
 * one, outside the own subnet). Traffic between agents of the cluster thus
 * keeps the kernels' addresses; everything else leaves with the host's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "net_internal.h"

/* Whether the rules hold one with exactly this comment. */
static int has_comment(skv__nft *n, const char *comment, bool *found,
                       skv_error *err)
{
    skv__nft_rule *rules = NULL;
    size_t count = 0;
    *found = false;
    int rc = skv__nft_rules(n, &rules, &count, err);
    for (size_t i = 0; rc == 0 && i < count; i++)
        if (strcmp(rules[i].comment, comment) == 0)
            *found = true;
    skv__free(rules);
    return rc;
}

int skv__net_masq_add(skv_net_session *s, skv_error *err)
{
    skv__nft n;
    char comment[SKV__NFT_COMMENT_MAX], net[SKV_NET_ADDR_MAX];
    const skv__cidr *keep = s->isolate ? &s->isolate_cidr : &s->subnet;
    skv__subnet_ip_format(keep->addr, net, sizeof(net));
    snprintf(comment, sizeof(comment), "%s nat", s->bridge);
    int rc = skv__nft_open(&n, s->prefix, err);
    if (rc < 0)
        return rc;
    bool found = false;
    rc = has_comment(&n, comment, &found, err); /* adopted session */
    if (rc == 0 && !found)
        rc = skv__nft_setup(&n, err);
    if (rc == 0 && !found)
        rc = skv__nft_run(&n, err, "add rule ip %s postrouting ip saddr %s "
                          "oifname != \"%s*\" ip daddr != %s/%u masquerade "
                          "comment \"%s\"", n.table, s->subnet_text,
                          s->prefix, net, keep->plen, comment);
    if (rc < 0) {
        /* A table this call made and left empty goes again. */
        size_t none = 0;
        skv__nft_delete(&n, NULL, NULL, &none, NULL);
        skv__err_prefix(err, "outbound NAT of session '%s'", s->session_id);
    }
    skv__nft_close(&n);
    return rc;
}

int skv_net_outbound_nat(const skv_net_session *s, bool *enabled,
                         skv_error *err)
{
    if (!s || !enabled)
        return skv__err(err, SKV_EINVAL, "outbound NAT: NULL argument");
    skv__nft n;
    char comment[SKV__NFT_COMMENT_MAX];
    snprintf(comment, sizeof(comment), "%s nat", s->bridge);
    int rc = skv__nft_open(&n, s->prefix, err);
    if (rc < 0)
        return rc;
    rc = has_comment(&n, comment, enabled, err);
    skv__nft_close(&n);
    return rc;
}
