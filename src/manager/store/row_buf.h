/* Status writes of sessions and kernels rows held for the transaction
 * (row_buf.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_ROW_BUF_H
#define SKV_MANAGER_STORE_ROW_BUF_H

#include "db_impl.h"

/* The live marker (schema.c, core step 3): left as it is, set, cleared. */
enum { SKV__ROW_LIVE_KEEP, SKV__ROW_LIVE_SET, SKV__ROW_LIVE_CLEAR };

/* One status write. Sessions: status, status_reason (always), started_ms
 * when not set yet, finished_ms and exit_code when given. Kernels:
 * status, container_id when not NULL, exit_code with reason when
 * has_exit. Strings are copied. */
typedef struct skv__row_write {
    bool kernel;            /* a kernels row, else a sessions row */
    const char *id, *status, *reason, *container;
    bool has_started, has_finished, has_exit;
    int64_t started_ms, finished_ms, exit_code;
    int live;
} skv__row_write;

/* Held while the transaction's units fail only together (db.c: the
 * optimistic units of skv__db_defer_releases), written at once
 * otherwise, so that a failing write still fails its own unit, and when
 * the caller asks for the row count (changes not NULL). Held
 * writes of one row go out as one UPDATE (skv__row_buf_flush). */
int skv__row_buf_add(skv__db *db, const skv__row_write *w, int64_t *changes,
                     skv_error *err);
/* The held writes, one UPDATE per row, before COMMIT and before any
 * statement that may read or change these rows (skv__row_buf_before). */
int skv__row_buf_flush(skv__db *db, skv_error *err);
/* Flush first when sql names sessions or kernels (but only inserts new
 * rows) or deletes (cascades); nothing to do when nothing is held. */
int skv__row_buf_before(skv__db *db, const char *sql, skv_error *err);
/* Marks and undo, as history_buf.h's, for units (db_unit.c). */
void skv__row_buf_marks(const skv__db *db, size_t *rows, size_t *sent);
void skv__row_buf_undo(skv__db *db, size_t rows, size_t sent);
void skv__row_buf_clear(skv__db *db);
void skv__row_buf_free(skv__db *db);

#endif
