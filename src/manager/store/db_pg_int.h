/* db.h on PostgreSQL (libpq): the structs db_pg.c, db_pg_stmt.c and
 * db_pg_value.c share. Nothing outside these three files includes it.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_DB_PG_INT_H
#define SKV_MANAGER_STORE_DB_PG_INT_H

#include <libpq-fe.h>

#include "db_impl.h"

#define SKV__PG_CACHE_MAX 256
/* Statements queued in one pipeline at most before it is synced: bounds
 * the results either side buffers (db_pg_pipe.c). */
#define SKV__PG_PIPE_MAX 256
#define SKV__PG_SAVEPOINTS_MAX 16

typedef struct pg_stmt {
    skv__db_stmt base;
    char *sql;          /* the caller's text: cache key; NULL if uncached */
    char *pg_sql;       /* the text with `?` rewritten to `$n` */
    uint64_t hash;
    char name[32];      /* server-side statement name; "" until prepared */
    bool busy;
    bool deferred;      /* types unknown until the first bind (42P18) */
    int nparams;
    char **values;      /* bound values (text, or blob bytes) */
    int *lengths;
    int *formats;       /* 0 text, 1 binary (blobs) */
    Oid *types;         /* from the binds; only used when deferred */
    PGresult *res;      /* the whole result of the last run */
    int row;            /* current row in res; -1 before the first */
    unsigned char **blobs; /* decoded bytea of the current row, by column */
    int64_t changes;
    bool no_rows;       /* INSERT/UPDATE/DELETE without RETURNING */
    bool unread;        /* this run's rows are not wanted (db.h) */
    bool ran;           /* this run was queued: later steps give DONE */
    long pend;          /* its entry in the pipeline; -1: none */
} pg_stmt;

/* A statement sent in the pipeline whose result is not read yet. */
typedef struct pg_pending {
    pg_stmt *st;        /* gets its row count; NULL: none or given back */
    uint64_t seq;       /* order of sending, to place a savepoint */
    bool data;          /* not BEGIN, SAVEPOINT or RELEASE */
    char what[84];      /* the SQL's start, for the error message */
} pg_pending;

typedef struct pg_savepoint {
    char name[32];
    uint64_t seq;       /* its SAVEPOINT's place in the pipeline */
} pg_savepoint;

typedef struct pg_db {
    skv__db base;
    PGconn *conn;
    pg_stmt *cache[SKV__PG_CACHE_MAX];
    size_t n_cache;
    unsigned next_name;
    /* Deferred errors (skv__db_defer_errors, db_pg_pipe.c). */
    bool defer;         /* asked for, until the transaction ends */
    bool optimistic;    /* releases do not wait either (same span) */
    bool in_tx;         /* BEGIN sent (or queued) by pg_begin */
    pg_pending *pend;
    size_t n_pend, cap_pend;
    uint64_t seq;
    int fail_rc;        /* first error of a queued statement; sticks */
    uint64_t fail_seq;
    char fail_msg[SKV_ERROR_MESSAGE_MAX];
    char fail_what[84]; /* the failed statement's start */
    pg_savepoint sp[SKV__PG_SAVEPOINTS_MAX];
    int n_sp;
} pg_db;

static inline pg_db *skv__pg_db(skv__db *db) { return (pg_db *)db; }
static inline pg_stmt *skv__pg_stmt(skv__db_stmt *st) { return (pg_stmt *)st; }

/* Map a failed libpq call (res may be NULL) onto SKV_E*, naming `what`. */
int skv__pg_error(PGconn *conn, const PGresult *res, skv_error *err,
                  const char *what);
/* `?` -> `$n` outside quotes and comments; *nparams counts them. */
char *skv__pg_rewrite(const char *sql, int *nparams);

int skv__pg_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                    skv_error *err);
void skv__pg_done(skv__db_stmt *st);
void skv__pg_reset(skv__db_stmt *st);
int skv__pg_step(skv__db_stmt *st, skv_error *err);
void skv__pg_rows_unread(skv__db_stmt *st);
void skv__pg_free_stmt(pg_stmt *s);

/* The pipeline of a transaction with deferred errors (db_pg_pipe.c). */
void skv__pg_defer_errors(skv__db *db);
void skv__pg_defer_releases(skv__db *db);
/* Statements may be queued now: deferred errors asked for, BEGIN sent. */
bool skv__pg_queueing(const pg_db *d);
/* The sticky error of a queued statement as rc/err; 0 when none. */
int skv__pg_failed(pg_db *d, skv_error *err);
/* Send s (bound) or, when s is NULL, the parameterless sql; data: it
 * reads or writes rows (not BEGIN, SAVEPOINT, RELEASE). */
int skv__pg_queue(pg_db *d, pg_stmt *s, const char *sql, bool data,
                  skv_error *err);
/* Sync the pipeline and read every queued result; the first error sticks
 * and is returned. *last (when not NULL) gets the last statement's result
 * on success, to be cleared by the caller. */
int skv__pg_sync(pg_db *d, PGresult **last, skv_error *err);
/* A statement given back or rewound: its queued result is nobody's. */
void skv__pg_detach(pg_stmt *s);
/* SAVEPOINT, RELEASE, ROLLBACK TO while queueing; 1: not one of them
 * (run it as usual after a sync). */
int skv__pg_exec_queued(pg_db *d, const char *sql, skv_error *err);
int skv__pg_commit_queued(pg_db *d, skv_error *err);
/* The transaction ended: forget the pipeline's state. */
void skv__pg_pipe_end(pg_db *d);

/* Values: bound parameters in, decoded columns out (db_pg_value.c). */
void skv__pg_clear_binds(pg_stmt *s);
void skv__pg_clear_row(pg_stmt *s);
void skv__pg_bind_int64(skv__db_stmt *st, int i, int64_t v);
void skv__pg_bind_double(skv__db_stmt *st, int i, double v);
void skv__pg_bind_text(skv__db_stmt *st, int i, const char *s);
void skv__pg_bind_blob(skv__db_stmt *st, int i, const void *p, size_t n);
void skv__pg_bind_null(skv__db_stmt *st, int i);
int64_t skv__pg_column_int64(skv__db_stmt *st, int col);
double skv__pg_column_double(skv__db_stmt *st, int col);
const char *skv__pg_column_text(skv__db_stmt *st, int col);
const void *skv__pg_column_blob(skv__db_stmt *st, int col, size_t *len);
bool skv__pg_column_is_null(skv__db_stmt *st, int col);

#endif
