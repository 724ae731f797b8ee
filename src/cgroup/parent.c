/* The common parent of the container cgroups ("sokovan" unless configured)
 * as one budget: every container's own limits sit below it, and limits on
 * the parent bound all of them together, so that however many containers
 * exhaust their own share, the host and its daemons keep tasks, memory and
 * CPU for themselves.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

/* "a/b/c" -> parent "a/b" (into buf), name "c"; "c" -> "", "c". */
static int split_last(const char *path, char *buf, size_t n,
                      const char **name, skv_error *err)
{
    size_t len = strlen(path);
    if (len == 0 || len >= n || path[0] == '/' || path[len - 1] == '/')
        return skv__err(err, SKV_EINVAL, "cgroup parent '%s': not a "
                        "relative path below the root", path);
    memcpy(buf, path, len + 1);
    char *slash = strrchr(buf, '/');
    if (!slash) {
        *name = path;
        buf[0] = '\0';
        return 0;
    }
    *slash = '\0';
    *name = path + (slash - buf) + 1;
    return 0;
}

int skv__cgroup_parent_limit(const skv_cgroup_config *cfg,
                             const skv_cgroup_limits *lim, skv_error *err)
{
    if (!cfg || !lim)
        return skv__err(err, SKV_EINVAL, "cgroup parent limit: NULL "
                        "argument");
    if (lim->cpus || lim->mems)
        return skv__err(err, SKV_EINVAL, "cgroup parent limit: cpus/mems "
                        "are set per container");
    char up[PATH_MAX];
    const char *name = NULL;
    int rc = skv__cg_limits_check(lim, err);
    if (rc < 0)
        return rc;
    rc = split_last(cfg->parent ? cfg->parent : "sokovan", up,
                        sizeof(up), &name, err);
    if (rc < 0)
        return rc;
    skv_cgroup_config c = *cfg;
    c.parent = up;
    skv_cgroup *cg = NULL;
    /* Usually there already (containers made it); else made here, in
     * every hierarchy, with the controllers enabled above it (v2). */
    rc = skv__cgroup_open(&cg, &c, name, err);
    if (rc == SKV_ENOENT)
        rc = skv__cgroup_create(&cg, &c, name, err);
    if (rc == 0)
        rc = skv__cgroup_apply(cg, lim, err);
    if (rc < 0)
        skv__err_prefix(err, "limits of the containers' parent cgroup '%s'",
                        cfg->parent ? cfg->parent : "sokovan");
    skv__cgroup_free(cg);
    return rc;
}
