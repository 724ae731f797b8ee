/* Deferred errors on PostgreSQL (db.h skv__db_defer_errors): libpq's
 * pipeline mode. Without it every statement is one synchronous round trip
 * to the server, and a session's ~20 writes and ~13 savepoint statements
 * cost as much waiting as its reads. In a transaction that asked for
 * deferred errors, BEGIN, SAVEPOINT and statements that return no rows
 * are sent without waiting; the next statement that needs an answer (one
 * that returns rows, a row count asked for, the RELEASE of a savepoint
 * with writes queued under it, COMMIT, anything else) is sent after them,
 * followed by a Sync, and all their results are read in one round trip.
 *
 * Errors: after a failed statement the server skips the rest of the
 * pipeline up to the Sync (PGRES_PIPELINE_ABORTED) and the transaction is
 * aborted, so the first error is kept ("sticky") and returned by that
 * statement that needed an answer and by every later one, without asking
 * the server, until a rollback undoes it: ROLLBACK, or ROLLBACK TO a
 * savepoint that was sent before the failed statement (one sent after it
 * never ran). A release therefore never reports success for writes that
 * failed under it, which keeps a unit of the manager's batch as exact as
 * with immediate errors; COMMIT fails and rolls back if anything failed.
 * A connection lost mid-pipeline is the same error as when idle.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db_pg_int.h"
#include "skv_internal.h"

void skv__pg_defer_errors(skv__db *db)
{
    skv__pg_db(db)->defer = true;
}

void skv__pg_defer_releases(skv__db *db)
{
    skv__pg_db(db)->defer = true;
    skv__pg_db(db)->optimistic = true;
}

bool skv__pg_queueing(const pg_db *d)
{
    return d->defer && d->in_tx;
}

int skv__pg_failed(pg_db *d, skv_error *err)
{
    return d->fail_rc ? skv__err(err, d->fail_rc, "%s", d->fail_msg) : 0;
}

static void stick(pg_db *d, int rc, const skv_error *e, uint64_t seq,
                  const char *what)
{
    if (d->fail_rc)
        return;     /* the first error is the one that matters */
    d->fail_rc = rc;
    d->fail_seq = seq;
    snprintf(d->fail_msg, sizeof d->fail_msg, "%s", e->message);
    snprintf(d->fail_what, sizeof d->fail_what, "%s", what);
}

/* A server that ends the session answers the statement at hand with its
 * FATAL message before libpq sees the socket close; once it has, the
 * error says what happened, as it does outside a pipeline. */
static void say_lost(pg_db *d)
{
    if (!d->fail_rc || PQstatus(d->conn) != CONNECTION_BAD)
        return;
    skv_error e = SKV_ERROR_INIT;
    d->fail_rc = skv__pg_error(d->conn, NULL, &e, d->fail_what);
    snprintf(d->fail_msg, sizeof d->fail_msg, "%s", e.message);
}

void skv__pg_detach(pg_stmt *s)
{
    pg_db *d = skv__pg_db(s->base.db);
    if (s->pend >= 0 && (size_t)s->pend < d->n_pend &&
        d->pend[s->pend].st == s)
        d->pend[s->pend].st = NULL;
    s->pend = -1;
    s->ran = false;
}

static int send_stmt(pg_db *d, pg_stmt *s)
{
    const char *const *vals = (const char *const *)s->values;
    if (s->sql)
        return PQsendQueryPrepared(d->conn, s->name, s->nparams, vals,
                                   s->lengths, s->formats, 0);
    return PQsendQueryParams(d->conn, s->pg_sql, s->nparams,
                             s->deferred ? s->types : NULL, vals, s->lengths,
                             s->formats, 0);
}

static int grow(pg_db *d, skv_error *err)
{
    if (d->n_pend < d->cap_pend)
        return 0;
    size_t cap = d->cap_pend ? 2 * d->cap_pend : 32;
    pg_pending *v = skv__reallocarray(d->pend, cap, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    d->pend = v;
    d->cap_pend = cap;
    return 0;
}

/* Not sent (the connection broke, or pipeline mode was refused): what
 * was queued is read back, and the failure sticks like any other. */
static int send_failed(pg_db *d, const char *what, skv_error *err)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__pg_error(d->conn, NULL, &e, what);
    skv__pg_sync(d, NULL, NULL);
    stick(d, rc, &e, d->seq + 1, what);
    return skv__pg_failed(d, err);
}

int skv__pg_queue(pg_db *d, pg_stmt *s, const char *sql, bool data,
                  skv_error *err)
{
    const char *what = s ? s->pg_sql : sql;
    int rc = skv__pg_failed(d, err);
    if (rc || (rc = grow(d, err)))
        return rc;
    if (PQpipelineStatus(d->conn) == PQ_PIPELINE_OFF &&
        !PQenterPipelineMode(d->conn))
        return send_failed(d, what, err);
    if (!(s ? send_stmt(d, s) : PQsendQueryParams(d->conn, sql, 0, NULL,
                                                  NULL, NULL, NULL, 0)))
        return send_failed(d, what, err);
    pg_pending *p = &d->pend[d->n_pend];
    p->st = s;
    p->seq = ++d->seq;
    p->data = data;
    snprintf(p->what, sizeof p->what, "%s", what);
    if (s) {
        s->pend = (long)d->n_pend;
        s->changes = 0;
    }
    d->n_pend++;
    return 0;
}

/* The next result of the pipeline: each statement's is followed by a
 * NULL, the Sync's is not. NULL: the connection is gone (or libpq and
 * this queue disagree, which is treated the same). */
static PGresult *next_result(pg_db *d)
{
    PGresult *r = PQgetResult(d->conn);
    if (!r && PQstatus(d->conn) != CONNECTION_BAD)
        r = PQgetResult(d->conn);
    return r;
}

/* One queued statement's result: its count, or the first error. */
static void take(pg_db *d, pg_pending *p, PGresult *r, PGresult **keep)
{
    ExecStatusType t = PQresultStatus(r);
    if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK) {
        const char *n = PQcmdTuples(r);
        if (p->st)
            p->st->changes = n && *n ? strtoll(n, NULL, 10) : 0;
        if (keep) {
            *keep = r;
            return;
        }
    } else {
        if (p->st)
            p->st->changes = -1;
        if (t != PGRES_PIPELINE_ABORTED) {
            skv_error e = SKV_ERROR_INIT;
            int rc = skv__pg_error(d->conn, r, &e, p->what);
            stick(d, rc, &e, p->seq, p->what);
        }
    }
    PQclear(r);
}

static void lost(pg_db *d, size_t from)
{
    skv_error e = SKV_ERROR_INIT;
    const char *what = from < d->n_pend ? d->pend[from].what : "Sync";
    int rc = skv__pg_error(d->conn, NULL, &e, what);
    if (PQstatus(d->conn) != CONNECTION_BAD)
        rc = skv__err(&e, SKV_EIO, "manager database: the pipeline's "
                      "results ended early (%.80s)", what);
    stick(d, rc, &e, from < d->n_pend ? d->pend[from].seq : d->seq, what);
    for (size_t i = from; i < d->n_pend; i++)
        if (d->pend[i].st)
            d->pend[i].st->changes = -1;
}

int skv__pg_sync(pg_db *d, PGresult **last, skv_error *err)
{
    if (last)
        *last = NULL;
    if (!d->n_pend)
        return skv__pg_failed(d, err);
    size_t i = 0;
    d->base.stats.round_trips++;
    if (PQpipelineSync(d->conn)) {
        for (; i < d->n_pend; i++) {
            PGresult *r = next_result(d);
            if (!r)
                break;
            take(d, &d->pend[i], r,
                 last && i + 1 == d->n_pend ? last : NULL);
        }
    }
    PGresult *s = i == d->n_pend ? next_result(d) : NULL;
    if (!s || PQresultStatus(s) != PGRES_PIPELINE_SYNC)
        lost(d, i);
    PQclear(s);
    for (size_t k = 0; k < d->n_pend; k++)
        if (d->pend[k].st)
            d->pend[k].st->pend = -1;
    d->n_pend = 0;
    PQexitPipelineMode(d->conn);
    say_lost(d);
    if (d->fail_rc && last) {
        PQclear(*last);
        *last = NULL;
    }
    return skv__pg_failed(d, err);
}

/* ---- savepoints ---------------------------------------------------------- */

typedef enum { X_OTHER, X_SAVEPOINT, X_RELEASE, X_ROLLBACK_TO } x_kind;

static const char *word(const char *p, const char *w)
{
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(w);
    if (strncasecmp(p, w, n) || isalnum((unsigned char)p[n]) || p[n] == '_')
        return NULL;
    return p + n;
}

/* The savepoint's name, when the rest is a plain identifier. */
static bool ident(const char *p, char name[32])
{
    while (isspace((unsigned char)*p))
        p++;
    size_t n = 0;
    while (n < 31 && (isalnum((unsigned char)p[n]) || p[n] == '_'))
        n++;
    if (!n)
        return false;
    memcpy(name, p, n);
    name[n] = '\0';
    for (p += n; *p; p++)
        if (!isspace((unsigned char)*p) && *p != ';')
            return false;
    return true;
}

static x_kind classify(const char *sql, char name[32])
{
    const char *p, *q;
    if ((p = word(sql, "SAVEPOINT")))
        return ident(p, name) ? X_SAVEPOINT : X_OTHER;
    if ((p = word(sql, "RELEASE"))) {
        q = word(p, "SAVEPOINT");
        return ident(q ? q : p, name) ? X_RELEASE : X_OTHER;
    }
    if ((p = word(sql, "ROLLBACK")) && (p = word(p, "TO"))) {
        q = word(p, "SAVEPOINT");
        return ident(q ? q : p, name) ? X_ROLLBACK_TO : X_OTHER;
    }
    return X_OTHER;
}

static int sp_find(const pg_db *d, const char *name)
{
    for (int i = d->n_sp - 1; i >= 0; i--)
        if (!strcmp(d->sp[i].name, name))
            return i;
    return -1;
}

static bool data_queued(const pg_db *d)
{
    for (size_t i = 0; i < d->n_pend; i++)
        if (d->pend[i].data)
            return true;
    return false;
}

static int savepoint(pg_db *d, const char *sql, const char *name,
                     skv_error *err)
{
    if (d->n_sp == SKV__PG_SAVEPOINTS_MAX)
        return 1;       /* deeper than tracked: run it at once */
    int rc = skv__pg_queue(d, NULL, sql, false, err);
    if (!rc) {
        snprintf(d->sp[d->n_sp].name, sizeof d->sp[0].name, "%s", name);
        d->sp[d->n_sp++].seq = d->seq;
    }
    return rc;
}

/* A release waits for the writes under it: the unit it ends must learn
 * whether they failed before it is taken as done. Not when the caller
 * asked for optimistic units (skv__db_defer_releases): a failure then
 * sticks, and fails the next read or the COMMIT, and with it the whole
 * transaction; one round trip per unit that wrote is saved. */
static int release(pg_db *d, const char *sql, const char *name,
                   skv_error *err)
{
    bool wait = !d->optimistic && data_queued(d);
    int rc = skv__pg_queue(d, NULL, sql, false, err);
    if (!rc && wait)
        rc = skv__pg_sync(d, NULL, err);
    int at = sp_find(d, name);
    if (!rc && at >= 0)     /* a failed release leaves it in place */
        d->n_sp = at;
    return rc;
}

/* The error is undone when it came after the savepoint; from before it,
 * the savepoint never ran and the transaction stays failed. */
static int rollback_to(pg_db *d, const char *sql, const char *name,
                       skv_error *err)
{
    skv__pg_sync(d, NULL, NULL);
    int at = sp_find(d, name);
    if (d->fail_rc && at >= 0 && d->fail_seq > d->sp[at].seq)
        d->fail_rc = 0;
    int rc = skv__pg_failed(d, err);
    if (rc)
        return rc;
    if (at >= 0)
        d->n_sp = at + 1;
    d->base.stats.round_trips++;
    PGresult *r = PQexec(d->conn, sql);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = skv__pg_error(d->conn, r, err, sql);
    PQclear(r);
    return rc;
}

int skv__pg_exec_queued(pg_db *d, const char *sql, skv_error *err)
{
    char name[32];
    switch (classify(sql, name)) {
    case X_SAVEPOINT:
        return savepoint(d, sql, name, err);
    case X_RELEASE:
        return release(d, sql, name, err);
    case X_ROLLBACK_TO:
        return rollback_to(d, sql, name, err);
    default:
        return 1;
    }
}

int skv__pg_commit_queued(pg_db *d, skv_error *err)
{
    PGresult *r = NULL;
    int rc = skv__pg_queue(d, NULL, "COMMIT", false, err);
    if (!rc)
        rc = skv__pg_sync(d, &r, err);
    if (!rc && !strcmp(PQcmdStatus(r), "ROLLBACK"))
        rc = skv__err(err, SKV_EIO, "manager database: COMMIT: the "
                      "transaction was aborted by an earlier error and "
                      "rolled back");
    PQclear(r);
    return rc;
}

void skv__pg_pipe_end(pg_db *d)
{
    if (d->n_pend)
        skv__pg_sync(d, NULL, NULL);
    d->defer = false;
    d->optimistic = false;
    d->in_tx = false;
    d->fail_rc = 0;
    d->n_sp = 0;
}
