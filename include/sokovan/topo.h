/*
 * sokovan/topo.h - the machine's hardware topology: NUMA nodes, cores, PUs,
 * accelerators and how close accelerators are to each other.
 *
 * A topology is loaded once (from the live machine, an hwloc XML file or
 * buffer, or an hwloc synthetic description) and is immutable afterwards.
 * Only allowed (online, not excluded by the cpuset/nodeset the process may
 * use) PUs, cores and NUMA nodes are listed; disallowed ones are dropped.
 *
 * Every pointer returned by a getter (structures, strings, arrays) is
 * borrowed: it stays valid until skv_topo_free(). The info structures only
 * grow at the end in later versions; never allocate them yourself.
 *
 * Thread-safety: a loaded topology is immutable, so any number of threads
 * may read it at once. Loading is independent per topology object.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_TOPO_H
#define SOKOVAN_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_topo skv_topo;

/* A NUMA node (memory domain). */
typedef struct skv_topo_numa {
    int id;                 /* OS index (the N of /sys/.../nodeN) */
    uint64_t memory_bytes;  /* local memory; 0 when unknown */
    const int *cpus;        /* allowed PU OS indexes on this node, ascending */
    size_t ncpus;
    const char *cpuset;     /* the same as a list string, "0-3,8" ("" if none) */
} skv_topo_numa;

/* A core (one or more hardware threads). */
typedef struct skv_topo_core {
    size_t index;           /* position in skv_topo_core_at() order */
    int os_index;           /* core OS index (may repeat across packages) */
    int package;            /* package OS index; -1 when unknown */
    int numa_node;          /* local NUMA node id; -1 when none/unknown */
    const int *pus;         /* allowed PU OS indexes of this core, ascending */
    size_t npus;
} skv_topo_core;

/* A processing unit (hardware thread, "CPU" to the kernel). */
typedef struct skv_topo_pu {
    int os_index;           /* the CPU number used by cpusets */
    size_t core;            /* index of its core in skv_topo_core_at() */
    int numa_node;          /* local NUMA node id; -1 when none/unknown */
} skv_topo_pu;

/* An accelerator: a PCI device of a GPU/accelerator class, or a PCI device
 * carrying GPU/co-processor OS devices (NVML, CUDA, OpenCL, DRM ...). */
typedef struct skv_topo_accel {
    size_t index;               /* position in skv_topo_accel_at() order */
    const char *name;           /* main OS device name ("nvml0", "cuda0",
                                   "opencl0d0", "card0") or "pci:<busid>" */
    const char *const *os_devices; /* every OS device name below it */
    size_t nos_devices;
    const char *pci_bus_id;     /* "0000:34:00.0"; "" when not a PCI device */
    unsigned vendor_id;         /* PCI vendor (0x10de NVIDIA); 0 unknown */
    unsigned device_id;         /* PCI device id; 0 unknown */
    unsigned pci_class;         /* PCI class and subclass (0x0302); 0 unknown */
    int numa_node;              /* local NUMA node id; -1 when unknown */
    uint64_t memory_bytes;      /* device memory when hwloc reports it, else 0 */
    const char *vendor;         /* "NVIDIA Corporation" or "" */
    const char *model;          /* "Tesla V100-SXM3-32GB-H" or "" */
    const char *uuid;           /* "GPU-d397..." or "" */
    int compute;                /* 1 when usable for compute: it has an NVML,
                                   CUDA, OpenCL, ROCm or Level Zero OS device,
                                   or its PCI class is 3D controller (0x0302)
                                   or processing accelerator (0x12xx) */
    int nvml_index;             /* N of "nvmlN"; -1 when none */
    int cuda_index;             /* N of "cudaN"; -1 when none */
} skv_topo_accel;

/* Proximity of two accelerators over PCIe, closest first (the same scale as
 * `nvidia-smi topo -m`). */
typedef enum skv_topo_link {
    SKV_TOPO_LINK_SELF = 0, /* the same device */
    SKV_TOPO_LINK_PIX = 1,  /* behind the same PCIe switch: at most one
                               bridge between each device and the switch */
    SKV_TOPO_LINK_PXB = 2,  /* several PCIe bridges, no host bridge crossed */
    SKV_TOPO_LINK_PHB = 3,  /* same PCIe host bridge */
    SKV_TOPO_LINK_NODE = 4, /* different host bridges, same NUMA node */
    SKV_TOPO_LINK_SYS = 5   /* across NUMA nodes / the system interconnect */
} skv_topo_link;

/* "self", "pix", "pxb", "phb", "node", "sys"; "?" for others. */
SKV_EXTERN const char *skv_topo_link_name(skv_topo_link link);

/* ---- loading ------------------------------------------------------------ */

/* The live machine, through hwloc (with PCI and OS devices). hwloc reads the
 * real /sys and /proc: when a system root other than "/" is set
 * (skv_sysroot_set) this fails with SKV_ENOTSUP; load an XML instead. */
SKV_EXTERN int skv_topo_load_live(skv_topo **out, skv_error *err);
/* An hwloc XML file (version 1 or 2 format, as written by lstopo).
 * Missing file: SKV_ENOENT; unreadable or malformed: SKV_EINVAL. */
SKV_EXTERN int skv_topo_load_xml(skv_topo **out, const char *path,
                                 skv_error *err);
/* An hwloc XML document in memory (len bytes, NUL not required). */
SKV_EXTERN int skv_topo_load_xml_buffer(skv_topo **out, const char *buf,
                                        size_t len, skv_error *err);
/* An hwloc synthetic description, e.g. "pack:2 numa:1 core:4 pu:2"
 * (see hwloc's documentation). Malformed: SKV_EINVAL. */
SKV_EXTERN int skv_topo_load_synthetic(skv_topo **out, const char *description,
                                       skv_error *err);
SKV_EXTERN void skv_topo_free(skv_topo *topo);

/* Where it came from: "live", "xml:<path>", "xml-buffer", "synthetic:<desc>". */
SKV_EXTERN const char *skv_topo_source(const skv_topo *topo);

/* ---- CPUs and memory ---------------------------------------------------- */

/* NUMA nodes in ascending id order. _at returns NULL past the end;
 * _find returns NULL for an id that is not (allowed) in the topology. */
SKV_EXTERN size_t skv_topo_numa_count(const skv_topo *topo);
SKV_EXTERN const skv_topo_numa *skv_topo_numa_at(const skv_topo *topo,
                                                 size_t index);
SKV_EXTERN const skv_topo_numa *skv_topo_numa_find(const skv_topo *topo,
                                                   int id);
/* Relative memory latency between two NUMA nodes as the OS reports it
 * (10 = local, as in the ACPI SLIT); 0 when unknown or an id is absent. */
SKV_EXTERN unsigned skv_topo_numa_distance(const skv_topo *topo, int from,
                                           int to);

/* Cores in topology order (by package, then core). NULL past the end. */
SKV_EXTERN size_t skv_topo_core_count(const skv_topo *topo);
SKV_EXTERN const skv_topo_core *skv_topo_core_at(const skv_topo *topo,
                                                 size_t index);
/* PUs in ascending OS index order. _find: NULL when absent or disallowed. */
SKV_EXTERN size_t skv_topo_pu_count(const skv_topo *topo);
SKV_EXTERN const skv_topo_pu *skv_topo_pu_at(const skv_topo *topo,
                                             size_t index);
SKV_EXTERN const skv_topo_pu *skv_topo_pu_find(const skv_topo *topo,
                                               int os_index);
/* Every allowed PU as a list string ("0-3,5,12-15"). Borrowed. */
SKV_EXTERN const char *skv_topo_cpuset(const skv_topo *topo);
/* Total memory of all allowed NUMA nodes in bytes. */
SKV_EXTERN uint64_t skv_topo_memory_bytes(const skv_topo *topo);

/* ---- accelerators ------------------------------------------------------- */

/* Accelerators in PCI bus id order (then OS device name). NULL past end. */
SKV_EXTERN size_t skv_topo_accel_count(const skv_topo *topo);
SKV_EXTERN const skv_topo_accel *skv_topo_accel_at(const skv_topo *topo,
                                                   size_t index);
/* Find by any OS device name ("nvml3", "cuda0"), by PCI bus id
 * ("0000:34:00.0", case-insensitive) or by main name. NULL when absent. */
SKV_EXTERN const skv_topo_accel *skv_topo_accel_find(const skv_topo *topo,
                                                     const char *key);
/* The device-slot prefix of an accelerator's vendor: "cuda" for NVIDIA (PCI
 * vendor 0x10de, or an NVML or CUDA OS device), "rocm" for AMD (0x1002, or
 * an RSMI OS device); NULL for any other vendor. An AMD GPU with only an
 * OpenCL OS device is "rocm", never "cuda". */
SKV_EXTERN const char *skv_topo_accel_prefix(const skv_topo_accel *a);
/* PCIe proximity of accelerators a and b (indexes). Indexes past the end
 * read as SKV_TOPO_LINK_SYS. */
SKV_EXTERN skv_topo_link skv_topo_accel_link(const skv_topo *topo, size_t a,
                                             size_t b);
/* NVLink bandwidth in MB/s between accelerators a and b, from hwloc's
 * "NVLinkBandwidth" distance matrix: the direct links plus, when both reach
 * NVSwitches, the smaller of their total bandwidths to the switches.
 * 0 when there is no NVLink information, a == b, or an index is invalid. */
SKV_EXTERN uint64_t skv_topo_accel_nvlink_bw(const skv_topo *topo, size_t a,
                                             size_t b);

/* ---- CPU list strings ("0-3,8,10-11") ----------------------------------- */

/* Format ascending or unsorted, possibly repeated, non-negative ids as a
 * canonical list string (sorted, ranges merged); free with skv_free.
 * An empty list gives "". Negative ids: SKV_EINVAL. */
SKV_EXTERN int skv_topo_cpulist_format(char **out, const int *ids, size_t n,
                                       skv_error *err);
/* Parse a list string ("0-3,8", "", spaces around tokens allowed) into a
 * new sorted, duplicate-free array (free with skv_free; NULL when *n_out
 * is 0). Ids above 1048575 or reversed ranges: SKV_EINVAL / SKV_ERANGE. */
SKV_EXTERN int skv_topo_cpulist_parse(int **out, size_t *n_out,
                                      const char *text, skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_TOPO_H */
