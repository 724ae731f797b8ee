/* Cluster networking of kernels, part 1: the mode of a kernel and the
 * session's subnet, addresses and SSH seed. A manager that hands out
 * subnets fills kernel.create's subnet and every cluster host's address;
 * otherwise (single node, older manager) the agent takes a /27 from its own
 * pool (its subnet from the manager, else SKV__AGENT_LOCAL_CIDR) and gives
 * cluster host i the address index i + 2 (the gateway is .1). Whatever the
 * agent chose is written into the request before the kernel record is, so
 * a restarted agent finds the same network again.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"
#include "sokovan/sshkey.h"

#define SKV__AGENT_SESSION_PREFIX 27

void skv__agent_net_prefix(skv_agent *a)
{
    /* "k" and three letters hashed from the agent id (FNV-1a): agents
     * sharing a host never take each other's links for stale ones. */
    uint32_t h = 2166136261u;
    for (const char *c = a->agent_id; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    a->net_prefix[0] = 'k';
    for (int i = 1; i < 4; i++, h /= 26)
        a->net_prefix[i] = (char)('a' + h % 26);
    a->net_prefix[4] = '\0';
}

static int parse_ip(const char *s, uint32_t *out)
{
    unsigned b[4];
    char tail;
    if (!s || sscanf(s, "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3],
                     &tail) != 4 || b[0] > 255 || b[1] > 255 || b[2] > 255 ||
        b[3] > 255)
        return -1;
    *out = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    return 0;
}

static int parse_cidr(const char *s, uint32_t *base, unsigned *plen)
{
    char ip[SKV_NET_ADDR_MAX];
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || (size_t)(slash - s) >= sizeof(ip))
        return -1;
    snprintf(ip, sizeof(ip), "%.*s", (int)(slash - s), s);
    unsigned p;
    char tail;
    if (parse_ip(ip, base) || sscanf(slash + 1, "%u%c", &p, &tail) != 1 ||
        p < 8 || p > 30)
        return -1;
    *plen = p;
    return 0;
}

static void format_ip(uint32_t a, char *buf, size_t n)
{
    snprintf(buf, n, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
             a & 255);
}

/* Is ip inside the CIDR subnet? */
bool skv__agent_net_inside(const char *subnet, const char *ip)
{
    uint32_t base, addr;
    unsigned plen;
    if (parse_cidr(subnet, &base, &plen) || parse_ip(ip, &addr))
        return false;
    uint32_t mask = plen ? ~0u << (32 - plen) : 0;
    return (addr & mask) == (base & mask);
}

static int mode_of(const skv_proto_kernel_create *r, skv_error *err)
{
    if (!r->network)
        return r->cluster_size > 1 || r->n_cluster_hosts > 1
                   ? SKV__AGENT_NET_CLUSTER : SKV__AGENT_NET_NONE;
    if (strcmp(r->network, "none") == 0)
        return SKV__AGENT_NET_NONE;
    if (strcmp(r->network, "host") == 0)
        return SKV__AGENT_NET_HOST;
    if (strcmp(r->network, "cluster") == 0)
        return SKV__AGENT_NET_CLUSTER;
    return skv__err(err, SKV_EINVAL, "kernel.create: network '%s' is not "
                    "none, host or cluster", r->network);
}

/* Another kernel of the same session held here (its subnet and seed are
 * the session's), NULL when none. */
static const skv__agent_kernel *sibling(const skv_agent *a,
                                        const skv__agent_kernel *k)
{
    for (size_t i = 0; i < a->nk; i++)
        if (a->k[i] != k && a->k[i]->net_mode == SKV__AGENT_NET_CLUSTER &&
            strcmp(a->k[i]->req.session_id, k->req.session_id) == 0)
            return a->k[i];
    return NULL;
}

static int pool_open(skv_agent *a, skv_error *err)
{
    if (a->pool)
        return 0;
    int rc = skv_net_pool_new(&a->pool, a->subnet ? a->subnet
                                                  : SKV__AGENT_LOCAL_CIDR,
                              SKV__AGENT_SESSION_PREFIX, err);
    /* The subnets of the sessions held stay theirs. */
    for (size_t i = 0; rc == 0 && i < a->nk; i++)
        if (a->k[i]->req.subnet)
            skv_net_pool_reserve(a->pool, a->k[i]->req.subnet, NULL);
    return rc;
}

/* A local subnet: cluster host i gets index i + 2. */
static int local_subnet(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    skv_proto_kernel_create *r = &k->req;
    const skv__agent_kernel *sib = sibling(a, k);
    char buf[SKV_NET_ADDR_MAX];
    int rc = sib ? 0 : pool_open(a, err);
    if (rc == 0 && !sib)
        rc = skv_net_pool_alloc(a->pool, buf, sizeof(buf), err);
    if (rc)
        return rc;
    r->subnet = skv__strdup(sib ? sib->req.subnet : buf);
    uint32_t base;
    unsigned plen;
    if (!r->subnet || parse_cidr(r->subnet, &base, &plen))
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; i < r->n_cluster_hosts; i++) {
        if (i + 3 >= (1u << (32 - plen)))
            return skv__err(err, SKV_ERANGE, "kernel.create: %zu cluster "
                            "hosts do not fit subnet %s", r->n_cluster_hosts,
                            r->subnet);
        format_ip(base + (uint32_t)i + 2, buf, sizeof(buf));
        skv__free(r->cluster_hosts[i].address);
        if (!(r->cluster_hosts[i].address = skv__strdup(buf)))
            return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    return 0;
}

/* The kernel's own entry among the cluster hosts, -1 when none. */
static long own_host(const skv_proto_kernel_create *r)
{
    const char *role = r->cluster_role ? r->cluster_role : "main";
    uint32_t idx = r->cluster_idx ? r->cluster_idx : 1;
    for (size_t i = 0; i < r->n_cluster_hosts; i++)
        if (r->cluster_hosts[i].role &&
            strcmp(r->cluster_hosts[i].role, role) == 0 &&
            r->cluster_hosts[i].idx == idx)
            return (long)i;
    return -1;
}

static int host_index(skv__agent_kernel *k, skv_error *err)
{
    const skv_proto_kernel_create *r = &k->req;
    uint32_t base, addr;
    unsigned plen;
    if (parse_cidr(r->subnet, &base, &plen) || plen > 29)
        return skv__err(err, SKV_EINVAL, "kernel.create: subnet '%s' is not "
                        "an IPv4 CIDR of prefix 8..29", r->subnet);
    long own = own_host(r);
    const char *ip = own >= 0 ? r->cluster_hosts[own].address : NULL;
    if (own < 0 || !ip || !*ip)
        addr = base + (own < 0 ? 2u : (uint32_t)own + 2);
    else if (parse_ip(ip, &addr) || !skv__agent_net_inside(r->subnet, ip))
        return skv__err(err, SKV_EINVAL, "kernel.create: address '%s' of "
                        "%s%u is not in subnet %s", ip, r->cluster_role,
                        r->cluster_idx, r->subnet);
    k->host_index = addr - base;
    if (k->host_index < 2 || k->host_index >= (1u << (32 - plen)) - 1)
        return skv__err(err, SKV_ERANGE, "kernel.create: no host address %u "
                        "in subnet %s", k->host_index, r->subnet);
    format_ip(addr, k->address, sizeof(k->address));
    return 0;
}

static int seed(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    skv_proto_kernel_create *r = &k->req;
    if (r->ssh_seed && r->ssh_seed_len != SKV_SSHKEY_SEED_BYTES)
        return skv__err(err, SKV_EINVAL, "kernel.create: ssh_seed has %zu "
                        "bytes, not %d", r->ssh_seed_len,
                        SKV_SSHKEY_SEED_BYTES);
    if (r->ssh_seed)
        return 0;
    const skv__agent_kernel *sib = sibling(a, k);
    if (!(r->ssh_seed = skv__malloc(SKV_SSHKEY_SEED_BYTES)))
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    r->ssh_seed_len = SKV_SSHKEY_SEED_BYTES;
    if (sib && sib->req.ssh_seed) {
        memcpy(r->ssh_seed, sib->req.ssh_seed, SKV_SSHKEY_SEED_BYTES);
        return 0;
    }
    return skv_sshkey_seed_generate(r->ssh_seed, err);
}

int skv__agent_net_resolve(skv_agent *a, skv__agent_kernel *k, bool restore,
                           skv_error *err)
{
    int m = mode_of(&k->req, err);
    if (m < 0)
        return m;
    if (restore && m == SKV__AGENT_NET_CLUSTER &&
        (!k->req.subnet || !*k->req.subnet))
        m = SKV__AGENT_NET_HOST;
    k->net_mode = m;
    if (m != SKV__AGENT_NET_CLUSTER)
        return 0;
    int rc = 0;
    if (!k->req.subnet || !*k->req.subnet) {
        skv__free(k->req.subnet);
        k->req.subnet = NULL;
        rc = local_subnet(a, k, err);
    }
    if (rc == 0)
        rc = host_index(k, err);
    if (rc == 0)
        rc = seed(a, k, err);
    return rc;
}

/* ---- the table of session networks ---- */

skv__agent_net *skv__agent_net_find(const skv_agent *a, const char *sid)
{
    for (size_t i = 0; i < a->nnets; i++)
        if (strcmp(a->nets[i].session_id, sid) == 0)
            return &a->nets[i];
    return NULL;
}

void skv__agent_net_drop(skv_agent *a, skv__agent_net *n, bool destroy)
{
    skv_error e = SKV_ERROR_INIT;
    if (destroy && skv_net_session_destroy(n->ns, &e) != 0)
        skv__log(SKV_LOG_WARN, "agent", "session %s: network not fully "
                 "removed: %s", n->session_id, e.message);
    else if (!destroy)
        skv_net_session_free(n->ns);
    skv__free(n->session_id);
    size_t i = (size_t)(n - a->nets);
    memmove(&a->nets[i], &a->nets[i + 1], (a->nnets - i - 1) * sizeof(*n));
    a->nnets--;
}

void skv__agent_net_free(skv_agent *a)
{
    while (a->nnets > 0)
        skv__agent_net_drop(a, &a->nets[a->nnets - 1], false);
    skv__free(a->nets);
    a->nets = NULL;
    skv_net_pool_free(a->pool);
    a->pool = NULL;
    skv__free(a->subnet);
    skv__free(a->cluster_cidr);
    a->subnet = a->cluster_cidr = NULL;
}
