/* The engine table behind db.h: each engine (db_sqlite.c, db_pg.c) fills
 * one and embeds skv__db / skv__db_stmt first in its own structs, so db.c
 * only dispatches.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_DB_IMPL_H
#define SKV_MANAGER_STORE_DB_IMPL_H

#include "db.h"

#define SKV__DB_UNITS_MAX 8

typedef struct skv__db_ops {
    skv__db_kind kind;
    void (*close)(skv__db *db);
    int (*exec)(skv__db *db, const char *sql, skv_error *err);
    int (*begin)(skv__db *db, skv_error *err);
    int (*commit)(skv__db *db, skv_error *err);
    void (*rollback)(skv__db *db);
    bool (*in_transaction)(skv__db *db);
    void (*defer_errors)(skv__db *db);  /* NULL: errors are never late */
    void (*defer_releases)(skv__db *db);    /* NULL: likewise */
    int (*prepare)(skv__db *db, const char *sql, skv__db_stmt **out,
                   skv_error *err);
    void (*done)(skv__db_stmt *st);
    void (*reset)(skv__db_stmt *st);
    void (*bind_int64)(skv__db_stmt *st, int i, int64_t v);
    void (*bind_double)(skv__db_stmt *st, int i, double v);
    void (*bind_text)(skv__db_stmt *st, int i, const char *s);
    void (*bind_blob)(skv__db_stmt *st, int i, const void *p, size_t n);
    void (*bind_null)(skv__db_stmt *st, int i);
    int (*step)(skv__db_stmt *st, skv_error *err);
    void (*rows_unread)(skv__db_stmt *st);  /* NULL: nothing to gain */
    int64_t (*column_int64)(skv__db_stmt *st, int col);
    double (*column_double)(skv__db_stmt *st, int col);
    const char *(*column_text)(skv__db_stmt *st, int col);
    const void *(*column_blob)(skv__db_stmt *st, int col, size_t *len);
    bool (*column_is_null)(skv__db_stmt *st, int col);
    int64_t (*changes)(skv__db_stmt *st);
} skv__db_ops;

struct skv__db {
    const skv__db_ops *ops;
    skv__db_begin_hook on_begin;  /* NULL: none (db.h) */
    void *on_begin_arg;
    /* The session-state cache (state_cache.h) and its validity: bumped by
     * every rollback, failed commit and fence, all in db.c / tx.c. */
    struct skv__state_cache *states;
    struct skv__kernel_cache *kernels;    /* the same epoch: kernel_cache.h */
    struct skv__dispatch_cache *dispatch; /* and dispatch_cache.h */
    struct skv__create_cache *create;     /* and create_cache.h */
    uint64_t epoch;
    /* Units (db_unit.c): savepoints asked for, sent at the first write;
     * each remembers where the history buffer stood when it began. */
    struct skv__db_unit {
        bool sent;            /* its SAVEPOINT went to the engine */
        size_t rows, rows_sent;   /* history_buf.c's marks */
        size_t held, held_sent;   /* row_buf.c's */
    } units[SKV__DB_UNITS_MAX];
    int n_units;
    skv__db_stats stats;
    struct skv__history_buf *history;   /* history_buf.c; NULL: empty */
    struct skv__row_buf *rows;          /* row_buf.c; NULL: empty */
    /* The open transaction's units fail only together (optimistic units,
     * skv__db_defer_releases): row_buf.c may hold status writes. */
    bool late_units;
    /* The admin answers of the submit path (admin_cache.h), valid in
     * the epoch they were noted in. */
    struct skv__admin_cache *admin_cache;
};

struct skv__db_stmt {
    skv__db *db;
    int bind_rc;      /* first failed bind, returned by the next step */
    bool writes;      /* not a SELECT: opens the pending units first */
    bool updates;     /* an UPDATE (counted in skv__db_stats) */
};

#endif
