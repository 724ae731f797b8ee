/* A resource group's default NUMA policy (a column of resource_groups
 * added by admin schema step 6): written after the row's other columns,
 * read by the manager when a session is submitted without a policy.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

int skv__mgr_store_admin_group_numa_set(skv__db *db, const char *name,
                                        const char *policy, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE resource_groups SET"
        " numa_policy=COALESCE(?, numa_policy) WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, policy);
    skv__db_bind_text(st, 2, name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_group_numa(skv__db *db, const char *name,
                                    char *out, size_t outsz, skv_error *err)
{
    skv__db_stmt *st;
    out[0] = 0;
    int rc = skv__db_prepare(db, "SELECT numa_policy FROM resource_groups"
                             " WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        skv__mgr_store_admin_col_copy(st, 0, out, outsz);
    skv__db_done(st);
    return rc;
}
