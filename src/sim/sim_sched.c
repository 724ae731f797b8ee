/* Building the simulated cluster in a real scheduler object.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sim_int.h"

int skv__sim_sched_new(skv_sched **out, const char *policy, const char *config,
                       const char *sequencer, uint32_t max_reservations,
                       skv_error *err)
{
    skv_sched *s = NULL;
    int rc = skv_sched_new(&s, NULL, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < skv_sim_policy_count(); i++) {
        rc = skv_sched_register_selector(s, skv_sim_policy(skv_sim_policy_name(i)),
                                         err);
        if (rc == SKV_EEXIST)   /* already built into the scheduler */
            rc = 0;
    }
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = policy;
    go.selector_config = config;
    go.sequencer = sequencer;
    go.max_reservations = max_reservations;
    if (rc == 0)
        rc = skv_sched_group_add(s, SKV__SIM_GROUP, &go, err);
    if (rc < 0) {
        skv_sched_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int skv__sim_add_node(skv_sched *s, const char *id, skv_qty cpu, skv_qty mem,
                      uint32_t gpus, const char *model, skv_error *err)
{
    if (gpus > SKV_SCHED_DEVICES_MAX)
        return skv__err(err, SKV_ERANGE, "node '%s': %u GPUs (at most %d)", id,
                        gpus, SKV_SCHED_DEVICES_MAX);
    skv_sched_device_spec dev[SKV_SCHED_DEVICES_MAX];
    for (uint32_t i = 0; i < gpus; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 1000};
    skv_slots *cap = NULL;
    int rc = skv_slots_new(&cap, err);
    if (rc == 0)
        rc = skv_slots_set(cap, "cpu", SKV_SLOT_COUNT, cpu, err);
    if (rc == 0)
        rc = skv_slots_set(cap, "mem", SKV_SLOT_BYTES, mem, err);
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = id;
    a.resource_group = SKV__SIM_GROUP;
    a.gpu_model = model;
    a.capacity = cap;
    a.n_devices = gpus;
    a.devices = dev;
    if (rc == 0)
        rc = skv_sched_agent_add(s, &a, err);
    skv_slots_free(cap);
    return rc;
}

int skv__sim_request(skv_slots **out, skv_qty cpu, skv_qty mem, uint32_t ngpu,
                     skv_qty gpu, skv_error *err)
{
    skv_slots *r = NULL;
    int rc = skv_slots_new(&r, err);
    if (rc == 0 && cpu > 0)
        rc = skv_slots_set(r, "cpu", SKV_SLOT_COUNT, cpu, err);
    if (rc == 0 && mem > 0)
        rc = skv_slots_set(r, "mem", SKV_SLOT_BYTES, mem, err);
    if (rc == 0 && ngpu == 1 && gpu > 0 && gpu < 1000)
        rc = skv_slots_set(r, "cuda.shares", SKV_SLOT_COUNT, gpu, err);
    else if (rc == 0 && ngpu > 0)
        rc = skv_slots_set(r, "cuda.device", SKV_SLOT_COUNT,
                           (skv_qty)ngpu * 1000, err);
    if (rc < 0) {
        skv_slots_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
