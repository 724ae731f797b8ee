/* Cluster networking of kernels, part 2: the session network of a kernel
 * (one bridge per session on this agent, created by its first kernel here
 * or adopted after a restart, destroyed with its last), the container's
 * veth between create and start, published ports of the main kernel, and
 * the session's SSH key pair in state_dir/ssh/<kernel id> (owned by the
 * kernel's user), bind-mounted read-only at /root/.ssh and /home/work/.ssh
 * (spec.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"
#include "sokovan/sshkey.h"

static const char *const ssh_files[] = {"id_ed25519", "id_ed25519.pub",
                                        "authorized_keys"};

static const char *isolate_cidr(const skv_agent *a)
{
    return a->cluster_cidr ? a->cluster_cidr
           : a->subnet    ? a->subnet
                          : SKV__AGENT_LOCAL_CIDR;
}

static bool same_session(const skv__agent_kernel *x,
                         const skv__agent_kernel *k)
{
    return x != k && x->net_mode == SKV__AGENT_NET_CLUSTER &&
           strcmp(x->req.session_id, k->req.session_id) == 0;
}

static bool has_sibling(const skv_agent *a, const skv__agent_kernel *k)
{
    for (size_t i = 0; i < a->nk; i++)
        if (same_session(a->k[i], k))
            return true;
    return false;
}

static int net_open(skv_agent *a, const skv__agent_kernel *k, bool adopt,
                    skv__agent_net **out, skv_error *err)
{
    skv__agent_net *g = skv__reallocarray(a->nets, a->nnets + 1,
                                          sizeof(*a->nets));
    if (!g)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    a->nets = g;
    skv__agent_net *n = &a->nets[a->nnets];
    memset(n, 0, sizeof(*n));
    /* Outbound NAT needs forwarding, and so do the peers' routes. */
    int rc = skv_net_forwarding_enable(err);
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = k->req.session_id;
    o.subnet = k->req.subnet;
    o.prefix = a->net_prefix;
    o.isolate_cidr = isolate_cidr(a);
    o.adopt = adopt;
    o.outbound_nat = true;
    o.host_guard = a->host_guard;
    o.host_allow = a->host_allow;
    if (rc == 0 && !(n->session_id = skv__strdup(k->req.session_id)))
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc == 0)
        rc = skv_net_session_create(&n->ns, &o, err);
    if (rc) {
        skv__free(n->session_id);
        return rc;
    }
    a->nnets++;
    *out = n;
    return 0;
}

/* The session's kernels on other agents (addresses outside the own
 * subnet) may be reached; the isolation rules refuse the rest. */
static int allow_peers(skv__agent_net *n, const skv__agent_kernel *k,
                       skv_error *err)
{
    const skv_proto_kernel_create *r = &k->req;
    for (size_t i = 0; i < r->n_cluster_hosts; i++) {
        const char *ip = r->cluster_hosts[i].address;
        if (!ip || !*ip || skv__agent_net_inside(r->subnet, ip))
            continue;
        char peer[SKV_NET_ADDR_MAX + 4];
        snprintf(peer, sizeof(peer), "%s/32", ip);
        int rc = skv_net_session_allow(n->ns, peer, err);
        if (rc && rc != SKV_EEXIST)
            return rc;
    }
    return 0;
}

static void ssh_remove(skv__agent_kernel *k)
{
    if (!k->ssh_dir)
        return;
    for (size_t i = 0; i < SKV__ARRAY_LEN(ssh_files); i++) {
        char *p = skv__asprintf("%s/%s", k->ssh_dir, ssh_files[i]);
        if (p)
            unlink(p);
        skv__free(p);
    }
    rmdir(k->ssh_dir);
    skv__free(k->ssh_dir);
    k->ssh_dir = NULL;
}

/* The kernel runs as the runtime's default user (nobody, 65534): the
 * files are its own, as ssh wants, and unreadable to other users. */
#define KERNEL_UID 65534
#define KERNEL_GID 65534

static int ssh_chown(const char *dir, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i <= SKV__ARRAY_LEN(ssh_files); i++) {
        char *p = i < SKV__ARRAY_LEN(ssh_files)
                      ? skv__asprintf("%s/%s", dir, ssh_files[i])
                      : skv__strdup(dir);
        if (!p)
            return skv__err(err, SKV_ENOMEM, "agent: out of memory");
        if (chown(p, KERNEL_UID, KERNEL_GID) < 0)
            rc = skv__err_sys(err, errno, "agent: cannot chown %s", p);
        skv__free(p);
    }
    return rc;
}

static int ssh_write(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    char *comment = skv__asprintf("sokovan-%s", k->req.session_id);
    k->ssh_dir = skv__asprintf("%s/ssh/%s", a->state_dir, k->req.kernel_id);
    if (!comment || !k->ssh_dir) {
        skv__free(comment);
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    skv_sshkey *key = NULL;
    int rc = 0;
    if (mkdir(k->ssh_dir, 0700) < 0 && errno != EEXIST)
        rc = skv__err_sys(err, errno, "agent: cannot create %s", k->ssh_dir);
    if (rc == 0)
        rc = skv_sshkey_from_seed(&key, k->req.ssh_seed, comment, err);
    if (rc == 0)
        rc = skv_sshkey_write_files(key, k->ssh_dir, err);
    if (rc == 0)
        rc = ssh_chown(k->ssh_dir, err);
    skv_sshkey_free(key);
    skv__free(comment);
    if (rc)
        ssh_remove(k);
    return rc;
}

int skv__agent_net_prepare(skv_agent *a, skv__agent_kernel *k, bool adopt,
                           skv_error *err)
{
    if (k->net_mode != SKV__AGENT_NET_CLUSTER)
        return 0;
    skv__agent_net *n = skv__agent_net_find(a, k->req.session_id);
    bool made = !n;
    int rc = n ? 0 : net_open(a, k, adopt, &n, err);
    if (rc == 0)
        rc = allow_peers(n, k, err);
    if (rc == 0)
        rc = ssh_write(a, k, err);
    if (rc && made && !has_sibling(a, k))
        skv__agent_net_drop(a, n, !adopt);
    return rc;
}

static bool is_main(const skv__agent_kernel *k)
{
    return !k->req.cluster_role || strcmp(k->req.cluster_role, "main") == 0;
}

static void unpublish_own(skv__agent_net *n, const skv__agent_kernel *k)
{
    skv_net_port *p = NULL;
    size_t np = 0;
    if (skv_net_ports(n->ns, &p, &np, NULL) != 0)
        return;
    for (size_t i = 0; i < np; i++)
        if (p[i].host_index == k->host_index)
            skv_net_unpublish(n->ns, p[i].proto, p[i].host_port, NULL);
    skv_free(p);
}

static int publish(skv__agent_net *n, const skv__agent_kernel *k,
                   skv_error *err)
{
    const skv_proto_kernel_create *r = &k->req;
    for (size_t i = 0; is_main(k) && i < r->n_ports; i++) {
        if (r->ports[i] == 0 || r->ports[i] > 65535) {
            unpublish_own(n, k);
            return skv__err(err, SKV_EINVAL, "kernel.create: port %u is "
                            "outside 1..65535", r->ports[i]);
        }
        skv_net_publish_options o = SKV_NET_PUBLISH_OPTIONS_INIT;
        o.host_index = k->host_index;
        o.container_port = (uint16_t)r->ports[i];
        int rc = skv_net_publish(n->ns, &o, NULL, err);
        if (rc) {
            unpublish_own(n, k);
            return rc;
        }
    }
    return 0;
}

int skv__agent_net_attach(skv_agent *a, skv__agent_kernel *k,
                          skv_error *err)
{
    if (k->net_mode != SKV__AGENT_NET_CLUSTER)
        return 0;
    skv__agent_net *n = skv__agent_net_find(a, k->req.session_id);
    if (!n)
        return skv__err(err, SKV_ESTATE, "kernel %s: no session network",
                        k->req.kernel_id);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv_runtime_status(a->rt, k->req.kernel_id, &st, err);
    skv_net_attach_options o = SKV_NET_ATTACH_OPTIONS_INIT;
    o.pid = st.pid;
    o.host_index = k->host_index;
    if (rc == 0)
        rc = skv_net_attach(n->ns, &o, err);
    if (rc == 0 && (rc = publish(n, k, err)) != 0)
        skv_net_detach(n->ns, k->host_index, NULL);
    return rc;
}

void skv__agent_net_published_free(char **p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        skv__free(p[i]);
    skv__free(p);
}

int skv__agent_net_published(const skv_agent *a, const skv__agent_kernel *k,
                             char ***out, size_t *n, skv_error *err)
{
    *out = NULL;
    *n = 0;
    skv__agent_net *net = k->net_mode == SKV__AGENT_NET_CLUSTER
                              ? skv__agent_net_find(a, k->req.session_id)
                              : NULL;
    skv_net_port *p = NULL;
    size_t np = 0;
    int rc = net ? skv_net_ports(net->ns, &p, &np, err) : 0;
    char **list = rc == 0 && np ? skv__calloc(np, sizeof(*list)) : NULL;
    if (rc == 0 && np && !list)
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; rc == 0 && i < np; i++) {
        if (p[i].host_index != k->host_index)
            continue;
        /* "tcp:22=HOST:30001": what a user connects to. Without a
         * configured address, 0.0.0.0 says "any address of the agent". */
        list[*n] = skv__asprintf("%s:%u=%s:%u",
                                 p[i].proto == SKV_NET_UDP ? "udp" : "tcp",
                                 p[i].container_port,
                                 a->address && a->address[0] ? a->address
                                                             : "0.0.0.0",
                                 p[i].host_port);
        if (!list[(*n)++])
            rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    skv_free(p);
    if (rc) {
        skv__agent_net_published_free(list, *n);
        *n = 0;
        return rc;
    }
    *out = list;
    return 0;
}

void skv__agent_net_release(skv_agent *a, skv__agent_kernel *k)
{
    ssh_remove(k);
    if (k->net_mode != SKV__AGENT_NET_CLUSTER)
        return;
    skv__agent_net *n = skv__agent_net_find(a, k->req.session_id);
    if (has_sibling(a, k)) {
        if (n)
            unpublish_own(n, k);
        return;
    }
    if (n)
        skv__agent_net_drop(a, n, true);
    if (a->pool && k->req.subnet)
        skv_net_pool_release(a->pool, k->req.subnet, NULL);
}

void skv__agent_net_cleanup(skv_agent *a)
{
    const char **keep = skv__calloc(a->nnets + 1, sizeof(*keep));
    if (!keep)
        return;
    for (size_t i = 0; i < a->nnets; i++)
        keep[i] = a->nets[i].session_id;
    size_t removed = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv_net_cleanup_stale(a->net_prefix, keep, a->nnets, &removed,
                              &e) != 0)
        skv__log(SKV_LOG_WARN, "agent", "stale network clean-up: %s",
                 e.message);
    else if (removed > 0)
        skv__log(SKV_LOG_INFO, "agent", "removed %zu stale network pieces",
                 removed);
    skv__free(keep);
}
