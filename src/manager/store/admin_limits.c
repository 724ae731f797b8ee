/* A resource group's idle and lifetime limits (columns of resource_groups
 * added by admin schema step 3): written after the row's other columns,
 * read by the manager's reclaim sweep (mgr_reclaim.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

static void bind_or_keep(skv__db_stmt *st, int i, int64_t v)
{
    if (v < 0)
        skv__db_bind_null(st, i);
    else
        skv__db_bind_int64(st, i, v);
}

int skv__mgr_store_admin_group_limits_set(skv__db *db, const char *name,
                                          const skv__mgr_store_glimits *l,
                                          skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE resource_groups SET"
        " idle_timeout_ms=COALESCE(?, idle_timeout_ms),"
        " max_lifetime_ms=COALESCE(?, max_lifetime_ms) WHERE name=?", &st,
        err);
    if (rc)
        return rc;
    bind_or_keep(st, 1, l->idle_timeout_ms);
    bind_or_keep(st, 2, l->max_lifetime_ms);
    skv__db_bind_text(st, 3, name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_group_limits(skv__db *db, const char *name,
                                      skv__mgr_store_glimits *out,
                                      skv_error *err)
{
    skv__db_stmt *st;
    *out = (skv__mgr_store_glimits){0, 0};
    int rc = skv__db_prepare(db, "SELECT idle_timeout_ms, max_lifetime_ms"
        " FROM resource_groups WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        out->idle_timeout_ms = skv__db_column_int64(st, 0);
        out->max_lifetime_ms = skv__db_column_int64(st, 1);
    }
    skv__db_done(st);
    return rc;
}
