/* A resource group's preemption settings (columns of resource_groups added
 * by admin schema step 2): written after the row's other columns, read by
 * the admin plane to mirror them into the scheduler and by the manager to
 * choose what happens to a victim.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

int skv__mgr_store_admin_group_preempt_set(skv__db *db, const char *name,
                                           const skv__mgr_store_preempt *p,
                                           skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE resource_groups SET"
        " preemption=COALESCE(?, preemption),"
        " preempt_min_runtime_ms=COALESCE(?, preempt_min_runtime_ms),"
        " preempt_mode=COALESCE(?, preempt_mode),"
        " preempt_order=COALESCE(?, preempt_order) WHERE name=?", &st, err);
    if (rc)
        return rc;
    if (p->on < 0)
        skv__db_bind_null(st, 1);
    else
        skv__db_bind_int64(st, 1, p->on);
    if (p->min_runtime_ms < 0)
        skv__db_bind_null(st, 2);
    else
        skv__db_bind_int64(st, 2, p->min_runtime_ms);
    skv__db_bind_text(st, 3, p->mode[0] ? p->mode : NULL);
    skv__db_bind_text(st, 4, p->order[0] ? p->order : NULL);
    skv__db_bind_text(st, 5, name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_group_preempt(skv__db *db, const char *name,
                                       skv__mgr_store_preempt *out,
                                       skv_error *err)
{
    skv__db_stmt *st;
    *out = (skv__mgr_store_preempt){0, 0, "requeue", "lowest-priority"};
    int rc = skv__db_prepare(db, "SELECT preemption, preempt_min_runtime_ms,"
        " preempt_mode, preempt_order FROM resource_groups WHERE name=?", &st,
        err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        out->on = skv__db_column_int64(st, 0) != 0;
        out->min_runtime_ms = skv__db_column_int64(st, 1);
        skv__mgr_store_admin_col_copy(st, 2, out->mode, sizeof out->mode);
        skv__mgr_store_admin_col_copy(st, 3, out->order, sizeof out->order);
    }
    skv__db_done(st);
    return rc;
}
