/* session_history rows buffered for the transaction (history_buf.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_HISTORY_BUF_H
#define SKV_MANAGER_STORE_HISTORY_BUF_H

#include "db_impl.h"

/* Inside a transaction the row waits for skv__history_buf_flush (COMMIT
 * and every read of session_history run it); outside one it is written
 * at once. */
int skv__history_buf_add(skv__db *db, const char *sid, const char *status,
                         const char *reason, int64_t ts_ms, skv_error *err);
/* Write the rows not written yet, in the order they were added. */
int skv__history_buf_flush(skv__db *db, skv_error *err);
/* Where the buffer stands: rows held, rows of them written. */
void skv__history_buf_marks(const skv__db *db, size_t *rows, size_t *sent);
/* A unit rolled back to its marks: its rows go; rows of earlier units
 * that it wrote (its ROLLBACK TO undid them) wait to be written again. */
void skv__history_buf_undo(skv__db *db, size_t rows, size_t sent);
void skv__history_buf_clear(skv__db *db);   /* the transaction ended */
void skv__history_buf_free(skv__db *db);

/* db_unit.c, for db.c. */
bool skv__db_sql_writes(const char *sql);
int skv__db_unit_touch(skv__db *db, skv_error *err);
void skv__db_units_reset(skv__db *db);

/* "<head> (?,..),(?,..)<tail>" for rows x cols parameters into buf;
 * SKV_EINVAL when it does not fit or cols is not 1..SKV__DB_COLS_MAX
 * (multirow.c). */
#define SKV__DB_COLS_MAX 32
int skv__db_values_sql(char *buf, size_t cap, const char *head, int cols,
                       size_t rows, const char *tail, skv_error *err);
/* The largest chunk of at most SKV__DB_CHUNK_MAX rows that is a power of
 * two not above n: flushing n rows prepares at most 7 distinct texts. */
#define SKV__DB_CHUNK_MAX 64
size_t skv__db_chunk(size_t n);

#endif
