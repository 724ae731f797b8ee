/* Device allow-list entry point: validating the rules, adding the standard
 * container devices, and handing the list to the eBPF program builder
 * (v2_devices.c) for the cgroup's unified directory. v1 hosts filter
 * devices with the v1 "devices" controller instead (the runtime writes
 * devices.allow there); this file is for hosts without it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

#define SKV__CG_DEV_MAX_RULES 1024 /* keeps the program far below the
                                      kernel's instruction limit */

/* What every container's minimal /dev needs (the runtime creates these
 * nodes; /dev/ptmx is the devpts instance's 5:2). /dev/console (5:1) is
 * not in the list: the runtime gives containers no console. */
static const skv_cgroup_device std_devices[] = {
    {'c', 1, 3, "rwm"},   /* null */
    {'c', 1, 5, "rwm"},   /* zero */
    {'c', 1, 7, "rwm"},   /* full */
    {'c', 1, 8, "rwm"},   /* random */
    {'c', 1, 9, "rwm"},   /* urandom */
    {'c', 5, 0, "rwm"},   /* tty */
    {'c', 5, 2, "rwm"},   /* ptmx */
    {'c', 136, -1, "rwm"}, /* pts */
};

static int check_rule(const skv_cgroup_device *d, size_t i, skv_error *err)
{
    if (d->type != 'c' && d->type != 'b')
        return skv__err(err, SKV_EINVAL,
                        "device rule %zu: type '%c' is not 'c' or 'b'", i,
                        d->type ? d->type : '?');
    if (d->major < -1 || d->major > 4095)
        return skv__err(err, SKV_ERANGE,
                        "device rule %zu: major %lld outside 0..4095 (-1: any)",
                        i, (long long)d->major);
    if (d->minor < -1 || d->minor > 1048575)
        return skv__err(err, SKV_ERANGE,
                        "device rule %zu: minor %lld outside 0..1048575 "
                        "(-1: any)", i, (long long)d->minor);
    size_t len = d->access ? strlen(d->access) : 0;
    if (len == 0 || len > 3 || strspn(d->access, "rwm") != len)
        return skv__err(err, SKV_EINVAL,
                        "device rule %zu: access '%s' is not a non-empty "
                        "subset of \"rwm\"", i,
                        d->access ? d->access : "(null)");
    for (size_t k = 0; k + 1 < len; k++)
        if (strchr(d->access + k + 1, d->access[k]))
            return skv__err(err, SKV_EINVAL,
                            "device rule %zu: access '%s' repeats '%c'", i,
                            d->access, d->access[k]);
    return 0;
}

/* The standard set followed by the caller's rules, in a new array. */
static int full_list(skv_cgroup_device **out, size_t *count,
                     const skv_cgroup_device *allow, size_t n, skv_error *err)
{
    size_t nstd = SKV__ARRAY_LEN(std_devices);
    skv_cgroup_device *v = skv__calloc(nstd + n, sizeof(*v));
    if (!v)
        return skv__err(err, SKV_ENOMEM, "device allow-list");
    memcpy(v, std_devices, sizeof(std_devices));
    if (n)
        memcpy(v + nstd, allow, n * sizeof(*allow));
    *out = v;
    *count = nstd + n;
    return 0;
}

int skv__cgroup_devices_set(skv_cgroup *cg, const skv_cgroup_device *allow,
                            size_t n, skv_error *err)
{
    if (!cg || (n && !allow))
        return skv__err(err, SKV_EINVAL, "cgroup devices: NULL argument");
    if (n > SKV__CG_DEV_MAX_RULES)
        return skv__err(err, SKV_ERANGE, "cgroup devices: %zu rules (max %d)",
                        n, SKV__CG_DEV_MAX_RULES);
    for (size_t i = 0; i < n; i++) {
        int rc = check_rule(&allow[i], i, err);
        if (rc < 0)
            return rc;
    }
    const skv__cg_dir *u = skv__cg_find(cg, "unified");
    if (!u)
        return skv__err(err, SKV_ENOTSUP,
                        "cgroup %s has no cgroup2 directory for an eBPF "
                        "device filter (v1 host: use the devices controller)",
                        cg->rel);
    skv_cgroup_device *list = NULL;
    size_t count = 0;
    int fd = -1;
    int rc = full_list(&list, &count, allow, n, err);
    if (rc == 0) {
        rc = skv__cg_bpf_devices_attach(&fd, u->dir, list, count, err);
        skv__free(list);
    }
    if (rc < 0) {
        skv__err_prefix(err, "cgroup %s device allow-list", cg->rel);
        return rc;
    }
    /* The new program is in place; both allow-lists apply (all attached
     * programs must agree) until the old one goes, so nothing widens. */
    if (cg->dev_filtered)
        skv__cg_bpf_devices_detach(cg->dev_prog_fd, u->dir);
    cg->dev_prog_fd = fd;
    cg->dev_filtered = true;
    return 0;
}

bool skv__cgroup_devices_filtered(const skv_cgroup *cg)
{
    return cg && cg->dev_filtered;
}
