/* db.h on SQLite: a thin mapping plus a statement cache, since the manager
 * runs the same few dozen statements for every session and preparing one
 * costs more than running it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>

#include "db_impl.h"
#include "skv_internal.h"

#define CACHE_MAX 128
/* Direct-mapped from the SQL text's address: a power of two above
 * CACHE_MAX so that the statements seldom share a slot. */
#define BY_ADDR 512

typedef struct lite_stmt {
    skv__db_stmt base;
    sqlite3_stmt *st;
    char *sql;            /* cache key; NULL for an uncached statement */
    uint64_t hash;
    bool busy;
    int64_t changes;
} lite_stmt;

typedef struct lite_db {
    skv__db base;
    sqlite3 *h;
    lite_stmt *cache[CACHE_MAX];
    size_t n_cache;
    /* Last statement found for an SQL text at this address (see
     * lite_prepare); a hint, checked against the text every time. */
    struct { const char *addr; lite_stmt *s; } by_addr[BY_ADDR];
} lite_db;

static lite_db *L(skv__db *db) { return (lite_db *)db; }
static lite_stmt *S(skv__db_stmt *st) { return (lite_stmt *)st; }

/* Map SQLite's result onto SKV_E*: callers tell "exists" from "busy". */
static int lite_err(sqlite3 *h, skv_error *err, const char *what)
{
    int code = sqlite3_errcode(h) & 0xff;
    int rc = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? SKV_EBUSY
             : (code == SQLITE_CONSTRAINT)                 ? SKV_EEXIST
                                                           : SKV_EIO;
    return skv__err(err, rc, "manager database: %.80s: %s", what,
                    sqlite3_errmsg(h));
}

static void lite_free_stmt(lite_stmt *s)
{
    sqlite3_finalize(s->st);
    skv__free(s->sql);
    skv__free(s);
}

static void lite_close(skv__db *db)
{
    for (size_t i = 0; i < L(db)->n_cache; i++)
        lite_free_stmt(L(db)->cache[i]);
    sqlite3_close_v2(L(db)->h);
    skv__free(db);
}

static int lite_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                        skv_error *err);
static int lite_step(skv__db_stmt *st, skv_error *err);
static void lite_done(skv__db_stmt *st);

/* The transaction statements run for every unit of every batch (a
 * savepoint and its release per state change): compiled once, from the
 * statement cache, instead of by sqlite3_exec every time. */
static bool tx_statement(const char *sql)
{
    return !strncmp(sql, "SAVEPOINT ", 10) || !strncmp(sql, "RELEASE ", 8) ||
           !strncmp(sql, "ROLLBACK TO ", 12) ||
           !strcmp(sql, "BEGIN IMMEDIATE") || !strcmp(sql, "COMMIT");
}

static int lite_exec_cached(skv__db *db, const char *sql, skv_error *err)
{
    skv__db_stmt *st;
    int rc = lite_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    rc = lite_step(st, err);
    lite_done(st);
    return rc == SKV__DB_DONE || rc == SKV__DB_ROW ? 0 : rc;
}

static int lite_exec(skv__db *db, const char *sql, skv_error *err)
{
    if (tx_statement(sql))
        return lite_exec_cached(db, sql, err);
    char *msg = NULL;
    if (sqlite3_exec(L(db)->h, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    int rc = lite_err(L(db)->h, err, sql);
    sqlite3_free(msg);
    return rc;
}

static int lite_begin(skv__db *db, skv_error *err)
{
    return lite_exec(db, "BEGIN IMMEDIATE", err);
}

static void lite_rollback(skv__db *db)
{
    if (!sqlite3_get_autocommit(L(db)->h))
        sqlite3_exec(L(db)->h, "ROLLBACK", NULL, NULL, NULL);
}

static int lite_commit(skv__db *db, skv_error *err)
{
    int rc = lite_exec(db, "COMMIT", err);
    if (rc)
        lite_rollback(db);
    return rc;
}

static bool lite_in_transaction(skv__db *db)
{
    return !sqlite3_get_autocommit(L(db)->h);
}

static uint64_t sql_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static lite_stmt *cache_find(lite_db *d, const char *sql, uint64_t h)
{
    for (size_t i = 0; i < d->n_cache; i++)
        if (d->cache[i]->hash == h && !strcmp(d->cache[i]->sql, sql))
            return d->cache[i];
    return NULL;
}

/* Keep a new statement if there is room and its text is not cached yet
 * (a nested use of a cached statement gets a private copy). */
static void cache_keep(lite_db *d, lite_stmt *s, const char *sql, uint64_t h)
{
    if (d->n_cache == CACHE_MAX || cache_find(d, sql, h))
        return;
    if (!(s->sql = skv__strdup(sql)))
        return;
    s->hash = h;
    d->cache[d->n_cache++] = s;
}

static size_t addr_slot(const char *sql)
{
    return (size_t)(((uintptr_t)sql * 0x9e3779b97f4a7c15u) >> 32) % BY_ADDR;
}

/* Nearly every statement's text is a string constant, passed from the
 * same address each time: remembering the statement by address spares
 * hashing the text and scanning the cache (~1.5 % of the manager's CPU at
 * 1,000 agents). A text built in a buffer may reuse an address with
 * other words, so a hit still compares the text (far cheaper than the
 * byte-wise hash). */
static lite_stmt *cache_lookup(lite_db *d, const char *sql)
{
    size_t i = addr_slot(sql);
    if (d->by_addr[i].addr == sql && !strcmp(d->by_addr[i].s->sql, sql))
        return d->by_addr[i].s;
    lite_stmt *s = cache_find(d, sql, sql_hash(sql));
    if (s) {
        d->by_addr[i].addr = sql;
        d->by_addr[i].s = s;
    }
    return s;
}

static int lite_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                        skv_error *err)
{
    lite_stmt *s = cache_lookup(L(db), sql);
    if (s && !s->busy) {
        s->busy = true;
        *out = &s->base;
        return 0;
    }
    if (!(s = skv__calloc(1, sizeof(*s))))
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    if (sqlite3_prepare_v3(L(db)->h, sql, -1, SQLITE_PREPARE_PERSISTENT,
                           &s->st, NULL) != SQLITE_OK) {
        skv__free(s);
        return lite_err(L(db)->h, err, sql);
    }
    s->base.db = db;
    s->busy = true;
    cache_keep(L(db), s, sql, sql_hash(sql));
    *out = &s->base;
    return 0;
}

static void lite_reset(skv__db_stmt *st)
{
    sqlite3_reset(S(st)->st);
    sqlite3_clear_bindings(S(st)->st);
}

static void lite_done(skv__db_stmt *st)
{
    lite_reset(st);
    S(st)->busy = false;
    if (!S(st)->sql)
        lite_free_stmt(S(st));
}

/* SQLite reports a bad index or no memory at bind time; keep the first. */
static void bound(skv__db_stmt *st, int rc)
{
    if (rc != SQLITE_OK && !st->bind_rc)
        st->bind_rc = rc == SQLITE_NOMEM ? SKV_ENOMEM : SKV_EINVAL;
}

static void lite_bind_int64(skv__db_stmt *st, int i, int64_t v)
{
    bound(st, sqlite3_bind_int64(S(st)->st, i, v));
}

static void lite_bind_double(skv__db_stmt *st, int i, double v)
{
    bound(st, sqlite3_bind_double(S(st)->st, i, v));
}

static void lite_bind_text(skv__db_stmt *st, int i, const char *s)
{
    bound(st, sqlite3_bind_text(S(st)->st, i, s, -1, SQLITE_TRANSIENT));
}

static void lite_bind_blob(skv__db_stmt *st, int i, const void *p, size_t n)
{
    bound(st, sqlite3_bind_blob64(S(st)->st, i, p, n, SQLITE_TRANSIENT));
}

static void lite_bind_null(skv__db_stmt *st, int i)
{
    bound(st, sqlite3_bind_null(S(st)->st, i));
}

static int lite_step(skv__db_stmt *st, skv_error *err)
{
    sqlite3 *h = L(st->db)->h;
    int rc = sqlite3_step(S(st)->st);
    if (rc == SQLITE_ROW)
        return SKV__DB_ROW;
    if (rc == SQLITE_DONE) {
        S(st)->changes = sqlite3_changes64(h);
        return SKV__DB_DONE;
    }
    return lite_err(h, err, sqlite3_sql(S(st)->st));
}

static int64_t lite_column_int64(skv__db_stmt *st, int col)
{
    return sqlite3_column_int64(S(st)->st, col);
}

static double lite_column_double(skv__db_stmt *st, int col)
{
    return sqlite3_column_double(S(st)->st, col);
}

static const char *lite_column_text(skv__db_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(S(st)->st, col);
}

static const void *lite_column_blob(skv__db_stmt *st, int col, size_t *len)
{
    const void *p = sqlite3_column_blob(S(st)->st, col);
    *len = p ? (size_t)sqlite3_column_bytes(S(st)->st, col) : 0;
    return p;
}

static bool lite_column_is_null(skv__db_stmt *st, int col)
{
    return sqlite3_column_type(S(st)->st, col) == SQLITE_NULL;
}

static int64_t lite_changes(skv__db_stmt *st)
{
    return S(st)->changes;
}

static const skv__db_ops lite_ops = {
    .kind = SKV__DB_SQLITE,
    .close = lite_close,
    .exec = lite_exec,
    .begin = lite_begin,
    .commit = lite_commit,
    .rollback = lite_rollback,
    .in_transaction = lite_in_transaction,
    .prepare = lite_prepare,
    .done = lite_done,
    .reset = lite_reset,
    .bind_int64 = lite_bind_int64,
    .bind_double = lite_bind_double,
    .bind_text = lite_bind_text,
    .bind_blob = lite_bind_blob,
    .bind_null = lite_bind_null,
    .step = lite_step,
    .column_int64 = lite_column_int64,
    .column_double = lite_column_double,
    .column_text = lite_column_text,
    .column_blob = lite_column_blob,
    .column_is_null = lite_column_is_null,
    .changes = lite_changes,
};

int skv__db_wrap_sqlite(sqlite3 *handle, skv__db **out, skv_error *err)
{
    lite_db *d = skv__calloc(1, sizeof(*d));
    if (!d) {
        sqlite3_close_v2(handle);
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    }
    d->base.ops = &lite_ops;
    d->h = handle;
    *out = &d->base;
    return 0;
}

sqlite3 *skv__db_sqlite(skv__db *db)
{
    return db && db->ops == &lite_ops ? L(db)->h : NULL;
}
