/* SQLite helpers shared by the manager's store files: errors, transactions,
 * binding slot vectors as msgpack blobs.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

int skv__mgr_db_err(skv_manager *m, skv_error *err, const char *what)
{
    int code = sqlite3_errcode(m->db);
    int rc = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? SKV_EBUSY
             : (code == SQLITE_CONSTRAINT)                 ? SKV_EEXIST
                                                           : SKV_EIO;
    return skv__err(err, rc, "manager database: %s: %s", what,
                    sqlite3_errmsg(m->db));
}

int skv__mgr_db_exec(skv_manager *m, const char *sql, skv_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(m->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    int rc = skv__err(err, SKV_EIO, "manager database: %.80s: %s", sql,
                      msg ? msg : sqlite3_errmsg(m->db));
    sqlite3_free(msg);
    return rc;
}

/* Prepared statements are kept (keyed by their SQL text) and reused: the
 * manager runs the same few dozen statements for every session. A
 * statement already in use (nested call) gets a fresh, uncached one. */
static uint64_t sql_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static skv__mgr_stmt *stmt_find(skv_manager *m, const char *sql, uint64_t h)
{
    for (size_t i = 0; i < m->n_stmts; i++)
        if (m->stmts[i].hash == h && !strcmp(m->stmts[i].sql, sql))
            return &m->stmts[i];
    return NULL;
}

int skv__mgr_db_prepare(skv_manager *m, sqlite3_stmt **st, const char *sql,
                        skv_error *err)
{
    uint64_t h = sql_hash(sql);
    skv__mgr_stmt *c = stmt_find(m, sql, h);
    if (c && !c->busy) {
        c->busy = true;
        *st = c->st;
        return 0;
    }
    if (sqlite3_prepare_v3(m->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                           NULL) != SQLITE_OK) {
        *st = NULL;
        return skv__mgr_db_err(m, err, "prepare");
    }
    if (c || m->n_stmts == SKV__MGR_STMT_CACHE)
        return 0;
    c = &m->stmts[m->n_stmts];
    if (!(c->sql = skv__strdup(sql)))
        return 0;
    c->hash = h;
    c->st = *st;
    c->busy = true;
    m->n_stmts++;
    return 0;
}

void skv__mgr_db_done(skv_manager *m, sqlite3_stmt *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < m->n_stmts; i++)
        if (m->stmts[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            m->stmts[i].busy = false;
            return;
        }
    sqlite3_finalize(st);
}

void skv__mgr_db_close(skv_manager *m)
{
    for (size_t i = 0; i < m->n_stmts; i++) {
        sqlite3_finalize(m->stmts[i].st);
        skv__free(m->stmts[i].sql);
    }
    m->n_stmts = 0;
    if (m->store)
        skv__db_close(m->store);
    else if (m->db)
        sqlite3_close_v2(m->db);
    m->store = NULL;
    m->db = NULL;
}

/* Every transaction first writes the nonces of the requests accepted
 * since the last commit: a request's nonce is durable no later than its
 * effect (store_nonces.c). */
int skv__mgr_begin(skv_manager *m, skv_error *err)
{
    int rc = skv__mgr_db_exec(m, "BEGIN IMMEDIATE", err);
    if (!rc && (rc = skv__mgr_nonce_flush(m, err)))
        skv__mgr_rollback(m);
    return rc;
}

int skv__mgr_commit(skv_manager *m, skv_error *err)
{
    int rc = skv__mgr_db_exec(m, "COMMIT", err);
    if (rc)
        skv__mgr_rollback(m);
    else
        skv__mgr_nonce_settle(m, true);
    return rc;
}

void skv__mgr_rollback(skv_manager *m)
{
    skv__mgr_nonce_settle(m, false);
    if (!sqlite3_get_autocommit(m->db))
        sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
}

void skv__mgr_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

int skv__mgr_bind_slots(sqlite3_stmt *st, int i, const skv_slots *s,
                        skv_error *err)
{
    if (!s) {
        sqlite3_bind_null(st, i);
        return 0;
    }
    void *buf = NULL;
    size_t len = 0;
    int rc = skv_slots_encode(&buf, &len, s, err);
    if (rc)
        return rc;
    sqlite3_bind_blob(st, i, buf, (int)len, SQLITE_TRANSIENT);
    skv_free(buf);
    return 0;
}

int skv__mgr_col_slots(skv_slots **out, sqlite3_stmt *st, int i,
                       skv_error *err)
{
    const void *b = sqlite3_column_blob(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (!b || n <= 0)
        return skv_slots_new(out, err);
    return skv_slots_decode(out, b, (size_t)n, NULL, err);
}

char *skv__mgr_col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? skv__strdup((const char *)t) : NULL;
}
