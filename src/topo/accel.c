/* Accelerators out of an hwloc topology: PCI devices of accelerator classes
 * or carrying GPU/co-processor OS devices, plus such OS devices that have
 * no PCI parent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_internal.h"

#define ACCEL_MAX_OSDEV 16

/* Build-time view of one accelerator, with its hwloc objects. */
typedef struct accel_tmp {
    hwloc_obj_t pci;                    /* NULL for a bare OS device */
    hwloc_obj_t os[ACCEL_MAX_OSDEV];
    size_t nos;
    char busid[16];
    const char *main;                   /* main OS device name or NULL */
} accel_tmp;

static int is_accel_class(unsigned cls)
{
    /* display controllers, processing accelerators, co-processors */
    return (cls >> 8) == 0x03 || (cls >> 8) == 0x12 || cls == 0x0b40;
}

/* Prefixes of OS devices that mean "computes", best name first. */
static const char *const compute_prefixes[] = {"nvml", "cuda", "rsmi",
                                                "opencl", "ze"};

static int prefix_rank(const char *name)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(compute_prefixes); i++)
        if (strncmp(name, compute_prefixes[i],
                    strlen(compute_prefixes[i])) == 0)
            return (int)i;
    return (int)SKV__ARRAY_LEN(compute_prefixes);
}

/* GPU and co-processor OS devices. hwloc >= 2.10 XML files encode OS device
 * types as bit flags this hwloc may not know, so known compute names count
 * too. */
static int is_accel_osdev(hwloc_obj_t o)
{
    if (o->type != HWLOC_OBJ_OS_DEVICE)
        return 0;
    return o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU ||
           o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC ||
           (o->name &&
            prefix_rank(o->name) < (int)SKV__ARRAY_LEN(compute_prefixes));
}

static void tmp_pick_main(accel_tmp *a)
{
    int best = 1 << 20;
    a->main = NULL;
    for (size_t i = 0; i < a->nos; i++) {
        int r = prefix_rank(a->os[i]->name ? a->os[i]->name : "");
        if (a->os[i]->name && r < best) {
            best = r;
            a->main = a->os[i]->name;
        }
    }
}

static void tmp_add_os(accel_tmp *a, hwloc_obj_t os)
{
    if (a->nos < ACCEL_MAX_OSDEV && os->name)
        a->os[a->nos++] = os;
}

static int cmp_tmp(const void *x, const void *y)
{
    const accel_tmp *a = x, *b = y;
    if (!a->pci != !b->pci)
        return a->pci ? -1 : 1; /* PCI devices first */
    int c = strcmp(a->busid, b->busid);
    if (c)
        return c;
    return strcmp(a->main ? a->main : "", b->main ? b->main : "");
}

/* Gather the candidates into a new array. */
static int collect(accel_tmp **out, size_t *n, hwloc_topology_t h)
{
    size_t cap = (size_t)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PCI_DEVICE) +
                 (size_t)hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_OS_DEVICE) + 1;
    accel_tmp *arr = skv__calloc(cap, sizeof(*arr));
    if (!arr)
        return SKV_ENOMEM;
    size_t k = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_pcidev(h, o))) {
        accel_tmp *a = &arr[k];
        for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
            if (is_accel_osdev(c))
                tmp_add_os(a, c);
        if (a->nos == 0 && !is_accel_class(o->attr->pcidev.class_id))
            continue;
        a->pci = o;
        snprintf(a->busid, sizeof(a->busid), "%04x:%02x:%02x.%01x",
                 o->attr->pcidev.domain & 0xffffu, o->attr->pcidev.bus,
                 o->attr->pcidev.dev, o->attr->pcidev.func & 0xfu);
        tmp_pick_main(a);
        k++;
    }
    o = NULL;
    while ((o = hwloc_get_next_osdev(h, o))) {
        if (!is_accel_osdev(o) || !o->name ||
            (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE))
            continue;
        tmp_add_os(&arr[k], o);
        tmp_pick_main(&arr[k]);
        k++;
    }
    qsort(arr, k, sizeof(*arr), cmp_tmp);
    *out = arr;
    *n = k;
    return 0;
}

/* First value of an info key over the accelerator's objects. */
static const char *tmp_info(const accel_tmp *a, const char *key)
{
    for (size_t i = 0; i < a->nos; i++) {
        const char *v = hwloc_obj_get_info_by_name(a->os[i], key);
        if (v)
            return v;
    }
    return a->pci ? hwloc_obj_get_info_by_name(a->pci, key) : NULL;
}

static uint64_t tmp_memory(const accel_tmp *a)
{
    static const char *const keys[] = {"CUDAGlobalMemorySize",
                                       "OpenCLGlobalMemorySize"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(keys); i++) {
        const char *v = tmp_info(a, keys[i]);
        if (v) {
            char *end;
            unsigned long long kib = strtoull(v, &end, 10);
            if (end != v && kib < (UINT64_MAX >> 10))
                return (uint64_t)kib << 10; /* hwloc reports KiB */
        }
    }
    return 0;
}

static int os_index_of(const accel_tmp *a, const char *prefix)
{
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < a->nos; i++) {
        const char *nm = a->os[i]->name;
        if (strncmp(nm, prefix, pl) == 0 && nm[pl] >= '0' && nm[pl] <= '9')
            return atoi(nm + pl);
    }
    return -1;
}

static char *dup_or_empty(const char *s)
{
    return skv__strdup(s ? s : "");
}

static int fill_strings(skv_topo_accel *x, const accel_tmp *a)
{
    char **names = skv__calloc(a->nos + 1, sizeof(char *));
    if (!names)
        return SKV_ENOMEM;
    x->os_devices = (const char *const *)names;
    for (size_t i = 0; i < a->nos; i++) {
        if (!(names[i] = skv__strdup(a->os[i]->name)))
            return SKV_ENOMEM;
        x->nos_devices++;
    }
    char *nm = a->main ? skv__strdup(a->main)
                       : skv__asprintf("pci:%s", a->busid);
    x->name = nm;
    x->pci_bus_id = dup_or_empty(a->busid);
    const char *vendor = tmp_info(a, "GPUVendor");
    x->vendor = dup_or_empty(vendor ? vendor : tmp_info(a, "PCIVendor"));
    const char *model = tmp_info(a, "GPUModel");
    x->model = dup_or_empty(model ? model : tmp_info(a, "PCIDevice"));
    const char *uuid = tmp_info(a, "NVIDIAUUID");
    x->uuid = dup_or_empty(uuid ? uuid : tmp_info(a, "AMDUUID"));
    if (!x->name || !x->pci_bus_id || !x->vendor || !x->model || !x->uuid)
        return SKV_ENOMEM;
    return 0;
}

static int fill_accel(skv_topo_accel *x, const accel_tmp *a, size_t idx,
                      hwloc_topology_t h)
{
    x->index = idx;
    int rc = fill_strings(x, a);
    if (rc)
        return rc;
    if (a->pci) {
        x->vendor_id = a->pci->attr->pcidev.vendor_id;
        x->device_id = a->pci->attr->pcidev.device_id;
        x->pci_class = a->pci->attr->pcidev.class_id;
    }
    x->numa_node = skv__topo_obj_numa(h, a->pci ? a->pci : a->os[0]);
    x->memory_bytes = tmp_memory(a);
    x->nvml_index = os_index_of(a, "nvml");
    x->cuda_index = os_index_of(a, "cuda");
    x->compute = x->pci_class == 0x0302 || (x->pci_class >> 8) == 0x12;
    for (size_t i = 0; i < a->nos; i++)
        if (prefix_rank(a->os[i]->name) <
                (int)SKV__ARRAY_LEN(compute_prefixes) ||
            a->os[i]->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
            x->compute = 1;
    return 0;
}

/* Which accelerator (index) owns hwloc object o; -1 for none. */
static int owner_of(const accel_tmp *a, size_t n, hwloc_obj_t o)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].pci == o)
            return (int)i;
        for (size_t j = 0; j < a[i].nos; j++)
            if (a[i].os[j] == o)
                return (int)i;
    }
    return -1;
}

/* NVLink bandwidths from hwloc's "NVLinkBandwidth" matrix (GPUs and
 * NVSwitches): direct links, plus through switches the smaller of the two
 * GPUs' total bandwidth to switches (objects owned by no accelerator). */
static int build_nvlink(skv_topo *t, const accel_tmp *a, hwloc_topology_t h)
{
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (t->naccels == 0 ||
        hwloc_distances_get_by_name(h, "NVLinkBandwidth", &nr, &d, 0) != 0 ||
        nr == 0)
        return 0;
    size_t n = t->naccels;
    uint64_t *bw = skv__calloc(n * n, sizeof(uint64_t));
    uint64_t *sw = skv__calloc(n, sizeof(uint64_t));
    int *own = skv__calloc(d->nbobjs ? d->nbobjs : 1, sizeof(int));
    if (!bw || !sw || !own) {
        skv__free(bw);
        skv__free(sw);
        skv__free(own);
        hwloc_distances_release(h, d);
        return SKV_ENOMEM;
    }
    for (unsigned i = 0; i < d->nbobjs; i++)
        own[i] = owner_of(a, n, d->objs[i]);
    for (unsigned i = 0; i < d->nbobjs; i++)
        for (unsigned j = 0; j < d->nbobjs; j++) {
            uint64_t v = d->values[i * d->nbobjs + j];
            if (own[i] < 0 || own[i] == own[j])
                continue;
            if (own[j] >= 0)
                bw[(size_t)own[i] * n + (size_t)own[j]] += v;
            else
                sw[own[i]] += v;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (i != j && sw[i] && sw[j])
                bw[i * n + j] += sw[i] < sw[j] ? sw[i] : sw[j];
    skv__free(sw);
    skv__free(own);
    hwloc_distances_release(h, d);
    t->nvlink = bw;
    return 0;
}

static int build_links(skv_topo *t, const accel_tmp *a)
{
    size_t n = t->naccels;
    t->links = skv__calloc(n ? n * n : 1, 1);
    if (!t->links)
        return SKV_ENOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            hwloc_obj_t x = a[i].pci ? a[i].pci : a[i].os[0];
            hwloc_obj_t y = a[j].pci ? a[j].pci : a[j].os[0];
            t->links[i * n + j] = (uint8_t)(i == j ? SKV_TOPO_LINK_SELF
                : skv__topo_pci_link(x, y, t->accels[i].numa_node,
                                     t->accels[j].numa_node));
        }
    return 0;
}

int skv__topo_build_accels(skv_topo *t, hwloc_topology_t h, skv_error *err)
{
    accel_tmp *a = NULL;
    size_t n = 0;
    int rc = collect(&a, &n, h);
    if (!rc) {
        t->accels = skv__calloc(n ? n : 1, sizeof(*t->accels));
        rc = t->accels ? 0 : SKV_ENOMEM;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        t->naccels++;
        rc = fill_accel(&t->accels[i], &a[i], i, h);
    }
    if (!rc)
        rc = build_links(t, a);
    if (!rc)
        rc = build_nvlink(t, a, h);
    skv__free(a);
    if (rc)
        return skv__err(err, rc, "topology: out of memory reading devices");
    return 0;
}

void skv__topo_free_accels(skv_topo *t)
{
    for (size_t i = 0; t->accels && i < t->naccels; i++) {
        skv_topo_accel *x = &t->accels[i];
        for (size_t j = 0; j < x->nos_devices; j++)
            skv__free((void *)x->os_devices[j]);
        skv__free((void *)x->os_devices);
        skv__free((void *)x->name);
        skv__free((void *)x->pci_bus_id);
        skv__free((void *)x->vendor);
        skv__free((void *)x->model);
        skv__free((void *)x->uuid);
    }
    skv__free(t->accels);
    skv__free(t->links);
    skv__free(t->nvlink);
}

static bool has_os_prefix(const skv_topo_accel *a, const char *p)
{
    for (size_t i = 0; i < a->nos_devices; i++)
        if (strncmp(a->os_devices[i], p, strlen(p)) == 0)
            return true;
    return false;
}

SKV_EXTERN const char *skv_topo_accel_prefix(const skv_topo_accel *a)
{
    if (!a)
        return NULL;
    if (a->vendor_id == 0x10de || has_os_prefix(a, "nvml") ||
        has_os_prefix(a, "cuda"))
        return "cuda";
    if (a->vendor_id == 0x1002 || has_os_prefix(a, "rsmi"))
        return "rocm";
    return NULL;
}
