/* Container spec: devices, bind mounts, seccomp/capability edits and the
 * session/cluster environment.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "rt_internal.h"
#include "skv_caps.h"

int skv_container_spec_add_device(skv_container_spec *spec, const char *path,
                                  char type, uint32_t major, uint32_t minor,
                                  const char *access, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = skv__rt_check_abs_path(path, "device path", err);
    if (rc < 0)
        return rc;
    if (strncmp(path, "/dev/", 5) != 0 || path[5] == '\0')
        return skv__err(err, SKV_EINVAL, "device path '%s' is not under /dev/",
                        path);
    if (type != 'c' && type != 'b')
        return skv__err(err, SKV_EINVAL, "device '%s': type must be 'c' or "
                        "'b'", path);
    if (major > 4095 || minor > 1048575)
        return skv__err(err, SKV_ERANGE, "device '%s': %u:%u is out of range",
                        path, major, minor);
    size_t alen = access ? strlen(access) : 0;
    if (alen == 0 || alen > 3 || strspn(access, "rwm") != alen)
        return skv__err(err, SKV_EINVAL, "device '%s': access '%s' is not a "
                        "subset of \"rwm\"", path, access ? access : "(null)");
    skv__rt_device *v = skv__reallocarray(spec->devices, spec->n_devices + 1,
                                          sizeof(*v));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "device '%s'", path);
    spec->devices = v;
    skv__rt_device *d = &v[spec->n_devices];
    if (!(d->path = skv__strdup(path)))
        return skv__err(err, SKV_ENOMEM, "device '%s'", path);
    d->type = type;
    d->major = major;
    d->minor = minor;
    memcpy(d->access, access, alen + 1);
    spec->n_devices++;
    return 0;
}

int skv_container_spec_add_mount(skv_container_spec *spec,
                                 const char *host_path,
                                 const char *container_path, bool readonly,
                                 skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = skv__rt_check_abs_path(host_path, "mount source", err);
    if (rc == 0)
        rc = skv__rt_check_abs_path(container_path, "mount target", err);
    if (rc < 0)
        return rc;
    if (strcmp(container_path, "/") == 0)
        return skv__err(err, SKV_EINVAL, "mount target '/' is not allowed");
    skv__rt_mount *v = skv__reallocarray(spec->mounts, spec->n_mounts + 1,
                                         sizeof(*v));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "mount '%s'", container_path);
    spec->mounts = v;
    skv__rt_mount *m = &v[spec->n_mounts];
    m->host = skv__strdup(host_path);
    m->target = skv__strdup(container_path);
    m->readonly = readonly;
    if (!m->host || !m->target) {
        skv__free(m->host);
        skv__free(m->target);
        return skv__err(err, SKV_ENOMEM, "mount '%s'", container_path);
    }
    spec->n_mounts++;
    return 0;
}

int skv_container_spec_add_syscall(skv_container_spec *spec,
                                   const char *syscall, bool allow,
                                   skv_error *err)
{
    if (!spec || !syscall || !*syscall || strlen(syscall) > 64)
        return skv__err(err, SKV_EINVAL, "syscall name is missing or too long");
    for (const char *p = syscall; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return skv__err(err, SKV_EINVAL, "syscall name '%s' is invalid",
                            syscall);
    skv__rt_syscall *v = skv__reallocarray(spec->syscalls,
                                           spec->n_syscalls + 1, sizeof(*v));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "syscall '%s'", syscall);
    spec->syscalls = v;
    if (!(v[spec->n_syscalls].name = skv__strdup(syscall)))
        return skv__err(err, SKV_ENOMEM, "syscall '%s'", syscall);
    v[spec->n_syscalls++].allow = allow;
    return 0;
}

int skv_container_spec_add_cap(skv_container_spec *spec, const char *cap,
                               skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int num;
    int rc = skv__caps_parse(&num, cap ? cap : "", err);
    if (rc < 0)
        return rc;
    char **v = skv__reallocarray(spec->caps, spec->n_caps + 1, sizeof(char *));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "capability '%s'", cap);
    spec->caps = v;
    if (!(v[spec->n_caps] = skv__strdup(cap)))
        return skv__err(err, SKV_ENOMEM, "capability '%s'", cap);
    spec->n_caps++;
    return 0;
}

int skv_container_spec_add_host(skv_container_spec *spec, const char *name,
                                const char *ip, skv_error *err)
{
    if (!spec || !name || !ip)
        return skv__err(err, SKV_EINVAL, "add_host: NULL argument");
    size_t n = strlen(name);
    if (n == 0 || n > 63 || name[0] == '.' || name[0] == '-' ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789.-") != n)
        return skv__err(err, SKV_EINVAL, "host name '%s' must have 1..63 of "
                        "[A-Za-z0-9.-] and not start with '.' or '-'", name);
    unsigned char bin[16];
    if (inet_pton(AF_INET, ip, bin) != 1 && inet_pton(AF_INET6, ip, bin) != 1)
        return skv__err(err, SKV_EINVAL, "host '%s': '%s' is not an IPv4 or "
                        "IPv6 address", name, ip);
    char **v = skv__reallocarray(spec->hosts, spec->n_hosts + 1,
                                 sizeof(char *));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "host '%s'", name);
    spec->hosts = v;
    if (!(v[spec->n_hosts] = skv__asprintf("%s\t%s\n", ip, name)))
        return skv__err(err, SKV_ENOMEM, "host '%s'", name);
    spec->n_hosts++;
    return 0;
}

static int check_cluster(const skv_cluster_info *ci, unsigned *size,
                         skv_error *err)
{
    if (ci->version != SKV_CLUSTER_INFO_VERSION)
        return skv__err(err, SKV_EVERSION, "cluster info version %u, expected "
                        "%u", ci->version, SKV_CLUSTER_INFO_VERSION);
    if (!ci->session_id || !*ci->session_id || !ci->kernel_id ||
        !*ci->kernel_id)
        return skv__err(err, SKV_EINVAL, "cluster info: session_id and "
                        "kernel_id are required");
    if (!ci->mode || (strcmp(ci->mode, "single-node") != 0 &&
                      strcmp(ci->mode, "multi-node") != 0))
        return skv__err(err, SKV_EINVAL, "cluster mode '%s' is not "
                        "single-node or multi-node", ci->mode ? ci->mode : "");
    if (!ci->roles || ci->n_roles == 0 || ci->n_roles > 64 || !ci->role)
        return skv__err(err, SKV_EINVAL, "cluster info needs 1..64 roles and "
                        "this kernel's role");
    bool found = false;
    *size = 0;
    for (size_t i = 0; i < ci->n_roles; i++) {
        const char *n = ci->roles[i].name;
        if (!n || !*n || strlen(n) > 32 || strspn(n, "abcdefghijklmnopqrstuvwxyz"
                                                  "0123456789") != strlen(n) ||
            n[0] < 'a' || ci->roles[i].count == 0 ||
            ci->roles[i].count > 100000)
            return skv__err(err, SKV_EINVAL, "cluster role %zu ('%s') needs a "
                            "name [a-z][a-z0-9]* and a count 1..100000", i,
                            n ? n : "");
        *size += ci->roles[i].count;
        if (strcmp(n, ci->role) == 0) {
            found = true;
            if (ci->idx < 1 || ci->idx > ci->roles[i].count)
                return skv__err(err, SKV_ERANGE, "cluster idx %u is outside "
                                "1..%u of role '%s'", ci->idx,
                                ci->roles[i].count, n);
        }
    }
    if (!found)
        return skv__err(err, SKV_EINVAL, "cluster role '%s' is not among the "
                        "roles", ci->role);
    return 0;
}

/* Appends "sep item" to a growing string; NULL on allocation failure. */
static char *append(char *s, const char *sep, const char *item)
{
    char *n = skv__asprintf("%s%s%s", s ? s : "", s && *s ? sep : "", item);
    skv__free(s);
    return n;
}

/* hosts "main1,sub1,sub2", replicas "main:1,sub:2", local rank of ci. */
static int cluster_strings(const skv_cluster_info *ci, char **hosts,
                           char **replicas, unsigned *rank)
{
    char *h = skv__strdup(""), *r = skv__strdup("");
    unsigned seen = 0;
    for (size_t i = 0; i < ci->n_roles && h && r; i++) {
        char item[64];
        snprintf(item, sizeof(item), "%s:%u", ci->roles[i].name,
                 ci->roles[i].count);
        r = append(r, ",", item);
        for (unsigned k = 1; k <= ci->roles[i].count && h; k++) {
            snprintf(item, sizeof(item), "%s%u", ci->roles[i].name, k);
            h = append(h, ",", item);
        }
        if (strcmp(ci->roles[i].name, ci->role) == 0)
            *rank = seen + ci->idx - 1;
        seen += ci->roles[i].count;
    }
    if (!h || !r) {
        skv__free(h);
        skv__free(r);
        return SKV_ENOMEM;
    }
    *hosts = h;
    *replicas = r;
    return 0;
}

int skv_container_spec_set_cluster(skv_container_spec *spec,
                                   const skv_cluster_info *ci, skv_error *err)
{
    if (!spec || !ci)
        return skv__err(err, SKV_EINVAL, "spec or cluster info is NULL");
    unsigned size = 0, rank = 0;
    int rc = check_cluster(ci, &size, err);
    if (rc < 0)
        return rc;
    char *hosts = NULL, *replicas = NULL;
    if (cluster_strings(ci, &hosts, &replicas, &rank) < 0)
        return skv__err(err, SKV_ENOMEM, "cluster variables");
    char host[48], sz[16], idx[16], rk[16];
    snprintf(host, sizeof(host), "%s%u", ci->role, ci->idx);
    snprintf(sz, sizeof(sz), "%u", size);
    snprintf(idx, sizeof(idx), "%u", ci->idx);
    snprintf(rk, sizeof(rk), "%u", rank);
    const char *vals[][2] = {
        {"SESSION_ID", ci->session_id}, {"KERNEL_ID", ci->kernel_id},
        {"CLUSTER_MODE", ci->mode},     {"CLUSTER_SIZE", sz},
        {"CLUSTER_ROLE", ci->role},     {"CLUSTER_IDX", idx},
        {"CLUSTER_LOCAL_RANK", rk},     {"CLUSTER_HOST", host},
        {"CLUSTER_HOSTS", hosts},       {"CLUSTER_REPLICAS", replicas},
    };
    /* Both prefixes so Backend.AI images work unchanged. A failure part-way
     * leaves some variables set; the message says which one failed. */
    for (size_t i = 0; rc == 0 && i < SKV__ARRAY_LEN(vals); i++) {
        char name[64];
        snprintf(name, sizeof(name), "SOKOVAN_%s", vals[i][0]);
        rc = skv_container_spec_set_env(spec, name, vals[i][1], err);
        snprintf(name, sizeof(name), "BACKENDAI_%s", vals[i][0]);
        if (rc == 0)
            rc = skv_container_spec_set_env(spec, name, vals[i][1], err);
    }
    if (rc == 0)
        memcpy(spec->hostname, host, strlen(host) + 1);
    skv__free(hosts);
    skv__free(replicas);
    return rc;
}
