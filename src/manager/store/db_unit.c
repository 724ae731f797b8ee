/* Units (db.h): a savepoint asked for at the unit's start and sent only
 * before its first statement that must be undone with it. Most of a
 * batch's units are kernel events that find nothing to change (the state
 * cache answers their reads); they used to cost a SAVEPOINT and a RELEASE
 * each. The history rows a unit buffers (history_buf.c) and the status
 * writes it holds (row_buf.c) are undone with it whether or not its
 * savepoint was sent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <strings.h>

#include "db_impl.h"
#include "history_buf.h"
#include "row_buf.h"
#include "skv_internal.h"
#include "state_cache.h"

/* Only a SELECT reads without writing in the SQL the store runs (db.h's
 * subset: no PRAGMA, no data-changing CTEs). */
bool skv__db_sql_writes(const char *sql)
{
    while (isspace((unsigned char)*sql))
        sql++;
    return strncasecmp(sql, "SELECT", 6) != 0;
}

/* Sent outermost first, so an inner unit sent means all are. */
int skv__db_unit_touch(skv__db *db, skv_error *err)
{
    if (!db->n_units || db->units[db->n_units - 1].sent)
        return 0;
    for (int i = 0; i < db->n_units; i++) {
        if (db->units[i].sent)
            continue;
        int rc = db->ops->exec(db, "SAVEPOINT skv_unit", err);
        if (rc) {
            skv__mgr_store_state_forget(db);
            return rc;
        }
        db->units[i].sent = true;
        db->stats.savepoints++;
    }
    return 0;
}

int skv__db_unit_begin(skv__db *db, skv_error *err)
{
    if (db->n_units == SKV__DB_UNITS_MAX)
        return skv__err(err, SKV_ESTATE, "manager database: more than %d "
                        "nested units", SKV__DB_UNITS_MAX);
    struct skv__db_unit *u = &db->units[db->n_units++];
    u->sent = false;
    skv__history_buf_marks(db, &u->rows, &u->rows_sent);
    skv__row_buf_marks(db, &u->held, &u->held_sent);
    db->stats.units++;
    return 0;
}

/* A failed RELEASE keeps the unit: the caller's rollback undoes it. */
int skv__db_unit_release(skv__db *db, skv_error *err)
{
    if (!db->n_units)
        return skv__err(err, SKV_ESTATE, "manager database: no unit open");
    if (!db->units[db->n_units - 1].sent) {
        db->n_units--;
        return 0;
    }
    int rc = db->ops->exec(db, "RELEASE SAVEPOINT skv_unit", err);
    if (rc)
        skv__mgr_store_state_forget(db);
    else
        db->n_units--;
    return rc;
}

void skv__db_unit_rollback(skv__db *db)
{
    skv__mgr_store_state_forget(db);
    if (!db->n_units)
        return;
    struct skv__db_unit u = db->units[--db->n_units];
    skv__history_buf_undo(db, u.rows, u.rows_sent);
    skv__row_buf_undo(db, u.held, u.held_sent);
    if (!u.sent)
        return;
    db->ops->exec(db, "ROLLBACK TO SAVEPOINT skv_unit", NULL);
    db->ops->exec(db, "RELEASE SAVEPOINT skv_unit", NULL);
}

/* The transaction ended (or began): no unit is left open. */
void skv__db_units_reset(skv__db *db)
{
    db->n_units = 0;
    skv__history_buf_clear(db);
    skv__row_buf_clear(db);
}

const skv__db_stats *skv__db_stats_of(const skv__db *db)
{
    return &db->stats;
}
