/* Device allow-list. v1 and hybrid hosts: the v1 "devices" controller;
 * deny everything, then allow the minimal /dev set and the granted nodes
 * with their access. cgroup v2 hosts: the same list as an eBPF device
 * program attached to the cgroup (skv__cgroup_devices_set). With either in
 * place a container keeps Docker's default CAP_MKNOD: a node it creates
 * for another device cannot be made or opened. Where neither is possible
 * (a v2 host refusing eBPF to the agent) the runtime drops CAP_MKNOD.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "native.h"

static const char *const default_allow[] = {
    "c 1:3 rwm",   /* null */
    "c 1:5 rwm",   /* zero */
    "c 1:7 rwm",   /* full */
    "c 1:8 rwm",   /* random */
    "c 1:9 rwm",   /* urandom */
    "c 5:0 rwm",   /* tty */
    "c 5:2 rwm",   /* ptmx */
    "c 136:* rwm", /* pts */
};

static int write_rule(const char *dir, const char *file, const char *rule,
                      skv_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return skv__sys_write(path, rule, err);
}

bool skv__rt_devices_supported(const skv_cgroup *cg)
{
    return skv__cgroup_dir(cg, "devices") != NULL ||
           skv__cgroup_devices_filtered(cg);
}

/* cgroup v2: the granted devices (plus 'm', as below) on top of the
 * standard set the cgroup module always allows. Without eBPF privileges
 * the container runs unfiltered, without CAP_MKNOD, as before. */
static int bpf_apply(skv_cgroup *cg, const skv_container_spec *spec,
                     skv_error *err)
{
    if (skv__cgroup_mode(cg) != SKV_CGROUP_MODE_V2)
        return 0;
    skv_cgroup_device *v = NULL;
    char (*acc)[5] = NULL;
    if (spec->n_devices &&
        (!(v = skv__calloc(spec->n_devices, sizeof(*v))) ||
         !(acc = skv__calloc(spec->n_devices, sizeof(*acc))))) {
        skv__free(v);
        return skv__err(err, SKV_ENOMEM, "device allow-list");
    }
    for (size_t i = 0; i < spec->n_devices; i++) {
        const skv__rt_device *d = &spec->devices[i];
        snprintf(acc[i], sizeof(acc[i]), "%s%s", d->access,
                 strchr(d->access, 'm') ? "" : "m");
        v[i] = (skv_cgroup_device){d->type, d->major, d->minor, acc[i]};
    }
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__cgroup_devices_set(cg, v, spec->n_devices, &e);
    skv__free(v);
    skv__free(acc);
    if (rc == SKV_ENOTSUP) {
        skv__log(SKV_LOG_WARN, "runtime", "%s; dropping CAP_MKNOD instead",
                 e.message);
        return 0;
    }
    if (rc < 0 && err)
        *err = e;
    return rc;
}

int skv__rt_devices_apply(skv_cgroup *cg, const skv_container_spec *spec,
                          skv_error *err)
{
    const char *dir = skv__cgroup_dir(cg, "devices");
    if (!dir)
        return bpf_apply(cg, spec, err);
    int rc = write_rule(dir, "devices.deny", "a", err);
    for (size_t i = 0; rc == 0 && i < SKV__ARRAY_LEN(default_allow); i++)
        rc = write_rule(dir, "devices.allow", default_allow[i], err);
    for (size_t i = 0; rc == 0 && i < spec->n_devices; i++) {
        const skv__rt_device *d = &spec->devices[i];
        char rule[64];
        /* 'm' lets the setup create the node inside the cgroup; making
         * another node of an already granted device adds no access. */
        snprintf(rule, sizeof(rule), "%c %u:%u %s%s", d->type, d->major,
                 d->minor, d->access, strchr(d->access, 'm') ? "" : "m");
        rc = write_rule(dir, "devices.allow", rule, err);
    }
    if (rc < 0)
        skv__err_prefix(err, "device allow-list");
    return rc;
}
