/* The container's memory policy (skv_container_spec_set_mempolicy) through
 * libnuma: the node mask is parsed before fork (numa_parse_nodestring
 * allocates), the child sets it with one set_mempolicy call before exec,
 * so the command's pages are bound to, or interleaved over, the nodes the
 * node mapper chose.
 * SPDX-License-Identifier: Apache-2.0 */
#include <numa.h>
#include <numaif.h>

#include "native.h"

int skv__rt_mempolicy_plan(native_plan *p, const skv_container_spec *spec,
                           skv_error *err)
{
    if (spec->mempolicy == SKV_MEMPOLICY_DEFAULT)
        return 0;
    if (!spec->mems)
        return skv__err(err, SKV_EINVAL, "container '%s': a memory policy "
                        "needs the cpuset's memory nodes", spec->id);
    /* Without NUMA support there is one node: binding to it is what the
     * kernel does anyway, interleaving over several cannot be done. */
    if (numa_available() < 0 && spec->mempolicy == SKV_MEMPOLICY_BIND)
        return 0;
    if (numa_available() < 0)
        return skv__err(err, SKV_ENOTSUP, "container '%s': this kernel has "
                        "no NUMA memory policies (libnuma)", spec->id);
    p->mpol_nodes = numa_parse_nodestring(spec->mems);
    if (!p->mpol_nodes)
        return skv__err(err, SKV_EINVAL, "container '%s': memory nodes '%s' "
                        "are not nodes of this host", spec->id, spec->mems);
    p->mpol_mode = spec->mempolicy == SKV_MEMPOLICY_BIND ? MPOL_BIND
                                                         : MPOL_INTERLEAVE;
    return 0;
}

int skv__rt_mempolicy_apply(const native_plan *p)
{
    if (!p->mpol_nodes)
        return 0;
    return (int)set_mempolicy(p->mpol_mode, p->mpol_nodes->maskp,
                              p->mpol_nodes->size + 1);
}

void skv__rt_mempolicy_free(native_plan *p)
{
    if (p->mpol_nodes)
        numa_bitmask_free(p->mpol_nodes);
    p->mpol_nodes = NULL;
}
