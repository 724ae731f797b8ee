/* Internals of the net module: addresses, rtnetlink requests (libmnl) and
 * the session handle.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_NET_INTERNAL_H
#define SKV_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "skv_cidr.h"
#include "skv_internal.h"
#include "sokovan/net.h"

struct mnl_socket;
struct nft_ctx;
struct nlmsghdr;

/* Size of request and receive buffers. */
#define SKV__NL_BUF 16384
/* Policy-rule priorities: allow rules before the prohibit rule, both
 * before the kernel's main-table rule (32766). */
#define SKV__NET_PRIO_ALLOW 9000u
#define SKV__NET_PRIO_DENY 9001u
/* Routing protocol number marking the routes this library adds, so they
 * can be found again after a restart (unassigned in iproute2's
 * rt_protos). */
#define SKV__NET_RTPROT 173u

/* ---- names (addr.c); IPv4 addresses are skv_cidr.h's --------------- */
/* Link name prefix: NULL gives the default; else 1..4 of [a-z]. */
int skv__net_prefix_check(const char *prefix, const char **out,
                          skv_error *err);

/* ---- netlink core (nl.c) ---------------------------------------------- */
typedef struct skv__nl {
    struct mnl_socket *sock;
    unsigned portid;
    unsigned seq;
} skv__nl;

/* A socket in the calling thread's namespace. */
int skv__nl_open(skv__nl *nl, skv_error *err);
/* Open a namespace file: /proc/<pid>/ns/net (through the sysroot) when
 * pid > 0, else ns_path. */
int skv__net_ns_open(int64_t pid, const char *ns_path, int *fd,
                     skv_error *err);
/* A socket in the namespace of ns_fd, opened by a helper thread so the
 * caller's namespace never changes. */
int skv__nl_open_netns(skv__nl *nl, int ns_fd, skv_error *err);
void skv__nl_close(skv__nl *nl);
/* Start a request in buf (SKV__NL_BUF bytes) with flags | NLM_F_REQUEST. */
struct nlmsghdr *skv__nl_msg(skv__nl *nl, void *buf, uint16_t type,
                             uint16_t flags);
/* Send a request with NLM_F_ACK and wait for its ack: 0, or the positive
 * errno the kernel answered (or the socket failed with). */
int skv__nl_talk(skv__nl *nl, struct nlmsghdr *nlh);
/* Dump request: cb(nlh, data) for every answer (MNL_CB_OK to go on).
 * 0 or a positive errno; EINTR when the kernel interrupted the dump (the
 * caller resets what cb collected and asks again: SKV__NL_DUMP_TRIES). */
#define SKV__NL_DUMP_TRIES 5
typedef int (*skv__nl_cb)(const struct nlmsghdr *nlh, void *data);
int skv__nl_dump(skv__nl *nl, struct nlmsghdr *nlh, skv__nl_cb cb,
                 void *data);

/* ---- links (link.c, link_list.c) -------------------------------------- */
/* Index of a link by name; ENOENT (positive errno) when absent. */
int skv__nl_link_index(skv__nl *nl, const char *name, int *idx);
int skv__nl_bridge_add(skv__nl *nl, const char *name);
/* veth pair: `name` here (enslaved to master when > 0), `peer` in the
 * namespace of peer_pid (> 0) or peer_fd (>= 0). */
int skv__nl_veth_add(skv__nl *nl, const char *name, int master,
                     const char *peer, int64_t peer_pid, int peer_fd);
int skv__nl_link_up(skv__nl *nl, int idx);
int skv__nl_link_del(skv__nl *nl, int idx);
/* Sorted names starting with prefix; free with skv_net_links_free. */
int skv__nl_link_list(skv__nl *nl, const char *prefix, char ***names,
                      size_t *n);

/* ---- addresses, routes and rules (route.c, rule.c) -------------------- */
int skv__nl_addr_add(skv__nl *nl, int idx, uint32_t addr, unsigned plen);
/* Add (add true) or delete a unicast route in the main table; gw 0 means
 * on-link, oif 0 means any. */
int skv__nl_route(skv__nl *nl, bool add, uint32_t dst, unsigned plen,
                  uint32_t gw, int oif);
/* Add or delete an IPv4 policy rule "iif <iif> to <dst> <action>";
 * prohibit false means "lookup main". */
int skv__nl_rule(skv__nl *nl, bool add, const char *iif,
                 const skv__cidr *dst, bool prohibit, uint32_t prio);
/* Delete every IPv4 rule whose input interface starts with prefix and
 * satisfies doomed(); *removed is incremented per rule removed. */
typedef bool (*skv__net_name_pred)(const char *name, void *data);
int skv__nl_rule_flush(skv__nl *nl, const char *prefix,
                       skv__net_name_pred doomed, void *data,
                       size_t *removed);

/* ---- nftables (nft.c) ---------------------------------------------------
 * The table "ip sokovan_<prefix>" holds nat base chains "prerouting",
 * "output" and "postrouting"; every rule's comment starts with the bridge
 * name of its session:
 *   "<bridge> pub <proto> <host port> <host index> <container port>"
 *       DNAT of a published port (prerouting, output) and the masquerade
 *       of its loopback and hairpin traffic (postrouting);
 *   "<bridge> nat"   the session's outbound masquerade (postrouting);
 *   "<bridge> host"  the session's host guard (filter chain "input",
 *       hostguard.c). */
#define SKV__NFT_NAME_MAX 32
#define SKV__NFT_COMMENT_MAX 96

typedef struct skv__nft {
    struct nft_ctx *ctx;
    char table[SKV__NFT_NAME_MAX];
} skv__nft;

typedef struct skv__nft_rule {
    char chain[SKV__NFT_NAME_MAX];
    uint64_t handle;
    char comment[SKV__NFT_COMMENT_MAX];
} skv__nft_rule;

/* Take the process-wide nftables lock and open a context for the table of
 * prefix; skv__nft_close() releases both. */
int skv__nft_open(skv__nft *n, const char *prefix, skv_error *err);
void skv__nft_close(skv__nft *n);
/* Run one command (printf-style); SKV_ESYS with nft's message. */
int skv__nft_run(skv__nft *n, skv_error *err, const char *fmt, ...)
    SKV_PRINTF(3, 4);
/* The output of the last command (never NULL). */
const char *skv__nft_output(skv__nft *n);
int skv__nft_table_exists(skv__nft *n, bool *exists, skv_error *err);
/* Create the table and its base chains; existing ones are kept. */
int skv__nft_setup(skv__nft *n, skv_error *err);
/* Rules of the table that carry a comment (none when there is no table);
 * free with skv__free. */
int skv__nft_rules(skv__nft *n, skv__nft_rule **rules, size_t *count,
                   skv_error *err);
/* Delete every rule whose comment satisfies pred (*removed counts them),
 * then the table if nothing is left in it. */
typedef bool (*skv__nft_pred)(const char *comment, void *data);
int skv__nft_delete(skv__nft *n, skv__nft_pred pred, void *data,
                    size_t *removed, skv_error *err);
/* The bridge name a comment starts with (SKV_NET_IFNAME_MAX buffer). */
bool skv__nft_comment_bridge(const char *comment, char *bridge);
/* Remove every nftables rule of one bridge (session destroy, rollback). */
int skv__net_nft_forget(const char *prefix, const char *bridge,
                        size_t *removed, skv_error *err);
/* "tcp" or "udp". */
const char *skv__net_proto_name(skv_net_proto p);
/* A published-port comment (publish.c); false for other comments. Fills
 * bridge (SKV_NET_IFNAME_MAX) and every field of p but container_addr. */
bool skv__net_parse_pub(const char *comment, char *bridge, skv_net_port *p);
/* The session's host guard (hostguard.c): the filter chain "input" with
 * the session's "<bridge> host" rules for the allow-list `allow` (replaced
 * when present). */
int skv__net_host_guard(skv_net_session *s, const char *allow,
                        skv_error *err);
/* The session's outbound masquerade rule (masq.c); kept when present. */
int skv__net_masq_add(skv_net_session *s, skv_error *err);

/* ---- session handle (session.c) -------------------------------------- */
struct skv_net_session {
    char *session_id;
    char bridge[SKV_NET_IFNAME_MAX];
    char subnet_text[SKV_NET_ADDR_MAX];
    char gateway_text[SKV_NET_ADDR_MAX];
    skv__cidr subnet;
    bool isolate;
    skv__cidr isolate_cidr;
    int bridge_idx;
    char prefix[8];           /* link name prefix (names the nft table) */
};

/* "<bridge>v<hex idx>" into buf (SKV_NET_IFNAME_MAX). */
void skv__net_veth_name(const skv_net_session *s, unsigned idx, char *buf);
/* Whether name is "<prefix><8 hex>" optionally followed by "v<hex>"; the
 * bridge part is copied into bridge (SKV_NET_IFNAME_MAX). */
bool skv__net_name_parse(const char *name, const char *prefix, char *bridge);

#endif /* SKV_NET_INTERNAL_H */
