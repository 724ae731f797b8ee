/* Loading a topology through hwloc (live, XML, synthetic) and turning it
 * into plain data; the hwloc handle never outlives the load.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "topo_internal.h"

void skv_topo_free(skv_topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->numa && i < t->nnuma; i++) {
        skv__free((void *)t->numa[i].cpus);
        skv__free((void *)t->numa[i].cpuset);
    }
    skv__free(t->numa);
    skv__free(t->numa_dist);
    for (size_t i = 0; t->cores && i < t->ncores; i++)
        skv__free((void *)t->cores[i].pus);
    skv__free(t->cores);
    skv__free(t->pus);
    skv__free(t->cpuset);
    skv__topo_free_accels(t);
    skv__free(t->source);
    skv__free(t);
}

/* hwloc is configured (source set) in h; load it and convert. Takes
 * ownership of h and source in every case. */
static int finish(skv_topo **out, hwloc_topology_t h, char *source,
                  enum hwloc_type_filter_e io_filter, skv_error *err)
{
    skv_topo *t = NULL;
    int rc = 0;
    if (!source) {
        rc = skv__err(err, SKV_ENOMEM, "topology: out of memory");
        goto done;
    }
    hwloc_topology_set_io_types_filter(h, io_filter);
    if (hwloc_topology_load(h) != 0) {
        rc = skv__err(err, SKV_EINVAL, "topology %s: hwloc cannot load it (%s)",
                      source, strerror(errno));
        goto done;
    }
    t = skv__calloc(1, sizeof(*t));
    if (!t) {
        rc = skv__err(err, SKV_ENOMEM, "topology: out of memory");
        goto done;
    }
    t->source = source;
    source = NULL;
    rc = skv__topo_build_cpus(t, h, err);
    if (!rc)
        rc = skv__topo_build_accels(t, h, err);
    if (!rc && t->npus == 0)
        rc = skv__err(err, SKV_EINVAL, "topology %s: no allowed CPU",
                      t->source);
done:
    hwloc_topology_destroy(h);
    skv__free(source);
    if (rc) {
        skv_topo_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static int init_hwloc(hwloc_topology_t *h, skv_error *err)
{
    if (hwloc_topology_init(h) != 0)
        return skv__err(err, SKV_ENOMEM, "topology: hwloc_topology_init failed");
    return 0;
}

int skv_topo_load_live(skv_topo **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "topo_load_live: out is NULL");
    if (strcmp(skv_sysroot_get(), "/") != 0)
        return skv__err(err, SKV_ENOTSUP,
                        "topology: hwloc reads the real /sys; cannot load the "
                        "live machine under sysroot '%s' (load an XML instead)",
                        skv_sysroot_get());
    hwloc_topology_t h;
    int rc = init_hwloc(&h, err);
    if (rc)
        return rc;
    /* The Linux backend reads the PCI tree from sysfs itself; the
     * libpciaccess-based "pci" component adds nothing there, is slower and
     * leaks memory in every load. */
    hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                  "pci");
    return finish(out, h, skv__strdup("live"), HWLOC_TYPE_FILTER_KEEP_IMPORTANT,
                  err);
}

int skv_topo_load_xml(skv_topo **out, const char *path, skv_error *err)
{
    struct stat st;
    if (!out || !path || !*path)
        return skv__err(err, SKV_EINVAL, "topo_load_xml: NULL or empty path");
    if (stat(path, &st) != 0)
        return skv__err(err, errno == ENOENT ? SKV_ENOENT : SKV_EIO,
                        "topology XML '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return skv__err(err, SKV_EINVAL, "topology XML '%s': not a regular file",
                        path);
    hwloc_topology_t h;
    int rc = init_hwloc(&h, err);
    if (rc)
        return rc;
    if (hwloc_topology_set_xml(h, path) != 0) {
        hwloc_topology_destroy(h);
        return skv__err(err, SKV_EINVAL, "topology XML '%s': rejected by hwloc",
                        path);
    }
    return finish(out, h, skv__asprintf("xml:%s", path),
                  HWLOC_TYPE_FILTER_KEEP_ALL, err);
}

int skv_topo_load_xml_buffer(skv_topo **out, const char *buf, size_t len,
                             skv_error *err)
{
    if (!out || !buf || len == 0)
        return skv__err(err, SKV_EINVAL, "topo_load_xml_buffer: empty buffer");
    if (len > (size_t)INT32_MAX)
        return skv__err(err, SKV_ERANGE, "topo_load_xml_buffer: buffer too big");
    /* hwloc wants the terminating NUL inside the length. */
    char *copy = skv__malloc(len + 1);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "topology: out of memory");
    memcpy(copy, buf, len);
    copy[len] = '\0';
    hwloc_topology_t h;
    int rc = init_hwloc(&h, err);
    if (!rc && hwloc_topology_set_xmlbuffer(h, copy, (int)len + 1) != 0) {
        hwloc_topology_destroy(h);
        rc = skv__err(err, SKV_EINVAL, "topology XML buffer: rejected by hwloc");
    }
    if (!rc)
        rc = finish(out, h, skv__strdup("xml-buffer"),
                    HWLOC_TYPE_FILTER_KEEP_ALL, err);
    skv__free(copy);
    return rc;
}

int skv_topo_load_synthetic(skv_topo **out, const char *desc, skv_error *err)
{
    if (!out || !desc || !*desc)
        return skv__err(err, SKV_EINVAL,
                        "topo_load_synthetic: NULL or empty description");
    hwloc_topology_t h;
    int rc = init_hwloc(&h, err);
    if (rc)
        return rc;
    if (hwloc_topology_set_synthetic(h, desc) != 0) {
        hwloc_topology_destroy(h);
        return skv__err(err, SKV_EINVAL,
                        "synthetic topology '%s': rejected by hwloc", desc);
    }
    return finish(out, h, skv__asprintf("synthetic:%s", desc),
                  HWLOC_TYPE_FILTER_KEEP_ALL, err);
}
