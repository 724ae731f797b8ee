/* The details session.show adds: the status history, the kernels and, for a
 * pending session, why it waits (the scheduler's reason: predicate = the
 * reason's name, the short slot and by how much, and the formatted line).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int history(skv_manager *m, skv_proto_session_info *i, skv_error *err)
{
    sqlite3_stmt *st;
    /* the wire allows 4096 entries: the latest ones */
    int rc = skv__mgr_db_prepare(m, &st, "SELECT status, ts_ms, reason FROM "
                                 "(SELECT id, status, ts_ms, reason FROM "
                                 "session_history WHERE session_id=? ORDER "
                                 "BY id DESC LIMIT 4096) ORDER BY id", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, i->session_id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        skv_proto_status_change *v = skv__reallocarray(
            i->history, i->n_history + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        i->history = v;
        v = &v[i->n_history++];
        v->status = skv__mgr_col_dup(st, 0);
        v->timestamp_ms = sqlite3_column_int64(st, 1);
        v->reason = skv__mgr_col_dup(st, 2);
    }
    skv__mgr_db_done(m, st);
    return rc;
}

static int kernel_row(skv_proto_kernel_info *k, sqlite3_stmt *st,
                      skv_error *err)
{
    memset(k, 0, sizeof *k);
    k->kernel_id = skv__mgr_col_dup(st, 0);
    k->role = skv__mgr_col_dup(st, 1);
    /* The role index, as in the hostname (main1, sub1, sub2...): kernel 0
     * is main1, kernel i > 0 is sub<i>. */
    uint32_t pos = (uint32_t)sqlite3_column_int(st, 2);
    k->idx = pos ? pos : 1;
    k->agent_id = skv__mgr_col_dup(st, 3);
    k->container_id = skv__mgr_col_dup(st, 4);
    k->status = skv__mgr_col_dup(st, 5);
    k->exit_code = sqlite3_column_type(st, 6) == SQLITE_NULL
                       ? -1 : sqlite3_column_int(st, 6);
    return skv__mgr_col_slots(&k->slots, st, 7, err);
}

static int kernels(skv_manager *m, skv_proto_session_info *i, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT id, role, idx, agent_id, "
                                 "container_id, status, exit_code, slots FROM "
                                 "kernels WHERE session_id=? ORDER BY idx",
                                 err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, i->session_id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        skv_proto_kernel_info *v = skv__reallocarray(
            i->kernels, i->n_kernels + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        i->kernels = v;
        rc = kernel_row(&v[i->n_kernels++], st, err);
    }
    skv__mgr_db_done(m, st);
    for (size_t k = 0; !rc && k < i->n_kernels; k++)
        rc = skv__mgr_net_kernel_info(m, &i->kernels[k], err);
    return rc;
}

static int pending(skv_manager *m, skv_proto_session_info *i, skv_error *err)
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
        rc = pending(m, i, err);
    return rc;
}
