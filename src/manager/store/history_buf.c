/* session_history rows wait in memory for the transaction's COMMIT and
 * go out as multi-row INSERTs (about five rows a session used to be five
 * statements). Ids stay in the order the rows were added (one buffer,
 * flushed in order, and every history row goes through it), which is the
 * order query.c reads them in. A unit's rollback drops its rows
 * (db_unit.c), a rollback or failed commit all of them (db.c); every
 * read of session_history flushes first, so it sees its own
 * transaction's rows.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "history_buf.h"
#include "skv_internal.h"

typedef struct hist_row {
    char *sid, *status, *reason;
    int64_t ts_ms;
} hist_row;

struct skv__history_buf {
    hist_row *v;
    size_t n, cap;
    size_t sent;    /* v[0..sent) are written (not committed yet) */
};

static void row_free(hist_row *r)
{
    skv__free(r->sid);
    skv__free(r->status);
    skv__free(r->reason);
}

static int grow(skv__db *db, skv_error *err)
{
    struct skv__history_buf *b = db->history;
    if (!b && !(b = db->history = skv__calloc(1, sizeof *b)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (b->n < b->cap)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : 64;
    hist_row *v = skv__reallocarray(b->v, cap, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    b->v = v;
    b->cap = cap;
    return 0;
}

static int insert_chunk(skv__db *db, const hist_row *r, size_t n,
                        skv_error *err)
{
    char sql[1024];
    skv__db_stmt *st;
    int rc = skv__db_values_sql(sql, sizeof sql, "INSERT INTO "
                                "session_history(session_id,status,ts_ms,"
                                "reason) VALUES", 4, n, "", err);
    if (rc || (rc = skv__db_prepare(db, sql, &st, err)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        int p = (int)i * 4;
        skv__db_bind_text(st, p + 1, r[i].sid);
        skv__db_bind_text(st, p + 2, r[i].status);
        skv__db_bind_int64(st, p + 3, r[i].ts_ms);
        skv__db_bind_text(st, p + 4, r[i].reason);
    }
    rc = skv__db_step(st, err);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__history_buf_flush(skv__db *db, skv_error *err)
{
    struct skv__history_buf *b = db->history;
    while (b && b->sent < b->n) {
        size_t k = skv__db_chunk(b->n - b->sent);
        int rc = insert_chunk(db, b->v + b->sent, k, err);
        if (rc)
            return rc;
        b->sent += k;
    }
    return 0;
}

int skv__history_buf_add(skv__db *db, const char *sid, const char *status,
                         const char *reason, int64_t ts_ms, skv_error *err)
{
    int rc = grow(db, err);
    if (rc)
        return rc;
    struct skv__history_buf *b = db->history;
    hist_row *r = &b->v[b->n];
    r->sid = skv__strdup(sid);
    r->status = skv__strdup(status);
    r->reason = reason ? skv__strdup(reason) : NULL;
    r->ts_ms = ts_ms;
    if (!r->sid || !r->status || (reason && !r->reason)) {
        row_free(r);
        return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    b->n++;
    if (skv__db_in_transaction(db))
        return 0;
    rc = skv__history_buf_flush(db, err);   /* autocommit: now */
    skv__history_buf_clear(db);
    return rc;
}

void skv__history_buf_marks(const skv__db *db, size_t *rows, size_t *sent)
{
    *rows = db->history ? db->history->n : 0;
    *sent = db->history ? db->history->sent : 0;
}

void skv__history_buf_undo(skv__db *db, size_t rows, size_t sent)
{
    struct skv__history_buf *b = db->history;
    if (!b)
        return;
    while (b->n > rows)
        row_free(&b->v[--b->n]);
    if (b->sent > sent)
        b->sent = sent;
}

void skv__history_buf_clear(skv__db *db)
{
    skv__history_buf_undo(db, 0, 0);
}

void skv__history_buf_free(skv__db *db)
{
    skv__history_buf_clear(db);
    if (db->history)
        skv__free(db->history->v);
    skv__free(db->history);
    db->history = NULL;
}
