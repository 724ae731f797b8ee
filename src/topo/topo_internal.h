/* Internal: the loaded topology. Everything is extracted from hwloc at load
 * time and the hwloc handle is destroyed, so a skv_topo is plain immutable
 * data (safe to read from many threads, no hwloc type leaks out).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TOPO_INTERNAL_H
#define SKV_TOPO_INTERNAL_H

#include <hwloc.h>

#include "skv_internal.h"
#include "sokovan/topo.h"

struct skv_topo {
    char *source;
    skv_topo_numa *numa;        /* ascending id; cpus/cpuset owned */
    size_t nnuma;
    unsigned *numa_dist;        /* nnuma x nnuma, 0 = unknown; may be NULL */
    skv_topo_core *cores;       /* pus owned */
    size_t ncores;
    skv_topo_pu *pus;           /* ascending os_index */
    size_t npus;
    char *cpuset;
    uint64_t memory;
    skv_topo_accel *accels;     /* strings and os_devices owned */
    size_t naccels;
    uint8_t *links;             /* naccels x naccels skv_topo_link */
    uint64_t *nvlink;           /* naccels x naccels MB/s; NULL = none */
};

/* Fill the CPU/memory part of t from a loaded hwloc topology. */
int skv__topo_build_cpus(skv_topo *t, hwloc_topology_t h, skv_error *err);
/* Fill the accelerator part (accels, links, nvlink). */
int skv__topo_build_accels(skv_topo *t, hwloc_topology_t h, skv_error *err);
/* Link level between two hwloc PCI/OS-device objects given their NUMA ids. */
skv_topo_link skv__topo_pci_link(hwloc_obj_t a, hwloc_obj_t b, int numa_a,
                                 int numa_b);
/* NUMA node id local to an object (through its first non-I/O ancestor);
 * -1 when it spans several nodes or none. */
int skv__topo_obj_numa(hwloc_topology_t h, hwloc_obj_t obj);
/* Free the accelerator arrays of t. */
void skv__topo_free_accels(skv_topo *t);

#endif
