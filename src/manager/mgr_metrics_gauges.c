/* The manager's gauges recomputed at each collect: agents by state,
 * capacity and use per resource group and slot, pending sessions by
 * reason. Each family is reset first, so groups, slots and reasons that
 * disappeared stop being exposed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* The same words as agent.list uses. */
static const char *agent_state(const skv__mgr_agent *a)
{
    if (a->state == SKV__AGENT_LOST)
        return "lost";
    return a->state == SKV__AGENT_ALIVE && a->conn ? "alive" : "disconnected";
}

int skv__mgr_metrics_agents(skv_manager *m, const skv__mgr_families *f,
                            skv_error *err)
{
    static const char *const states[] = {"alive", "disconnected", "lost"};
    double n[3] = {0, 0, 0};
    for (size_t i = 0; i < m->n_agents; i++) {
        const char *s = agent_state(&m->agents[i]);
        for (size_t j = 0; j < 3; j++)
            n[j] += !strcmp(s, states[j]);
    }
    for (size_t j = 0; j < 3; j++) {
        int rc = skv_metrics_set(f->agents, &states[j], 1, n[j], err);
        if (rc)
            return rc;
    }
    return skv_metrics_set(f->unhealthy, NULL, 0,
                           (double)skv__mgr_unhealthy_devices(m), err);
}

/* Count and unique slots in units, byte slots in bytes. */
static double qty_value(skv_slot_kind kind, skv_qty q)
{
    return kind == SKV_SLOT_BYTES ? (double)q : (double)q / SKV_QTY_SCALE;
}

/* Add one agent's capacity and use to its group's series. */
static int pool_agent(const skv__mgr_families *f, const char *group,
                      const skv_slots *cap, const skv_slots *used,
                      skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < skv_slots_count(cap); i++) {
        const char *name;
        skv_slot_kind kind;
        skv_qty q;
        skv_slots_at(cap, i, &name, &kind, &q);
        const char *lv[2] = {group, name};
        rc = skv_metrics_add(f->capacity, lv, 2, qty_value(kind, q), err);
        if (!rc)
            rc = skv_metrics_add(f->used, lv, 2,
                                 qty_value(kind, skv_slots_get(used, name)),
                                 err);
    }
    return rc;
}

int skv__mgr_metrics_pool(skv_manager *m, const skv__mgr_families *f,
                          skv_error *err)
{
    skv_metrics_reset(f->capacity);
    skv_metrics_reset(f->used);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        skv_slots *used = NULL, *cap = NULL;
        /* Agents outside the scheduler (lost, never registered) offer
         * nothing. */
        if (!a->in_sched ||
            skv_sched_agent_usage(&used, &cap, m->sched, a->id, NULL))
            continue;
        rc = pool_agent(f, a->group, cap, used, err);
        skv_slots_free(used);
        skv_slots_free(cap);
    }
    return rc;
}

/* One pending session: +1 on its (group, reason) series. */
static int pending_one(skv_manager *m, const skv__mgr_families *f,
                       const char *sid, const char *db_group, skv_error *err)
{
    skv_sched_reason r;
    const char *lv[2] = {db_group, "none"};
    if (skv_sched_session_reason(&r, m->sched, sid, NULL) == 0) {
        lv[1] = skv_sched_reason_name(r.code);
        if (r.resource_group)
            lv[0] = r.resource_group;
    }
    return skv_metrics_add(f->pending, lv, 2, 1, err);
}

typedef struct pending_arg {
    skv_manager *m;
    const skv__mgr_families *f;
    skv_error *err;
} pending_arg;

static int pending_cb(void *arg, const char *sid, const char *group)
{
    pending_arg *a = arg;
    return pending_one(a->m, a->f, sid, group, a->err);
}

int skv__mgr_metrics_pending(skv_manager *m, const skv__mgr_families *f,
                             skv_error *err)
{
    skv_metrics_reset(f->pending);
    pending_arg a = {m, f, err};
    return skv__mgr_store_pending_each(m->store, pending_cb, &a, err);
}
