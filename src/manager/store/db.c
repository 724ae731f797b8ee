/* db.h's calls dispatched to the engine a connection was opened with.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "create_cache.h"
#include "db_impl.h"
#include "history_buf.h"
#include "row_buf.h"
#include "skv_internal.h"
#include "state_cache.h"

void skv__db_close(skv__db *db)
{
    if (!db)
        return;
    skv__free(db->states);
    skv__free(db->kernels);
    skv__free(db->dispatch);
    skv__mgr_store_cc_free(db);
    skv__history_buf_free(db);
    skv__row_buf_free(db);
    skv__free(db->admin_cache);
    db->ops->close(db);
}

skv__db_kind skv__db_kind_of(const skv__db *db)
{
    return db->ops->kind;
}

/* A statement that may change what the open unit must undo sends the
 * unit's savepoint first (db_unit.c); on PostgreSQL any statement does. */
static bool opens_unit(skv__db *db, bool writes)
{
    return db->n_units && (writes || db->ops->kind == SKV__DB_POSTGRES);
}

/* A failed statement may have ended the transaction (SQLite rolls back
 * by itself on some errors; PostgreSQL aborts it): the state cache
 * forgets, as after any rollback. */
int skv__db_exec(skv__db *db, const char *sql, skv_error *err)
{
    int rc = skv__row_buf_before(db, sql, err);
    if (!rc && opens_unit(db, skv__db_sql_writes(sql)))
        rc = skv__db_unit_touch(db, err);
    if (!rc)
        rc = db->ops->exec(db, sql, err);
    if (rc < 0)
        skv__mgr_store_state_forget(db);
    return rc;
}

int skv__db_begin(skv__db *db, skv_error *err)
{
    skv__db_units_reset(db);
    int rc = db->ops->begin(db, err);
    if (rc)
        db->late_units = false;
    if (rc || !db->on_begin)
        return rc;
    if ((rc = db->on_begin(db, db->on_begin_arg, err))) {
        db->ops->rollback(db);
        db->late_units = false;
        skv__mgr_store_state_forget(db);   /* deposed: others write now */
    }
    return rc;
}

void skv__db_defer_errors(skv__db *db)
{
    if (db->ops->defer_errors)
        db->ops->defer_errors(db);
}

/* Units that fail only together may have their status writes held
 * (row_buf.c) until the transaction ends. */
void skv__db_defer_releases(skv__db *db)
{
    if (db->ops->defer_releases) {
        db->ops->defer_releases(db);
        db->late_units = true;
    }
}

void skv__db_on_begin(skv__db *db, skv__db_begin_hook fn, void *arg)
{
    db->on_begin = fn;
    db->on_begin_arg = arg;
    skv__mgr_store_state_forget(db);   /* a new leader: read afresh */
}

/* The held status writes and buffered history rows go in before COMMIT:
 * a committed transaction's rows always land, a failed one's never. */
int skv__db_commit(skv__db *db, skv_error *err)
{
    db->n_units = 0;
    int rc = skv__row_buf_flush(db, err);
    if (!rc)
        rc = skv__history_buf_flush(db, err);
    if (rc)
        db->ops->rollback(db);
    else
        rc = db->ops->commit(db, err);
    skv__db_units_reset(db);
    db->late_units = false;
    if (rc)    /* the engine rolled back */
        skv__mgr_store_state_forget(db);
    return rc;
}

void skv__db_rollback(skv__db *db)
{
    skv__db_units_reset(db);
    db->late_units = false;
    db->ops->rollback(db);
    skv__mgr_store_state_forget(db);
}

bool skv__db_in_transaction(skv__db *db)
{
    return db->ops->in_transaction(db);
}

int skv__db_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                    skv_error *err)
{
    *out = NULL;
    int rc = skv__row_buf_before(db, sql, err);
    if (!rc)
        rc = db->ops->prepare(db, sql, out, err);
    if (!rc) {
        (*out)->bind_rc = 0;
        (*out)->writes = skv__db_sql_writes(sql);
        (*out)->updates = !strncmp(sql, "UPDATE ", 7);
    }
    return rc;
}

void skv__db_done(skv__db_stmt *st)
{
    if (st)
        st->db->ops->done(st);
}

void skv__db_reset(skv__db_stmt *st)
{
    st->bind_rc = 0;
    st->db->ops->reset(st);
}

void skv__db_bind_int64(skv__db_stmt *st, int i, int64_t v)
{
    st->db->ops->bind_int64(st, i, v);
}

void skv__db_bind_double(skv__db_stmt *st, int i, double v)
{
    st->db->ops->bind_double(st, i, v);
}

void skv__db_bind_text(skv__db_stmt *st, int i, const char *s)
{
    if (s)
        st->db->ops->bind_text(st, i, s);
    else
        st->db->ops->bind_null(st, i);
}

void skv__db_bind_blob(skv__db_stmt *st, int i, const void *p, size_t n)
{
    if (p)
        st->db->ops->bind_blob(st, i, p, n);
    else
        st->db->ops->bind_null(st, i);
}

void skv__db_bind_null(skv__db_stmt *st, int i)
{
    st->db->ops->bind_null(st, i);
}

/* A bind that failed earlier fails the step, so callers bind without
 * checking each call and still never run a half-bound statement. */
int skv__db_step(skv__db_stmt *st, skv_error *err)
{
    if (st->bind_rc)
        return skv__err(err, st->bind_rc, "manager database: bind failed");
    skv__db *db = st->db;
    db->stats.steps++;
    db->stats.writes += st->writes;
    db->stats.updates += st->updates;
    int rc = opens_unit(db, st->writes) ? skv__db_unit_touch(db, err) : 0;
    if (!rc)
        rc = db->ops->step(st, err);
    if (rc < 0)
        skv__mgr_store_state_forget(st->db);   /* as in skv__db_exec */
    return rc;
}

void skv__db_rows_unread(skv__db_stmt *st)
{
    if (st->db->ops->rows_unread)
        st->db->ops->rows_unread(st);
}

int64_t skv__db_column_int64(skv__db_stmt *st, int col)
{
    return st->db->ops->column_int64(st, col);
}

double skv__db_column_double(skv__db_stmt *st, int col)
{
    return st->db->ops->column_double(st, col);
}

const char *skv__db_column_text(skv__db_stmt *st, int col)
{
    return st->db->ops->column_text(st, col);
}

const void *skv__db_column_blob(skv__db_stmt *st, int col, size_t *len)
{
    return st->db->ops->column_blob(st, col, len);
}

bool skv__db_column_is_null(skv__db_stmt *st, int col)
{
    return st->db->ops->column_is_null(st, col);
}

int64_t skv__db_changes(skv__db_stmt *st)
{
    return st->db->ops->changes(st);
}
