/* PCIe proximity of two I/O objects, by walking their ancestor chains
 * (hwloc's common-ancestor helper does not handle I/O objects).
 * SPDX-License-Identifier: Apache-2.0 */
#include "topo_internal.h"

#define CHAIN_MAX 64

static size_t chain_of(hwloc_obj_t o, hwloc_obj_t *arr)
{
    size_t n = 0;
    for (; o && n < CHAIN_MAX; o = o->parent)
        arr[n++] = o;
    return n;
}

static size_t bridges_between(hwloc_obj_t *chain, size_t upto)
{
    size_t k = 0;
    for (size_t i = 1; i < upto; i++)
        if (chain[i]->type == HWLOC_OBJ_BRIDGE)
            k++;
    return k;
}

/* Position of the first common ancestor in each chain; 0 when none. */
static int find_common(hwloc_obj_t *ca, size_t na, hwloc_obj_t *cb, size_t nb,
                       size_t *ia, size_t *ib)
{
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (ca[i] == cb[j]) {
                *ia = i;
                *ib = j;
                return 1;
            }
    return 0;
}

skv_topo_link skv__topo_pci_link(hwloc_obj_t a, hwloc_obj_t b, int numa_a,
                                 int numa_b)
{
    hwloc_obj_t ca[CHAIN_MAX], cb[CHAIN_MAX];
    size_t na = chain_of(a, ca), nb = chain_of(b, cb), i, j;
    if (a == b)
        return SKV_TOPO_LINK_SELF;
    if (find_common(ca, na, cb, nb, &i, &j)) {
        hwloc_obj_t c = ca[i];
        if (c->type == HWLOC_OBJ_BRIDGE &&
            c->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
            return SKV_TOPO_LINK_PHB;
        if (c->type == HWLOC_OBJ_BRIDGE)
            return bridges_between(ca, i) <= 1 && bridges_between(cb, j) <= 1
                       ? SKV_TOPO_LINK_PIX
                       : SKV_TOPO_LINK_PXB;
        if (c->type == HWLOC_OBJ_PCI_DEVICE)
            return SKV_TOPO_LINK_PIX; /* one device below the other */
    }
    /* Met on the CPU side of the host bridges. */
    return numa_a >= 0 && numa_a == numa_b ? SKV_TOPO_LINK_NODE
                                           : SKV_TOPO_LINK_SYS;
}

int skv__topo_obj_numa(hwloc_topology_t h, hwloc_obj_t obj)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, obj);
    if (!anc || !anc->nodeset)
        return -1;
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return -1;
    hwloc_bitmap_and(b, anc->nodeset, hwloc_topology_get_allowed_nodeset(h));
    int id = hwloc_bitmap_weight(b) == 1 ? hwloc_bitmap_first(b) : -1;
    hwloc_bitmap_free(b);
    return id;
}
