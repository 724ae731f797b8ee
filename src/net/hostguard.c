/* Host guard of a session network: kernels of a session reach other hosts
 * (forwarded traffic) but, without it, also every service of this host
 * bound to 0.0.0.0 (through the gateway address or any other address of
 * the host: the kernel delivers to local addresses before any policy
 * rule). The guard is a filter base chain "input" in the prefix's table
 * with, per session, rules whose comment is "<bridge> host":
 *   iifname <bridge> ct state established,related accept   replies to
 *       connections the host made (published ports answered through the
 *       host, outbound traffic of the host to a kernel)
 *   iifname <bridge> <proto> dport <ports> accept          the allow-list
 *   iifname <bridge> drop                                   the rest
 * The bridge itself gets no IPv6 (ipv6_off). Sessions' rules never overlap (each names its own bridge), so they are
 * appended in any order; they go with the bridge's other rules (destroy,
 * clean-up, rollback all delete by the bridge in the comment).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

/* One allow-list entry: proto and port range. */
typedef struct allow_entry {
    skv_net_proto proto;
    unsigned lo, hi;
} allow_entry;

static int port_parse(const char *s, size_t len, unsigned *out)
{
    char buf[8];
    if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789") < len ||
        s[0] == '0')
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    unsigned long v = strtoul(buf, NULL, 10);
    if (v < 1 || v > 65535)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* "tcp:22", "udp:8000-8010"; "dns" gives two entries. */
static int entry_parse(const char *s, size_t len, allow_entry *e,
                       size_t *n)
{
    if (len == 3 && strncmp(s, "dns", 3) == 0) {
        e[0] = (allow_entry){SKV_NET_UDP, 53, 53};
        e[1] = (allow_entry){SKV_NET_TCP, 53, 53};
        *n = 2;
        return 0;
    }
    if (len < 5 || s[3] != ':')
        return -1;
    if (strncmp(s, "tcp", 3) == 0)
        e->proto = SKV_NET_TCP;
    else if (strncmp(s, "udp", 3) == 0)
        e->proto = SKV_NET_UDP;
    else
        return -1;
    const char *p = s + 4, *end = s + len;
    const char *dash = memchr(p, '-', (size_t)(end - p));
    const char *lo_end = dash ? dash : end;
    if (port_parse(p, (size_t)(lo_end - p), &e->lo) < 0)
        return -1;
    e->hi = e->lo;
    if (dash && (port_parse(dash + 1, (size_t)(end - dash - 1), &e->hi) < 0 ||
                 e->hi < e->lo))
        return -1;
    *n = 1;
    return 0;
}

/* Parse into e (room for 2 * SKV_NET_HOST_ALLOW_MAX). */
static int allow_parse(const char *list, allow_entry *e, size_t *n,
                       skv_error *err)
{
    *n = 0;
    size_t items = 0;
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        size_t got = 0;
        if (++items > SKV_NET_HOST_ALLOW_MAX)
            return skv__err(err, SKV_EINVAL, "host_allow: more than %d "
                            "entries", SKV_NET_HOST_ALLOW_MAX);
        if (entry_parse(p, len, e + *n, &got) < 0)
            return skv__err(err, SKV_EINVAL, "host_allow: '%.*s' is not "
                            "tcp:PORT, udp:PORT, tcp:LO-HI, udp:LO-HI "
                            "(ports 1..65535) or dns", (int)len, p);
        *n += got;
        p += len;
        if (*p == ',' && !*++p)
            return skv__err(err, SKV_EINVAL, "host_allow: empty entry at "
                            "the end of '%s'", list);
    }
    return 0;
}

int skv_net_host_allow_check(const char *list, skv_error *err)
{
    allow_entry e[2 * SKV_NET_HOST_ALLOW_MAX];
    size_t n = 0;
    return allow_parse(list, e, &n, err);
}

static int chain_setup(skv__nft *n, skv_error *err)
{
    int rc = skv__nft_run(n, err, "add table ip %s", n->table);
    if (rc == 0)
        rc = skv__nft_run(n, err, "add chain ip %s input { type filter hook "
                          "input priority 0; policy accept; }", n->table);
    return rc;
}

static bool host_comment_of(const char *comment, void *data)
{
    char want[SKV__NFT_COMMENT_MAX];
    snprintf(want, sizeof(want), "%s host", (const char *)data);
    return strcmp(comment, want) == 0;
}

static int rules_add(skv__nft *n, const skv_net_session *s,
                     const allow_entry *e, size_t ne, skv_error *err)
{
    const char *t = n->table, *b = s->bridge;
    int rc = skv__nft_run(n, err, "add rule ip %s input iifname \"%s\" ct "
                          "state established,related accept comment "
                          "\"%s host\"", t, b, b);
    for (size_t i = 0; rc == 0 && i < ne; i++) {
        char ports[16];
        snprintf(ports, sizeof(ports), e[i].lo == e[i].hi ? "%u" : "%u-%u",
                 e[i].lo, e[i].hi);
        rc = skv__nft_run(n, err, "add rule ip %s input iifname \"%s\" %s "
                          "dport %s accept comment \"%s host\"", t, b,
                          skv__net_proto_name(e[i].proto), ports, b);
    }
    if (rc == 0)
        rc = skv__nft_run(n, err, "add rule ip %s input iifname \"%s\" drop "
                          "comment \"%s host\"", t, b, b);
    return rc;
}

/* The rules are IPv4 (session networks are), but the bridge would also
 * get an IPv6 link-local address, through which a kernel reaches host
 * services bound to "::". Without IPv6 on the bridge the host drops what
 * arrives there. A host without IPv6 has no such file. */
static int ipv6_off(const skv_net_session *s, skv_error *err)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
             s->bridge);
    if (!skv__sys_exists(path))
        return 0;
    return skv__sys_write(path, "1", err);
}

int skv__net_host_guard(skv_net_session *s, const char *allow,
                        skv_error *err)
{
    allow_entry e[2 * SKV_NET_HOST_ALLOW_MAX];
    size_t ne = 0;
    int rc = allow_parse(allow, e, &ne, err);
    if (rc == 0)
        rc = ipv6_off(s, err);
    if (rc < 0)
        return rc;
    skv__nft n;
    if ((rc = skv__nft_open(&n, s->prefix, err)) < 0)
        return rc;
    /* An adopted session gets the rules of the current list: the old ones
     * go first. */
    size_t dropped = 0;
    rc = skv__nft_delete(&n, host_comment_of, s->bridge, &dropped, err);
    if (rc == 0)
        rc = chain_setup(&n, err);
    if (rc == 0)
        rc = rules_add(&n, s, e, ne, err);
    if (rc < 0) {
        /* Half a guard is worse than a failed create: remove it all. */
        skv__nft_delete(&n, host_comment_of, s->bridge, &dropped, NULL);
        skv__err_prefix(err, "host guard of session '%s'", s->session_id);
    }
    skv__nft_close(&n);
    return rc;
}
