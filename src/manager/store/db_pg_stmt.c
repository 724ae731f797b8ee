/* db.h's statements on PostgreSQL: the common SQL's `?` rewritten to
 * `$n`, named server-side prepared statements cached by SQL text (like
 * db_sqlite.c's cache), and each run's whole result fetched at once so a
 * nested statement can run on the same connection while an outer one is
 * still being stepped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db_pg_int.h"
#include "skv_internal.h"

/* Skip a quoted run ('..' with '' inside, or ".."); returns the closing
 * quote or the terminating NUL. */
static const char *skip_quoted(const char *p)
{
    char q = *p++;
    for (; *p; p++)
        if (*p == q) {
            if (p[1] != q)
                return p;
            p++;
        }
    return p - 1;
}

static const char *skip_comment(const char *p)
{
    if (p[0] == '-' && p[1] == '-') {
        const char *nl = strchr(p, '\n');
        return nl ? nl : p + strlen(p) - 1;
    }
    const char *end = strstr(p + 2, "*/");
    return end ? end + 1 : p + strlen(p) - 1;
}

static bool is_comment(const char *p)
{
    return (p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*');
}

/* Each `?` becomes at most 6 more bytes ($32767); the buffer is sized for
 * the worst case up front. */
char *skv__pg_rewrite(const char *sql, int *nparams)
{
    size_t n = strlen(sql), q = 0;
    for (size_t i = 0; i < n; i++)
        q += sql[i] == '?';
    char *out = skv__malloc(n + q * 6 + 1), *w = out;
    if (!out)
        return NULL;
    int k = 0;
    for (const char *p = sql; *p; p++) {
        const char *from = p;
        if (*p == '\'' || *p == '"')
            p = skip_quoted(p);
        else if (is_comment(p))
            p = skip_comment(p);
        else if (*p == '?') {
            w += sprintf(w, "$%d", ++k);
            continue;
        }
        memcpy(w, from, (size_t)(p - from) + 1);
        w += p - from + 1;
    }
    *w = '\0';
    *nparams = k;
    return out;
}

static uint64_t sql_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static pg_stmt *cache_find(pg_db *d, const char *sql, uint64_t h)
{
    for (size_t i = 0; i < d->n_cache; i++)
        if (d->cache[i]->hash == h && !strcmp(d->cache[i]->sql, sql))
            return d->cache[i];
    return NULL;
}

void skv__pg_free_stmt(pg_stmt *s)
{
    if (!s)
        return;
    skv__pg_clear_row(s);
    skv__pg_clear_binds(s);
    PQclear(s->res);
    skv__free(s->values);
    skv__free(s->lengths);
    skv__free(s->formats);
    skv__free(s->types);
    skv__free(s->blobs);
    skv__free(s->sql);
    skv__free(s->pg_sql);
    skv__free(s);
}

/* INSERT, UPDATE or DELETE without RETURNING: nothing to read but a
 * count, so it may wait in the pipeline (db_pg_pipe.c). RETURNING
 * anywhere in the text (even quoted) keeps it synchronous. */
static bool writes_only(const char *sql)
{
    while (*sql == ' ' || *sql == '\n' || *sql == '\t')
        sql++;
    static const char *const verbs[] = {"INSERT ", "UPDATE ", "DELETE "};
    bool w = false;
    for (size_t i = 0; i < 3; i++)
        w = w || !strncasecmp(sql, verbs[i], strlen(verbs[i]));
    return w && !strcasestr(sql, "RETURNING");
}

static pg_stmt *stmt_new(skv__db *db, const char *sql)
{
    pg_stmt *s = skv__calloc(1, sizeof(*s));
    if (!s || !(s->pg_sql = skv__pg_rewrite(sql, &s->nparams)))
        goto fail;
    size_t n = s->nparams ? (size_t)s->nparams : 1;
    s->values = skv__calloc(n, sizeof(*s->values));
    s->lengths = skv__calloc(n, sizeof(*s->lengths));
    s->formats = skv__calloc(n, sizeof(*s->formats));
    s->types = skv__calloc(n, sizeof(*s->types));
    if (!s->values || !s->lengths || !s->formats || !s->types)
        goto fail;
    s->base.db = db;
    s->row = -1;
    s->pend = -1;
    s->no_rows = writes_only(s->pg_sql);
    return s;
fail:
    skv__pg_free_stmt(s);
    return NULL;
}

/* Parse on the server: 0, or 1 when a parameter's type is not fixed by
 * the text alone (`? IS NULL`, SQLSTATE 42P18), or a negative SKV_E*. */
static int server_prepare(pg_db *d, pg_stmt *s, const char *name,
                          const Oid *types, skv_error *err)
{
    d->base.stats.round_trips++;
    PGresult *r = PQprepare(d->conn, name, s->pg_sql, s->nparams, types);
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    int rc = 0;
    if (r && PQresultStatus(r) == PGRES_COMMAND_OK)
        snprintf(s->name, sizeof(s->name), "%s", name);
    else if (state && !strcmp(state, "42P18"))
        rc = 1;
    else
        rc = skv__pg_error(d->conn, r, err, s->pg_sql);
    PQclear(r);
    return rc;
}

/* A deferred statement is prepared at its first run with the types of
 * that run's binds; a NULL there gives no type, so if the server still
 * cannot tell, the untyped ones are taken as text (what PostgreSQL does
 * for an untyped literal). */
static int prepare_typed(pg_db *d, pg_stmt *s, skv_error *err)
{
    char name[32];
    snprintf(name, sizeof(name), "skv_%u", ++d->next_name);
    int rc = server_prepare(d, s, name, s->types, err);
    if (rc == 1) {
        for (int i = 0; i < s->nparams; i++)
            if (!s->types[i])
                s->types[i] = 25; /* TEXTOID */
        rc = server_prepare(d, s, name, s->types, err);
    }
    if (rc == 1)
        rc = skv__err(err, SKV_EIO, "manager database: %.80s: could not "
                      "determine the parameters' types", s->pg_sql);
    if (!rc)
        s->deferred = false;
    return rc;
}

/* Cached statements get a name of their own; one that cannot be cached
 * (the cache is full, or its cached copy is busy) is checked through the
 * unnamed statement and run with PQexecParams, so it leaves nothing on
 * the server to deallocate. */
int skv__pg_prepare(skv__db *db, const char *sql, skv__db_stmt **out,
                    skv_error *err)
{
    pg_db *d = skv__pg_db(db);
    uint64_t h = sql_hash(sql);
    pg_stmt *s = cache_find(d, sql, h);
    if (s && !s->busy) {
        s->busy = true;
        *out = &s->base;
        return 0;
    }
    bool keep = !s && d->n_cache < SKV__PG_CACHE_MAX;
    if (!(s = stmt_new(db, sql)) || (keep && !(s->sql = skv__strdup(sql)))) {
        skv__pg_free_stmt(s);
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    }
    char name[32] = "";
    if (keep)
        snprintf(name, sizeof(name), "skv_%u", ++d->next_name);
    /* Parsing is synchronous: what is queued goes first. */
    int rc = skv__pg_sync(d, NULL, err);
    if (!rc)
        rc = server_prepare(d, s, name, NULL, err);
    s->deferred = rc == 1;
    if (rc < 0) {
        skv__pg_free_stmt(s);
        return rc;
    }
    s->hash = h;
    s->busy = true;
    if (keep)
        d->cache[d->n_cache++] = s;
    *out = &s->base;
    return 0;
}

void skv__pg_reset(skv__db_stmt *st)
{
    pg_stmt *s = skv__pg_stmt(st);
    skv__pg_detach(s);
    skv__pg_clear_row(s);
    PQclear(s->res);
    s->res = NULL;
    s->row = -1;
    s->unread = false;
    skv__pg_clear_binds(s);
}

void skv__pg_rows_unread(skv__db_stmt *st)
{
    skv__pg_stmt(st)->unread = true;
}

void skv__pg_done(skv__db_stmt *st)
{
    pg_stmt *s = skv__pg_stmt(st);
    skv__pg_reset(st);
    s->busy = false;
    if (!s->sql)
        skv__pg_free_stmt(s);
}

static PGresult *run(pg_db *d, pg_stmt *s, skv_error *err, int *rc)
{
    const char *const *vals = (const char *const *)s->values;
    if (s->deferred && s->sql && (*rc = prepare_typed(d, s, err)))
        return NULL;
    d->base.stats.round_trips++;
    if (s->sql)
        return PQexecPrepared(d->conn, s->name, s->nparams, vals, s->lengths,
                              s->formats, 0);
    return PQexecParams(d->conn, s->pg_sql, s->nparams,
                        s->deferred ? s->types : NULL, vals, s->lengths,
                        s->formats, 0);
}

/* With deferred errors (db_pg_pipe.c): a write waits in the pipeline,
 * and so does a statement whose rows nobody reads (db.h
 * skv__db_rows_unread); anything else is sent after what waits and read
 * with it. A statement
 * whose parameter types are set by its first run is parsed first. */
static int execute_queued(pg_db *d, pg_stmt *s, skv_error *err)
{
    int rc = skv__pg_failed(d, err);
    if (!rc && s->deferred && s->sql &&
        !(rc = skv__pg_sync(d, NULL, err)))
        rc = prepare_typed(d, s, err);
    if (!rc)
        rc = skv__pg_queue(d, s, NULL, true, err);
    if (rc)
        return rc;
    if ((s->no_rows || s->unread) && d->n_pend < SKV__PG_PIPE_MAX) {
        s->ran = true;
        return 0;
    }
    PGresult *r = NULL;
    if ((rc = skv__pg_sync(d, &r, err)))
        return rc;
    s->ran = true;
    if (PQresultStatus(r) == PGRES_TUPLES_OK) /* a count was kept already */
        s->res = r;
    else
        PQclear(r);
    return 0;
}

/* The first step runs the statement and keeps its result; later steps
 * walk the rows. */
static int execute(pg_stmt *s, skv_error *err)
{
    pg_db *d = skv__pg_db(s->base.db);
    if (skv__pg_queueing(d))
        return execute_queued(d, s, err);
    int rc = 0;
    PGresult *r = run(d, s, err, &rc);
    if (rc)
        return rc;
    ExecStatusType t = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK) {
        rc = skv__pg_error(d->conn, r, err, s->pg_sql);
        PQclear(r);
        return rc;
    }
    s->res = r;
    const char *n = PQcmdTuples(r);
    s->changes = n && *n ? strtoll(n, NULL, 10) : 0;
    return 0;
}

int skv__pg_step(skv__db_stmt *st, skv_error *err)
{
    pg_stmt *s = skv__pg_stmt(st);
    if (!s->res && !s->ran) {
        int rc = execute(s, err);
        if (rc)
            return rc;
    }
    skv__pg_clear_row(s);
    int n = s->res ? PQntuples(s->res) : 0;
    if (s->row + 1 >= n) {
        s->row = n;
        return SKV__DB_DONE;
    }
    s->row++;
    return SKV__DB_ROW;
}
