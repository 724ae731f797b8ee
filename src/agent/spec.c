/* The container of a kernel: image, command, environment (the request's and
 * the compute plugins'), cluster variables, limits (CPU quota from the cpu
 * amount, memory, pids), cpuset and memory nodes from the placement, the
 * accelerators' device nodes and mounts, and the network mode.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent_internal.h"

#define ROLES_MAX 16

/* Roles in order of first appearance among the cluster hosts ("main" x1,
 * "sub" xN); without hosts, the kernel's own role alone. */
static size_t roles_of(const skv_proto_kernel_create *r,
                       skv_cluster_role *roles, const char *role,
                       unsigned idx)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_cluster_hosts; i++) {
        const char *name = r->cluster_hosts[i].role;
        size_t j = 0;
        while (name && j < n && strcmp(roles[j].name, name) != 0)
            j++;
        if (!name || (j == n && n == ROLES_MAX))
            continue;
        if (j == n)
            roles[n++] = (skv_cluster_role){name, 0};
        roles[j].count++;
    }
    if (n == 0)
        roles[n++] = (skv_cluster_role){role, idx};
    return n;
}

/* Cluster network: the container gets its own namespace (mode NONE; the
 * agent attaches it to the session's bridge before start), every cluster
 * host resolves through /etc/hosts, and the session's SSH key pair is
 * mounted read-only for root and for the conventional user "work". */
static int network(skv_container_spec *spec, const skv__agent_kernel *k,
                   skv_error *err)
{
    const skv_proto_kernel_create *r = &k->req;
    if (k->net_mode != SKV__AGENT_NET_CLUSTER)
        return skv_container_spec_set_network(
            spec, k->net_mode == SKV__AGENT_NET_HOST ? SKV_NETWORK_HOST
                                                     : SKV_NETWORK_NONE,
            err);
    int rc = skv_container_spec_set_network(spec, SKV_NETWORK_NONE, err);
    for (size_t i = 0; rc == 0 && i < r->n_cluster_hosts; i++) {
        const skv_proto_cluster_host *h = &r->cluster_hosts[i];
        if (h->hostname && *h->hostname && h->address && *h->address)
            rc = skv_container_spec_add_host(spec, h->hostname, h->address,
                                             err);
    }
    if (rc == 0 && k->ssh_dir)
        rc = skv_container_spec_add_mount(spec, k->ssh_dir, "/root/.ssh",
                                          true, err);
    if (rc == 0 && k->ssh_dir)
        rc = skv_container_spec_add_mount(spec, k->ssh_dir,
                                          "/home/work/.ssh", true, err);
    return rc;
}

static int cluster(skv_container_spec *spec, const skv_proto_kernel_create *r,
                   skv_error *err)
{
    skv_cluster_role roles[ROLES_MAX];
    skv_cluster_info ci = SKV_CLUSTER_INFO_INIT;
    ci.session_id = r->session_id;
    ci.kernel_id = r->kernel_id;
    ci.mode = r->cluster_mode ? r->cluster_mode : "single-node";
    ci.role = r->cluster_role ? r->cluster_role : "main";
    ci.idx = r->cluster_idx ? r->cluster_idx : 1;
    ci.roles = roles;
    ci.n_roles = roles_of(r, roles, ci.role, ci.idx);
    return skv_container_spec_set_cluster(spec, &ci, err);
}

static int limits(skv_container_spec *spec, const skv_agent *a,
                  const skv__agent_kernel *k, skv_error *err)
{
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.cpu_period_us = SKV__AGENT_CPU_PERIOD_US;
    /* quota = cpu * period; cpu is in milli-cores. */
    lim.cpu_quota_us = (uint64_t)k->cpu * SKV__AGENT_CPU_PERIOD_US /
                       SKV_QTY_SCALE;
    if (k->cpu > 0 && lim.cpu_quota_us < 1000)
        lim.cpu_quota_us = 1000;    /* the kernel's smallest quota */
    if (k->cpu == 0)
        lim.cpu_period_us = 0;
    lim.memory_bytes = (uint64_t)k->mem;
    lim.pids_max = SKV__AGENT_PIDS_MAX;
    lim.log_max_bytes = a->log_max_bytes;   /* 0: the runtime's default */
    return skv_container_spec_set_limits(spec, &lim, err);
}

/* Device nodes and mounts the plugins asked for. */
static int plugin_config(skv_container_spec *spec,
                         const skv_container_config *cfg, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && cfg &&
                       i < skv_container_config_device_count(cfg); i++) {
        const char *path = skv_container_config_device_at(cfg, i);
        char host[4096];
        struct stat st;
        rc = skv__sys_path(host, sizeof(host), path, err);
        if (rc == 0 && stat(host, &st) < 0)
            rc = skv__err_sys(err, errno, "accelerator device %s", path);
        if (rc == 0)
            rc = skv_container_spec_add_device(
                spec, path, S_ISBLK(st.st_mode) ? 'b' : 'c',
                major(st.st_rdev), minor(st.st_rdev), "rwm", err);
    }
    for (size_t i = 0; rc == 0 && cfg &&
                       i < skv_container_config_mount_count(cfg); i++) {
        const skv_ccfg_mount *m = skv_container_config_mount_at(cfg, i);
        rc = skv_container_spec_add_mount(
            spec, m->source, m->target, m->flags & SKV_CCFG_MOUNT_READONLY,
            err);
    }
    for (size_t i = 0; rc == 0 && cfg &&
                       i < skv_container_config_env_count(cfg); i++) {
        const char *name, *value;
        skv_container_config_env_at(cfg, i, &name, &value);
        rc = skv_container_spec_set_env(spec, name, value, err);
    }
    return rc;
}

static int basics(skv_container_spec *spec, const skv_proto_kernel_create *r,
                  skv_error *err)
{
    if (!r->image || !*r->image)
        return skv__err(err, SKV_EINVAL, "kernel.create: no image");
    if (r->n_argv == 0)
        return skv__err(err, SKV_EINVAL, "kernel.create: empty argv");
    int rc = skv_container_spec_set_image(spec, r->image, err);
    if (rc == 0)
        rc = skv_container_spec_set_argv(spec, r->n_argv,
                                         (const char *const *)r->argv, err);
    for (size_t i = 0; rc == 0 && i < r->n_env; i++)
        rc = skv_container_spec_set_env(spec, r->env[i].key,
                                        r->env[i].value ? r->env[i].value : "",
                                        err);
    if (rc == 0 && r->workdir && *r->workdir)
        rc = skv_container_spec_set_cwd(spec, r->workdir, err);
    return rc;
}

/* Fractional shares a plugin can only account (no MPS control daemon to
 * enforce them) start only where the session's group allows it: one
 * session could take the whole GPU from the others. */
static int shares_check(const skv_agent *a, const skv__agent_kernel *k,
                        skv_error *err)
{
    const skv_container_config *cfg = skv_node_placement_config(k->pl);
    if (!cfg || k->req.allow_unenforced_shares ||
        !(skv_container_config_flags(cfg) & SKV_CCFG_SHARES_NOT_ENFORCED))
        return 0;
    return skv__err(err, SKV_ENOTSUP, "shares not enforced: agent '%s' cannot "
                    "enforce fractional GPU shares (no MPS control daemon); "
                    "refused (allow with `sokovan admin group update GROUP "
                    "--allow-unenforced-fractions on`)", a->agent_id);
}

/* interleaved: pages round-robin over the session's nodes; otherwise
 * (prefer-single-node) bound to the nodes chosen for it. */
static skv_mempolicy mempolicy(const skv_proto_kernel_create *r)
{
    skv_node_policy p = SKV_NODE_PREFER_SINGLE;
    if (r->numa_policy && *r->numa_policy)
        skv_node_policy_parse(&p, r->numa_policy, NULL);
    return p == SKV_NODE_INTERLEAVED ? SKV_MEMPOLICY_INTERLEAVE
                                     : SKV_MEMPOLICY_BIND;
}

/* On an XML topology the cgroup gets this host's CPUs and nodes at the
 * same ranks, the environment the placement as made (hostmap.c). */
static int cpuset(skv_container_spec *spec, const skv_agent *a,
                  const char *cpus, const char *mems, skv_error *err)
{
    if (!skv__agent_topo_is_xml(a))
        return skv_container_spec_set_cpuset(spec, cpus, mems, err);
    char *hc = NULL, *hm = NULL;
    int rc = skv__agent_host_cpuset(a, cpus, mems, &hc, &hm, err);
    if (rc == 0)
        rc = skv_container_spec_set_env(spec, "SOKOVAN_TOPOLOGY_CPUSET",
                                        cpus ? cpus : "", err);
    if (rc == 0)
        rc = skv_container_spec_set_env(spec, "SOKOVAN_TOPOLOGY_MEMS",
                                        mems ? mems : "", err);
    if (rc == 0)
        rc = skv_container_spec_set_cpuset(spec, hc, hm, err);
    skv_free(hc);
    skv_free(hm);
    return rc;
}

int skv__agent_build_spec(skv_container_spec **out, skv_agent *a,
                          const skv__agent_kernel *k, skv_error *err)
{
    skv_container_spec *spec = NULL;
    int rc = shares_check(a, k, err);
    if (rc)
        return rc;
    rc = skv_container_spec_new(&spec, k->req.kernel_id, err);
    if (rc == 0)
        rc = basics(spec, &k->req, err);
    /* Plugin variables (CUDA_VISIBLE_DEVICES...) win over the request's. */
    if (rc == 0)
        rc = plugin_config(spec, skv_node_placement_config(k->pl), err);
    if (rc == 0)
        rc = cluster(spec, &k->req, err);
    if (rc == 0)
        rc = network(spec, k, err);
    if (rc == 0)
        rc = skv__agent_vf_mounts(spec, &k->req, err);
    if (rc == 0)
        rc = limits(spec, a, k, err);
    /* Whole cores: the placement's; fractional or none: the slice's cores,
     * shared, bounded by the quota. */
    const char *cpus = skv_node_placement_cpuset(k->pl);
    const char *mems = skv_node_placement_mems(k->pl);
    if (rc == 0)
        rc = cpuset(spec, a, *cpus ? cpus : a->slice_cpus,
                    *mems ? mems : NULL, err);
    if (rc == 0 && *mems)
        rc = skv_container_spec_set_mempolicy(spec, mempolicy(&k->req), err);
    if (rc) {
        skv_container_spec_free(spec);
        return rc;
    }
    *out = spec;
    return 0;
}
