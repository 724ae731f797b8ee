/* Hybrid mode: v1 hierarchies carry every limit and statistic; the
 * container also gets a directory in the (controller-less) unified
 * hierarchy, which tracks its processes and offers cgroup.kill. When that
 * directory cannot be made, the cgroup works as plain v1.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

static int hybrid_create(skv_cgroup *cg, const char *const *parts,
                         size_t nparts, skv_error *err)
{
    int rc = skv__cg_v1_create(cg, parts, nparts, err);
    if (rc < 0)
        return rc;
    skv__cg_dir *u = cg->n ? &cg->d[cg->n - 1] : NULL;
    if (!u || !u->mount.v2)
        return 0;
    skv_error e = SKV_ERROR_INIT;
    rc = skv__cg_mkdirs_for(cg, u, nparts, parts, NULL, &e);
    if (rc == SKV_EEXIST) {
        if (err)
            *err = e;
        return rc;
    }
    if (rc < 0) {
        /* Not usable (read-only, not delegated): track through v1 only. */
        skv__log(SKV_LOG_WARN, "cgroup", "unified hierarchy unusable: %s",
                 e.message);
        skv__free(u->dir);
        memset(u, 0, sizeof(*u));
        cg->n--;
    }
    return 0;
}

const skv__cg_ops skv__cg_ops_hybrid = {
    SKV_CGROUP_MODE_HYBRID, hybrid_create, skv__cg_v1_apply, skv__cg_v1_stats,
    skv__cg_v1_freeze,
};
