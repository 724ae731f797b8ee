/* On open, the agents recorded alive come back as known but not
 * schedulable until they register again: each gets a full heartbeat
 * timeout to return, and the scheduler's view of its devices (less the
 * devices it last reported unhealthy).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int restore_one(skv_manager *m, const skv__mgr_store_agent *row,
                       int64_t now_ms, skv_error *err)
{
    skv__mgr_agent *a = skv__mgr_agent_slot(m, row->id);
    if (!a)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    snprintf(a->address, sizeof a->address, "%s",
             row->address ? row->address : "");
    a->state = SKV__AGENT_KNOWN;
    a->last_hb_ms = now_ms;   /* it gets a full timeout to come back */
    skv__mgr_hb_note(m, a);
    skv_proto_device *d = NULL;
    size_t n = 0;
    int rc = skv__mgr_store_devices(m->store, row->id, &d, &n, err);
    skv__mgr_layout_free(&a->layout);
    if (!rc)
        rc = skv__mgr_store_layout(m->store, row->id, &a->layout, err);
    if (!rc)
        rc = skv__mgr_agent_spec(m, a, row->group, row->arch, d, n, NULL, 0,
                                 false, err);
    skv__mgr_store_devices_free(d, n);
    if (!rc)    /* its faulty devices stay out until it says otherwise */
        rc = skv__mgr_health_restore(m, a, err);
    return rc;
}

typedef struct restore_arg {
    skv_manager *m;
    int64_t now_ms;
    skv_error *err;
} restore_arg;

static int restore_cb(void *arg, const skv__mgr_store_agent *row)
{
    restore_arg *r = arg;
    skv_error e = SKV_ERROR_INIT;
    if (restore_one(r->m, row, r->now_ms, &e) == 0)
        return 0;
    /* not fatal: its sessions are requeued or failed on restore */
    skv__log(SKV_LOG_WARN, "manager", "agent %s not restored: %s", row->id,
             e.message);
    skv__mgr_agent *a = skv__mgr_agent_find(r->m, row->id);
    if (a)
        a->state = SKV__AGENT_LOST;
    if (e.code != SKV_ENOMEM)
        return 0;
    if (r->err)
        *r->err = e;
    return e.code;
}

int skv__mgr_agents_restore(skv_manager *m, int64_t now_ms, skv_error *err)
{
    restore_arg a = {m, now_ms, err};
    return skv__mgr_store_agents_alive(m->store, restore_cb, &a, err);
}
