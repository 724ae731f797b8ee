/* Device allow-list for the v1 "devices" controller (v1 and hybrid hosts):
 * deny everything, then allow the minimal /dev set and the granted nodes
 * with their access. With it in place a container keeps Docker's default
 * CAP_MKNOD: a node it creates for another device cannot be opened.
 * cgroup v2 needs an eBPF device program instead, which is not written
 * here; there the runtime drops CAP_MKNOD (native_plan.c).
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
    return skv__cgroup_dir(cg, "devices") != NULL;
}

int skv__rt_devices_apply(skv_cgroup *cg, const skv_container_spec *spec,
                          skv_error *err)
{
    const char *dir = skv__cgroup_dir(cg, "devices");
    if (!dir)
        return 0;
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
