/* A simulated node shaped like a real machine (hwloc XML topology).
 * SPDX-License-Identifier: Apache-2.0 */
#include "sim_int.h"
#include "sokovan/topo.h"

int skv_sim_node_shape_from_xml(skv_sim_node_shape *out, const char *xml_path,
                                skv_error *err)
{
    if (!out || !xml_path)
        return skv__err(err, SKV_EINVAL, "node shape: NULL argument");
    skv_topo *t = NULL;
    int rc = skv_topo_load_xml(&t, xml_path, err);
    if (rc < 0)
        return rc;
    uint32_t gpus = 0;
    for (size_t i = 0; i < skv_topo_accel_count(t); i++) {
        const skv_topo_accel *a = skv_topo_accel_at(t, i);
        gpus += a && a->compute;
    }
    out->cpu = (skv_qty)skv_topo_core_count(t) * 1000;
    out->mem = (skv_qty)skv_topo_memory_bytes(t);
    out->gpus = gpus;
    skv_topo_free(t);
    if (gpus > SKV_SCHED_DEVICES_MAX)
        return skv__err(err, SKV_ERANGE, "node shape: '%s' has %u GPUs (at "
                        "most %d)", xml_path, gpus, SKV_SCHED_DEVICES_MAX);
    return 0;
}
