/* The details session.show adds: the status history, the kernels and, for a
 * pending session, why it waits (the scheduler's reason: predicate = the
 * reason's name, the short slot and by how much, and the formatted line).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int history(skv_manager *m, skv_proto_session_info *i, skv_error *err)
{
    return skv__mgr_store_session_history(m->store, i, err);
}

static int kernels(skv_manager *m, skv_proto_session_info *i, skv_error *err)
{
    int rc = skv__mgr_store_session_kernels(m->store, i, err);
    for (size_t k = 0; !rc && k < i->n_kernels; k++)
        rc = skv__mgr_net_kernel_info(m, &i->kernels[k], err);
    return rc;
}

/* Also used by session.list, so `sokovan ps` can show a REASON column. */
int skv__mgr_session_pending(skv_manager *m, skv_proto_session_info *i,
                             skv_error *err)
{
    skv_sched_reason r;
    if (skv_sched_session_reason(&r, m->sched, i->session_id, NULL))
        return 0;   /* not pending in the scheduler (any more) */
    i->pending = skv__calloc(1, sizeof *i->pending);
    if (!i->pending)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    i->n_pending = 1;
    skv_proto_pending_reason *p = i->pending;
    p->resource_group = skv__strdup(r.resource_group ? r.resource_group
                                                     : i->resource_group);
    p->predicate = skv__strdup(skv_sched_reason_name(r.code));
    if (r.slot) {
        p->slot = skv__strdup(r.slot);
        p->shortfall = r.shortfall;
    } else if (r.n_slots) {
        p->slot = skv__strdup(r.slots[0].slot);
        p->shortfall = r.slots[0].min_shortfall;
    }
    if (r.code == SKV_SCHED_REASON_HAS_RESERVATION && r.reserved_at_ms > 0)
        p->estimated_start_ms = r.reserved_at_ms;
    int rc = skv_sched_reason_format(&p->message, &r, err);
    if (!rc && (!p->resource_group || !p->predicate))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    return rc;
}

int skv__mgr_session_details(skv_manager *m, skv_proto_session_info *i,
                             skv_error *err)
{
    int rc = history(m, i, err);
    if (!rc)
        rc = kernels(m, i, err);
    if (!rc && !strcmp(i->status, "PENDING"))
        rc = skv__mgr_session_pending(m, i, err);
    return rc;
}
