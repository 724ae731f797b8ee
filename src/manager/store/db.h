/* The manager store's one door to its SQL engine: SQLite (embedded, the
 * default) or PostgreSQL (libpq). Only src/manager/store/ includes this.
 *
 * The shape follows SQLite's prepare/bind/step/column cycle because every
 * store function was written that way; a backend maps it onto its engine
 * (db_sqlite.c, db_pg.c) through the table in db_impl.h.
 *
 * SQL passed here is the common subset both engines run unchanged:
 *  - positional `?` placeholders only (no ?NNN, :name, $n);
 *  - upserts as INSERT ... ON CONFLICT (cols) DO UPDATE SET c = excluded.c
 *    or DO NOTHING (no INSERT OR REPLACE / OR IGNORE); RETURNING for ids;
 *  - COALESCE not IFNULL; no scalar MIN(a,b)/MAX(a,b); no rowid; no PRAGMA;
 *    no date functions (times are integers the manager passes in);
 *  - booleans are integers 0/1; blobs are bound and read as blobs.
 * Schema DDL differs per engine and lives in each engine's migrations.
 *
 * Not thread-safe: one skv__db belongs to one manager (one thread).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_DB_H
#define SKV_MANAGER_STORE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

typedef struct skv__db skv__db;
typedef struct skv__db_stmt skv__db_stmt;
typedef struct sqlite3 sqlite3;

typedef enum skv__db_kind {
    SKV__DB_SQLITE = 1,
    SKV__DB_POSTGRES = 2
} skv__db_kind;

/* skv__db_step's results; errors are negative SKV_E*. */
enum { SKV__DB_DONE = 0, SKV__DB_ROW = 1 };

/* ---- connections -------------------------------------------------------- */
/* Take ownership of an open SQLite handle (store_open.c opens and checks
 * the file; that logic is SQLite's own). On error the handle is closed. */
int skv__db_wrap_sqlite(sqlite3 *handle, skv__db **out, skv_error *err);
/* Connect with a libpq connection string or postgresql:// URI (db_pg.c). */
int skv__db_open_postgres(const char *conninfo, skv__db **out,
                          skv_error *err);
/* Finalize every statement and close; NULL is fine. */
void skv__db_close(skv__db *db);
skv__db_kind skv__db_kind_of(const skv__db *db);
/* The SQLite handle for SQLite-only maintenance (integrity check, online
 * backup); NULL on other engines. */
sqlite3 *skv__db_sqlite(skv__db *db);

/* Run one or more statements without parameters or results (DDL). */
int skv__db_exec(skv__db *db, const char *sql, skv_error *err);

/* ---- transactions ------------------------------------------------------- */
/* BEGIN (SQLite: IMMEDIATE, so a writer waits at BEGIN, not at COMMIT). */
int skv__db_begin(skv__db *db, skv_error *err);
/* A failed COMMIT rolls back before returning. */
int skv__db_commit(skv__db *db, skv_error *err);
void skv__db_rollback(skv__db *db);
bool skv__db_in_transaction(skv__db *db);
/* Let the transaction that is open, or else the next one BEGIN opens,
 * report a statement's failure late: a statement that returns no rows
 * (INSERT, UPDATE, DELETE without RETURNING; SAVEPOINT) may succeed at
 * its step and its error come from the next statement that returns rows,
 * skv__db_changes, a savepoint's release, or COMMIT, which then fail with
 * that first error (so does every statement after it, until the
 * transaction or the savepoint it failed under is rolled back). For a
 * caller that undoes all of a unit's effects whenever its release or
 * commit fails (the manager's batch, mgr_batch.c); it lets PostgreSQL
 * send such statements in one pipeline (db_pg_pipe.c). Ends with the
 * transaction. SQLite reports every error at once, which keeps it. */
void skv__db_defer_errors(skv__db *db);
/* Deferred errors, and more: a unit's release does not wait for the
 * writes under it either, so an error in any unit surfaces at the next
 * statement that needs an answer (a read, COMMIT) and fails the whole
 * transaction. For a caller that undoes the whole transaction's effects
 * when its COMMIT fails and runs the next one without this, to refuse
 * the failing unit alone (the manager's batch, mgr_batch.c). Ends with
 * the transaction; a no-op on SQLite, whose errors are never late. */
void skv__db_defer_releases(skv__db *db);
/* Run fn inside every transaction right after BEGIN; when it fails the
 * transaction is rolled back and BEGIN fails with its error. The lease
 * installs the leader's epoch check here (lease.c), so no write
 * transaction, whoever opens it, can skip the fence. NULL removes it. */
typedef int (*skv__db_begin_hook)(skv__db *db, void *arg, skv_error *err);
void skv__db_on_begin(skv__db *db, skv__db_begin_hook fn, void *arg);

/* ---- units: savepoints paid for only when written ------------------------ */
/* A unit of the open transaction (SAVEPOINT skv_unit, undone alone). Its
 * SAVEPOINT is sent only before the first statement that writes (any
 * statement but a SELECT; on PostgreSQL any statement at all, since a
 * failed read there aborts the transaction and only a savepoint saves
 * the units around it), so a unit that writes nothing costs no
 * SAVEPOINT and no RELEASE. Units nest (SKV__DB_UNITS_MAX levels). */
int skv__db_unit_begin(skv__db *db, skv_error *err);
/* RELEASE when it was sent; its deferred errors (db.h) come here. */
int skv__db_unit_release(skv__db *db, skv_error *err);
/* ROLLBACK TO + RELEASE when it was sent; its buffered history rows go. */
void skv__db_unit_rollback(skv__db *db);

/* Counters for tests and the bench. */
typedef struct skv__db_stats {
    uint64_t units;        /* skv__db_unit_begin calls */
    uint64_t savepoints;   /* SAVEPOINTs sent */
    uint64_t steps;        /* skv__db_step calls */
    uint64_t writes;       /* of them, first steps of writing statements */
    uint64_t updates;      /* of them, UPDATE statements */
    uint64_t round_trips;  /* PostgreSQL: waits for the server's answer */
} skv__db_stats;
const skv__db_stats *skv__db_stats_of(const skv__db *db);

/* ---- statements --------------------------------------------------------- */
/* Prepared statements are cached by SQL text and reused; a statement
 * already in use (a nested call) gets a fresh, uncached one. Give every
 * statement back with skv__db_done. */
int skv__db_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                    skv_error *err);
/* Reset, clear bindings and return to the cache (or free); NULL is fine. */
void skv__db_done(skv__db_stmt *st);
/* Rewind to run again, keeping the statement (bindings cleared). */
void skv__db_reset(skv__db_stmt *st);

/* Binding: index 1-based. Values are copied. A failed bind (no memory,
 * bad index) is remembered and returned by the next skv__db_step. */
void skv__db_bind_int64(skv__db_stmt *st, int i, int64_t v);
void skv__db_bind_double(skv__db_stmt *st, int i, double v);
void skv__db_bind_text(skv__db_stmt *st, int i, const char *s); /* NULL ok */
void skv__db_bind_blob(skv__db_stmt *st, int i, const void *p, size_t n);
void skv__db_bind_null(skv__db_stmt *st, int i);

/* SKV__DB_ROW, SKV__DB_DONE or a negative SKV_E*: SKV_EEXIST for a
 * uniqueness/constraint violation, SKV_EBUSY for lock contention, SKV_EIO
 * otherwise (the message names the statement and the engine's reason). */
int skv__db_step(skv__db_stmt *st, skv_error *err);

/* Columns of the current row, 0-based. NULL reads as 0 / NULL pointer.
 * Pointers stay valid until the next step, reset or done. */
int64_t skv__db_column_int64(skv__db_stmt *st, int col);
double skv__db_column_double(skv__db_stmt *st, int col);
const char *skv__db_column_text(skv__db_stmt *st, int col);
const void *skv__db_column_blob(skv__db_stmt *st, int col, size_t *len);
bool skv__db_column_is_null(skv__db_stmt *st, int col);
/* Rows written by the statement's last completed run; -1 when that run
 * was deferred (skv__db_defer_errors) and failed (the next statement
 * reports the error). */
int64_t skv__db_changes(skv__db_stmt *st);
/* Its next run's rows will not be read, only whether it failed: in a
 * transaction with deferred errors (PostgreSQL) it then waits in the
 * pipeline like a write, its step gives SKV__DB_DONE, and an error it
 * raises comes late, from the next statement that needs an answer or
 * from COMMIT. For a check whose failure the server raises as an error
 * (the lease's epoch check, lease.c). Reset forgets it; a no-op on
 * SQLite. */
void skv__db_rows_unread(skv__db_stmt *st);

#endif
