/* db.h on PostgreSQL (libpq): the structs db_pg.c, db_pg_stmt.c and
 * db_pg_value.c share. Nothing outside these three files includes it.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_DB_PG_INT_H
#define SKV_MANAGER_STORE_DB_PG_INT_H

#include <libpq-fe.h>

#include "db_impl.h"

#define SKV__PG_CACHE_MAX 128

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
} pg_stmt;

typedef struct pg_db {
    skv__db base;
    PGconn *conn;
    pg_stmt *cache[SKV__PG_CACHE_MAX];
    size_t n_cache;
    unsigned next_name;
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
void skv__pg_free_stmt(pg_stmt *s);

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
