/*
 * sokovan/net.h - session networks: a private IPv4 network per session
 * (a Linux bridge with the session's subnet, one veth pair per container),
 * routes to other agents' subnets (host-gateway style), and clean-up of
 * pieces left behind by a crashed agent. The allocator of per-agent or
 * per-session subnets from a cluster CIDR is sokovan/subnet.h (included).
 *
 * Everything is configured through rtnetlink (libmnl); no `ip` command is
 * run. Link names are "<prefix><8 hex digits>" for a session's bridge
 * (the hex digits hash the session id) and "<bridge>v<hex index>" for the
 * host side of a container's veth pair, so every piece of a session can be
 * found by name after a restart.
 *
 * Isolation: each session has its own bridge and nothing bridges two
 * sessions. When forwarding is enabled (multi-node clusters), a session
 * created with isolate_cidr also gets policy-routing rules: traffic entering
 * from its bridge towards the cluster CIDR is refused ("prohibit") unless it
 * goes to the session's own subnet or to a peer subnet added with
 * skv_net_session_allow().
 *
 * Published ports and outbound NAT are nftables rules (libnftables, no `nft`
 * command) in one table per prefix, "ip sokovan_<prefix>": a published port
 * DNATs <proto> traffic for a local address of the host (including
 * 127.0.0.1 from the host itself) to a kernel's address; outbound NAT
 * masquerades the session's traffic leaving the host for anything but
 * session bridges and the isolation CIDR (or the own subnet). Every rule
 * names its session's bridge in its comment, so destroy and stale clean-up
 * find them; the table goes when its last rule does.
 *
 * Operations act on the network namespace of the calling thread; the
 * container side of a veth is configured through a netlink socket opened in
 * the container's namespace by a short-lived helper thread, so the caller's
 * namespace never changes. Needs CAP_NET_ADMIN (and CAP_SYS_ADMIN to enter
 * a container's namespace).
 *
 * Thread-safety: a skv_net_session needs exclusive access
 * while modified; distinct objects are independent. The functions without an
 * object are safe to call from any thread. nftables changes (publishing,
 * outbound NAT, their removal) are serialised by a process-wide lock, so
 * distinct sessions may publish from different threads; two processes
 * managing the same prefix are not supported.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_NET_H
#define SOKOVAN_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/subnet.h"   /* the subnet pool, SKV_NET_ADDR_MAX */

#ifdef __cplusplus
extern "C" {
#endif

/* Longest link name the kernel accepts, plus the NUL (IFNAMSIZ). */
#define SKV_NET_IFNAME_MAX 16
/* Default link name prefix. */
#define SKV_NET_DEFAULT_PREFIX "skv"

/* ---- session network ----------------------------------------------------- */

typedef struct skv_net_session skv_net_session;

/* Version 1 ends with adopt; version 2 adds outbound_nat; version 3
 * host_guard and host_allow. */
#define SKV_NET_SESSION_OPTIONS_VERSION 3
typedef struct skv_net_session_options {
    unsigned version;         /* SKV_NET_SESSION_OPTIONS_VERSION */
    const char *session_id;   /* required: 1..128 printable ASCII characters,
                                 no blanks */
    const char *subnet;       /* required: "10.123.4.0/24", prefix 16..29;
                                 the first address goes to the bridge (the
                                 containers' gateway) */
    const char *prefix;       /* link name prefix, 1..4 of [a-z]; NULL means
                                 SKV_NET_DEFAULT_PREFIX */
    const char *isolate_cidr; /* NULL: no rules; else the cluster CIDR whose
                                 other subnets this session may not reach */
    bool adopt;               /* take over an existing bridge of this session
                                 (after an agent restart) instead of failing
                                 with SKV_EEXIST */
    bool outbound_nat;        /* (v2) masquerade the session's traffic that
                                 leaves the host with the host's address;
                                 needs IPv4 forwarding (see
                                 skv_net_forwarding_enable) */
    bool host_guard;          /* (v3) the session's kernels reach no address
                                 of this host (its services bound to 0.0.0.0
                                 included) but for replies to connections
                                 the host made (published ports, outbound
                                 traffic) and host_allow */
    const char *host_allow;   /* (v3) with host_guard: host ports the
                                 kernels may reach, "tcp:22,udp:8000-8010,
                                 dns" (dns: udp and tcp 53); NULL or "":
                                 none. See skv_net_host_allow_check */
} skv_net_session_options;
#define SKV_NET_SESSION_OPTIONS_INIT {SKV_NET_SESSION_OPTIONS_VERSION, NULL, NULL, NULL, NULL, false, false, false, NULL}

/* Validate a host_allow list (comma-separated "tcp:PORT", "udp:PORT",
 * "tcp:LO-HI", "udp:LO-HI" with ports 1..65535, or "dns"; at most
 * SKV_NET_HOST_ALLOW_MAX entries; NULL or "" is the empty list).
 * SKV_EINVAL naming the bad entry. */
#define SKV_NET_HOST_ALLOW_MAX 32
SKV_EXTERN int skv_net_host_allow_check(const char *list, skv_error *err);

/* Create the session's bridge with the gateway address, bring it up,
 * (with isolate_cidr) add its isolation rules and (with outbound_nat) its
 * masquerade rule. On failure nothing is left. Versions 1 and 2 of the
 * options are accepted.
 * SKV_EEXIST when a link of that name exists and adopt is false. */
SKV_EXTERN int skv_net_session_create(skv_net_session **out,
                                      const skv_net_session_options *opts,
                                      skv_error *err);
/* Remove every link and rule of the session (bridge, veths, isolation
 * rules, published ports, outbound NAT), then free the
 * handle. The handle is freed even when a removal fails (the error says
 * what is left; skv_net_cleanup_stale() can retry). NULL is fine. */
SKV_EXTERN int skv_net_session_destroy(skv_net_session *s, skv_error *err);
/* Free the handle only; the network stays (see opts.adopt). */
SKV_EXTERN void skv_net_session_free(skv_net_session *s);

/* Borrowed strings, valid while the handle lives. */
SKV_EXTERN const char *skv_net_session_bridge(const skv_net_session *s);
SKV_EXTERN const char *skv_net_session_subnet(const skv_net_session *s);
/* The gateway address without prefix length ("10.123.4.1"). */
SKV_EXTERN const char *skv_net_session_gateway(const skv_net_session *s);
/* Address of host index idx (2.. last usable) without prefix length. */
SKV_EXTERN int skv_net_session_address(const skv_net_session *s, unsigned idx,
                                       char *buf, size_t n, skv_error *err);
/* With isolate_cidr: let the session reach a peer subnet (its kernels on
 * another agent). Without isolate_cidr nothing is refused, so this is a
 * no-op returning 0. */
SKV_EXTERN int skv_net_session_allow(skv_net_session *s,
                                     const char *peer_subnet, skv_error *err);

#define SKV_NET_ATTACH_OPTIONS_VERSION 1
typedef struct skv_net_attach_options {
    unsigned version;         /* SKV_NET_ATTACH_OPTIONS_VERSION */
    int64_t pid;              /* a process in the target namespace, or 0 */
    const char *netns_path;   /* or a namespace file (/proc/PID/ns/net,
                                 /run/netns/NAME); exactly one of the two */
    const char *ifname;       /* name inside; NULL means "eth0" */
    unsigned host_index;      /* address index in the subnet, 2.. */
} skv_net_attach_options;
#define SKV_NET_ATTACH_OPTIONS_INIT {SKV_NET_ATTACH_OPTIONS_VERSION, 0, NULL, NULL, 0}

/* Connect a network namespace to the session: a veth pair whose host side
 * joins the bridge and whose other side, inside the namespace, gets the
 * address of host_index, comes up with the loopback and a default route
 * via the gateway (a default route already there is kept). On failure the
 * pair is removed. SKV_EEXIST when host_index is attached. */
SKV_EXTERN int skv_net_attach(skv_net_session *s,
                              const skv_net_attach_options *opts,
                              skv_error *err);
/* Remove the veth pair of host_index (also gone on its own when the
 * namespace dies). SKV_ENOENT when there is none. */
SKV_EXTERN int skv_net_detach(skv_net_session *s, unsigned host_index,
                              skv_error *err);

/* ---- published ports and outbound NAT ----------------------------------- */

typedef enum skv_net_proto {
    SKV_NET_TCP = 6,
    SKV_NET_UDP = 17
} skv_net_proto;

/* Port range searched when host_port is 0 and no range is given. */
#define SKV_NET_PORT_MIN_DEFAULT 30000
#define SKV_NET_PORT_MAX_DEFAULT 32767

#define SKV_NET_PUBLISH_OPTIONS_VERSION 1
typedef struct skv_net_publish_options {
    unsigned version;         /* SKV_NET_PUBLISH_OPTIONS_VERSION */
    skv_net_proto proto;      /* SKV_NET_TCP (default) or SKV_NET_UDP */
    uint16_t host_port;       /* port on the host's addresses; 0 picks the
                                 lowest free one in port_min..port_max */
    unsigned host_index;      /* the kernel: address index in the subnet */
    uint16_t container_port;  /* 1..65535 inside the kernel */
    uint16_t port_min;        /* range for host_port 0; 0 and 0 mean */
    uint16_t port_max;        /* SKV_NET_PORT_{MIN,MAX}_DEFAULT */
} skv_net_publish_options;
#define SKV_NET_PUBLISH_OPTIONS_INIT {SKV_NET_PUBLISH_OPTIONS_VERSION, SKV_NET_TCP, 0, 0, 0, 0, 0}

/* Make container_port of the kernel at host_index reachable as host_port
 * on every local address of the host (from other hosts, from the host
 * itself, 127.0.0.1 included). Clients on other hosts need IPv4
 * forwarding (skv_net_forwarding_enable). The port is "free" when no
 * session of this prefix publishes it (same protocol) and no socket of the
 * calling thread's namespace is bound to it; the library does not hold the
 * port afterwards. *bound_port (may be NULL) receives the host port.
 * SKV_EBUSY when host_port is taken, SKV_ENOSPC when the range has no free
 * port, SKV_EINVAL/SKV_ERANGE for bad options; nothing is left on failure.
 * Sets route_localnet on the session's bridge (for 127.0.0.1). */
SKV_EXTERN int skv_net_publish(skv_net_session *s,
                               const skv_net_publish_options *opts,
                               uint16_t *bound_port, skv_error *err);
/* Remove a published port. SKV_ENOENT when it is not published by this
 * session. */
SKV_EXTERN int skv_net_unpublish(skv_net_session *s, skv_net_proto proto,
                                 uint16_t host_port, skv_error *err);

typedef struct skv_net_port {
    skv_net_proto proto;
    uint16_t host_port;
    unsigned host_index;
    uint16_t container_port;
    char container_addr[SKV_NET_ADDR_MAX]; /* "10.123.4.2" */
} skv_net_port;

/* The session's published ports, read back from the ruleset (so they
 * survive an agent restart with opts.adopt), sorted by protocol then host
 * port. Free *ports with skv_free(); *ports is NULL when *n is 0. */
SKV_EXTERN int skv_net_ports(const skv_net_session *s, skv_net_port **ports,
                             size_t *n, skv_error *err);
/* Whether the session's outbound masquerade rule is present. */
SKV_EXTERN int skv_net_outbound_nat(const skv_net_session *s, bool *enabled,
                                    skv_error *err);

/* ---- host-level pieces ----------------------------------------------------- */

/* Name of the session's bridge for a prefix (NULL: default) into buf
 * (SKV_NET_IFNAME_MAX bytes suffice). */
SKV_EXTERN int skv_net_bridge_name(const char *prefix, const char *session_id,
                                   char *buf, size_t n, skv_error *err);
/* Route a subnet of another agent via that agent's host address (on a
 * directly connected network). SKV_EEXIST when the route exists. */
SKV_EXTERN int skv_net_route_add(const char *subnet, const char *via,
                                 skv_error *err);
/* SKV_ENOENT when there is no such route. */
SKV_EXTERN int skv_net_route_del(const char *subnet, const char *via,
                                 skv_error *err);
/* Remove every route added by skv_net_route_add (they carry routing
 * protocol number 173), e.g. after an agent restart before adding the
 * current set again. *removed (may be NULL) receives how many went. */
SKV_EXTERN int skv_net_route_flush(size_t *removed, skv_error *err);
/* Turn on IPv4 forwarding (/proc/sys/net/ipv4/ip_forward, through the
 * sysroot) of the calling thread's namespace: needed for multi-node. */
SKV_EXTERN int skv_net_forwarding_enable(skv_error *err);
/* Names of the links whose name starts with prefix (NULL: default),
 * sorted; free with skv_net_links_free(). */
SKV_EXTERN int skv_net_links(const char *prefix, char ***names, size_t *n,
                             skv_error *err);
SKV_EXTERN void skv_net_links_free(char **names, size_t n);
/* After an agent restart: remove every session bridge, veth, isolation
 * rule and nftables rule (published ports, outbound NAT) named with prefix
 * (NULL: default) whose session is not among keep_ids. *removed (may be
 * NULL) receives how many links and rules went.
 * Links of other shapes that merely share the prefix are left alone. */
SKV_EXTERN int skv_net_cleanup_stale(const char *prefix,
                                     const char *const *keep_ids,
                                     size_t n_keep, size_t *removed,
                                     skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_NET_H */
