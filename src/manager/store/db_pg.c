/* db.h on PostgreSQL through libpq: the connection, transactions and the
 * mapping of SQLSTATEs onto SKV_E*. Statements are in db_pg_stmt.c, values
 * in db_pg_value.c.
 *
 * A lost connection is not re-established here: with several managers on
 * one database the leader's advisory lock lives on this connection, so a
 * new one would be a different session that no longer holds it. The store
 * reports SKV_EIO and the manager steps down or exits.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "db_pg_int.h"
#include "skv_internal.h"

/* SQLSTATE classes the store tells apart: 23xxx integrity (a duplicate or
 * a violated constraint), serialization failure, deadlock, lock not
 * available (NOWAIT) are contention a caller may retry. */
static int state_to_rc(const char *state)
{
    if (!state)
        return SKV_EIO;
    if (!strncmp(state, "23", 2))
        return SKV_EEXIST;
    if (!strcmp(state, "40001") || !strcmp(state, "40P01") ||
        !strcmp(state, "55P03"))
        return SKV_EBUSY;
    return SKV_EIO;
}

static const char *first_line(const char *msg, int *len)
{
    const char *nl = msg ? strchr(msg, '\n') : NULL;
    *len = !msg ? 0 : nl ? (int)(nl - msg) : (int)strlen(msg);
    return msg ? msg : "";
}

/* The lease's epoch check (lease.c) raises its failure as a failed cast
 * of its own message to bigint, the only way plain SQL raises an error
 * whose text it chooses: "invalid input syntax for type bigint:
 * \"deposed: ...\"". That message is the error, as SKV_ESTATE, whether it
 * comes at once or late from a pipeline (db_pg_pipe.c). *len: in, the
 * line's length; out, the message's. */
static const char *deposed(const char *state, const char *msg, int *len)
{
    static const char mark[] = "\"deposed: ";
    const char *at = state && !strcmp(state, "22P02") ? strstr(msg, mark)
                                                      : NULL;
    if (!at || at >= msg + *len)
        return NULL;
    const char *end = memchr(at + 1, '"', (size_t)(msg + *len - at - 1));
    *len = end ? (int)(end - at - 1) : (int)(msg + *len - at - 1);
    return at + 1;
}

int skv__pg_error(PGconn *conn, const PGresult *res, skv_error *err,
                  const char *what)
{
    int len = 0;
    if (PQstatus(conn) == CONNECTION_BAD) {
        const char *m = first_line(PQerrorMessage(conn), &len);
        return skv__err(err, SKV_EIO, "manager database: connection to "
                        "PostgreSQL lost (%.80s): %.*s", what, len, m);
    }
    const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(conn);
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    msg = first_line(msg, &len);
    const char *dep = deposed(state, msg, &len);
    if (dep)
        return skv__err(err, SKV_ESTATE, "%.*s", len, dep);
    return skv__err(err, state_to_rc(state), "manager database: %.80s: "
                    "%.*s (SQLSTATE %s)", what, len, msg,
                    state ? state : "none");
}

static void pg_close(skv__db *db)
{
    pg_db *d = skv__pg_db(db);
    for (size_t i = 0; i < d->n_cache; i++)
        skv__pg_free_stmt(d->cache[i]);
    PQfinish(d->conn);
    skv__free(d->pend);
    skv__free(d);
}

/* While queueing (db_pg_pipe.c), savepoints join the pipeline; anything
 * else waits for what is queued before it, then runs. */
static int pg_exec(skv__db *db, const char *sql, skv_error *err)
{
    pg_db *d = skv__pg_db(db);
    PGconn *c = d->conn;
    int rc = skv__pg_queueing(d) ? skv__pg_exec_queued(d, sql, err) : 1;
    if (rc <= 0 || (rc = skv__pg_sync(d, NULL, err)))
        return rc;
    db->stats.round_trips++;
    PGresult *r = PQexec(c, sql);
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
        rc = skv__pg_error(c, r, err, sql);
    PQclear(r);
    return rc;
}

/* With deferred errors asked for, BEGIN is queued: the first statement
 * that needs an answer (the lease's epoch check) takes it along. */
static int pg_begin(skv__db *db, skv_error *err)
{
    pg_db *d = skv__pg_db(db);
    int rc = d->defer ? skv__pg_queue(d, NULL, "BEGIN", false, err)
                      : pg_exec(db, "BEGIN", err);
    d->in_tx = rc == 0;
    if (rc)
        skv__pg_pipe_end(d);
    return rc;
}

static bool pg_in_transaction(skv__db *db)
{
    if (skv__pg_db(db)->n_pend)
        return true;
    PGTransactionStatusType t = PQtransactionStatus(skv__pg_db(db)->conn);
    return t == PQTRANS_INTRANS || t == PQTRANS_INERROR ||
           t == PQTRANS_ACTIVE;
}

static void pg_rollback(skv__db *db)
{
    pg_db *d = skv__pg_db(db);
    skv__pg_pipe_end(d);
    if (pg_in_transaction(db)) {
        db->stats.round_trips++;
        PQclear(PQexec(d->conn, "ROLLBACK"));
    }
}

/* A statement that failed inside the transaction aborted it; PostgreSQL
 * then answers COMMIT with "ROLLBACK" and no error, which must not read
 * as success. */
static int pg_commit(skv__db *db, skv_error *err)
{
    pg_db *d = skv__pg_db(db);
    if (d->n_pend || d->fail_rc) {
        int rc = skv__pg_commit_queued(d, err);
        if (rc)
            pg_rollback(db);
        skv__pg_pipe_end(d);
        return rc;
    }
    skv__pg_pipe_end(d);
    PGconn *c = d->conn;
    bool aborted = PQtransactionStatus(c) == PQTRANS_INERROR;
    db->stats.round_trips++;
    PGresult *r = PQexec(c, "COMMIT");
    int rc = 0;
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = skv__pg_error(c, r, err, "COMMIT");
    else if (aborted || !strcmp(PQcmdStatus(r), "ROLLBACK"))
        rc = skv__err(err, SKV_EIO, "manager database: COMMIT: the "
                      "transaction was aborted by an earlier error and "
                      "rolled back");
    PQclear(r);
    if (rc)
        pg_rollback(db);
    return rc;
}

/* A queued write's count is known once the pipeline is read. */
static int64_t pg_changes(skv__db_stmt *st)
{
    pg_stmt *s = skv__pg_stmt(st);
    if (s->pend >= 0)
        skv__pg_sync(skv__pg_db(st->db), NULL, NULL);
    return s->changes;
}

static const skv__db_ops pg_ops = {
    .kind = SKV__DB_POSTGRES,
    .close = pg_close,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .in_transaction = pg_in_transaction,
    .defer_errors = skv__pg_defer_errors,
    .defer_releases = skv__pg_defer_releases,
    .prepare = skv__pg_prepare,
    .done = skv__pg_done,
    .reset = skv__pg_reset,
    .bind_int64 = skv__pg_bind_int64,
    .bind_double = skv__pg_bind_double,
    .bind_text = skv__pg_bind_text,
    .bind_blob = skv__pg_bind_blob,
    .bind_null = skv__pg_bind_null,
    .step = skv__pg_step,
    .rows_unread = skv__pg_rows_unread,
    .column_int64 = skv__pg_column_int64,
    .column_double = skv__pg_column_double,
    .column_text = skv__pg_column_text,
    .column_blob = skv__pg_column_blob,
    .column_is_null = skv__pg_column_is_null,
    .changes = pg_changes,
};

/* Server notices (e.g. "relation already exists, skipping") are not the
 * manager's log lines. */
static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

/* Where the connection went, for messages: never the password. */
static void describe(PGconn *c, char *buf, size_t n)
{
    const char *host = PQhost(c), *port = PQport(c), *db = PQdb(c);
    snprintf(buf, n, "host %s port %s database %s",
             host && *host ? host : "(default)",
             port && *port ? port : "(default)", db ? db : "(default)");
}

static int connect_checked(const char *conninfo, PGconn **out,
                           skv_error *err)
{
    char *why = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &why);
    if (!opts) {
        int rc = skv__err(err, SKV_EINVAL, "manager database: bad "
                          "PostgreSQL connection string: %s",
                          why ? why : "out of memory");
        PQfreemem(why);
        return rc;
    }
    PQconninfoFree(opts);
    /* Defaults before dbname so the caller's string overrides them. */
    const char *keys[] = {"application_name", "connect_timeout", "dbname",
                          NULL};
    const char *vals[] = {"sokovan-manager", "5", conninfo, NULL};
    *out = PQconnectdbParams(keys, vals, 1);
    if (!*out)
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    if (PQstatus(*out) == CONNECTION_OK)
        return 0;
    char where[256];
    int len = 0;
    describe(*out, where, sizeof(where));
    const char *m = first_line(PQerrorMessage(*out), &len);
    int rc = skv__err(err, SKV_EIO, "manager database: cannot connect to "
                      "PostgreSQL (%s): %.*s", where, len, m);
    PQfinish(*out);
    *out = NULL;
    return rc;
}

int skv__db_open_postgres(const char *conninfo, skv__db **out,
                          skv_error *err)
{
    *out = NULL;
    if (!conninfo || !*conninfo)
        return skv__err(err, SKV_EINVAL, "manager database: empty "
                        "PostgreSQL connection string");
    PGconn *c = NULL;
    int rc = connect_checked(conninfo, &c, err);
    if (rc)
        return rc;
    PQsetNoticeProcessor(c, quiet, NULL);
    pg_db *d = skv__calloc(1, sizeof(*d));
    if (!d) {
        PQfinish(c);
        return skv__err(err, SKV_ENOMEM, "manager database: out of memory");
    }
    d->base.ops = &pg_ops;
    d->conn = c;
    *out = &d->base;
    return 0;
}
