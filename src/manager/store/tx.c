/* Savepoints: one unit of a batched transaction (a placement of a pass,
 * a submission of a tick) undone alone when it fails, without losing the
 * others. SAVEPOINT / RELEASE / ROLLBACK TO read the same on SQLite and
 * PostgreSQL. Only one level is used, so one name does.
 * SPDX-License-Identifier: Apache-2.0 */
#include "state_cache.h"
#include "store_int.h"

int skv__mgr_store_savepoint(skv__db *db, skv_error *err)
{
    return skv__db_exec(db, "SAVEPOINT skv_unit", err);
}

int skv__mgr_store_release(skv__db *db, skv_error *err)
{
    return skv__db_exec(db, "RELEASE SAVEPOINT skv_unit", err);
}

void skv__mgr_store_rollback_to(skv__db *db)
{
    skv__mgr_store_state_forget(db);
    skv__db_exec(db, "ROLLBACK TO SAVEPOINT skv_unit", NULL);
    skv__db_exec(db, "RELEASE SAVEPOINT skv_unit", NULL);
}
