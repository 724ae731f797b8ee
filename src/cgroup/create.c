/* Making the directories of a new cgroup, level by level, so each mode can
 * prepare a level (cpuset values, enabled controllers) before the next.
 * Everything made is recorded in the handle for rollback.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

int skv__cg_make(skv_cgroup *cg, const char *dir, const char *ctrl,
                 bool likely_exists, skv_error *err)
{
    char **nm = skv__reallocarray(cg->made, cg->nmade + 1, sizeof(*nm));
    if (!nm)
        return skv__err(err, SKV_ENOMEM, "cgroup rollback list");
    cg->made = nm;
    char **nc = skv__reallocarray(cg->made_ctrl, cg->nmade + 1, sizeof(*nc));
    if (!nc)
        return skv__err(err, SKV_ENOMEM, "cgroup rollback list");
    cg->made_ctrl = nc;
    char *d = skv__strdup(dir), *c = skv__strdup(ctrl);
    if (!d || !c) {
        skv__free(d);
        skv__free(c);
        return skv__err(err, SKV_ENOMEM, "cgroup rollback list");
    }
    int rc = skv__cg_mkdir(dir, ctrl, likely_exists, err);
    if (rc == 1) {
        cg->made[cg->nmade] = d;
        cg->made_ctrl[cg->nmade++] = c;
    } else {
        skv__free(d);
        skv__free(c);
    }
    return rc;
}

int skv__cg_mkdirs_for(skv_cgroup *cg, skv__cg_dir *d, size_t nparts,
                       const char *const *parts,
                       int (*each)(skv_cgroup *cg, const char *dir,
                                   const char *parent, bool made,
                                   bool leaf, skv_error *err),
                       skv_error *err)
{
    /* The start is d->dir without its nparts trailing components. */
    char path[PATH_MAX], parent[PATH_MAX];
    size_t cut = strlen(d->dir);
    for (size_t k = 0; k < nparts; k++)
        cut -= strlen(parts[k]) + 1;
    snprintf(path, sizeof(path), "%.*s", (int)cut, d->dir);
    int rc = each ? each(cg, path, NULL, false, false, err) : 0;
    for (size_t k = 0; rc == 0 && k < nparts; k++) {
        bool leaf = k + 1 == nparts;
        snprintf(parent, sizeof(parent), "%s", path);
        size_t len = strlen(path);
        snprintf(path + len, sizeof(path) - len, "/%s", parts[k]);
        int made = skv__cg_make(cg, path, d->mount.ctrls, !leaf, err);
        if (made < 0)
            return made;
        if (leaf && !made)
            return skv__err(err, SKV_EEXIST, "cgroup %s already exists", path);
        rc = each ? each(cg, path, parent, made == 1, leaf, err) : 0;
    }
    return rc;
}
