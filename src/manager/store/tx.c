/* Savepoints: one unit of a batched transaction (a placement of a pass,
 * a submission of a tick) undone alone when it fails, without losing the
 * others. SAVEPOINT / RELEASE / ROLLBACK TO read the same on SQLite and
 * PostgreSQL. Only one level is used, so one name does.
 * SPDX-License-Identifier: Apache-2.0 */
#include "store_int.h"

/* The db layer's units: the SAVEPOINT is sent at the unit's first write
 * (db_unit.c). */
int skv__mgr_store_savepoint(skv__db *db, skv_error *err)
{
    return skv__db_unit_begin(db, err);
}

int skv__mgr_store_release(skv__db *db, skv_error *err)
{
    return skv__db_unit_release(db, err);
}

void skv__mgr_store_rollback_to(skv__db *db)
{
    skv__db_unit_rollback(db);
}
