/* Status writes of sessions and kernels rows held until COMMIT, so that a
 * row written twice in one transaction costs one UPDATE. In the bench a
 * kernel's create reply (RUNNING) and its exit (TERMINATED) arrive
 * together and land in the same batch: two UPDATEs of the kernel and two
 * of the session, each a new entry in every index of the row (no status
 * update is HOT), where the committed row is the same with one of each.
 *
 * What each COMMIT leaves is what the writes one by one would have left:
 * the held writes of a row are merged in order (the last status and
 * reason, the first started_ms, the last finished_ms, exit_code,
 * container_id and live marker given) and go out before COMMIT. They are
 * held only while the units of the transaction fail together anyway
 * (PostgreSQL's optimistic units, db.h skv__db_defer_releases: a failed
 * write fails the whole batch at COMMIT); otherwise each is written at
 * once, in its unit. A unit's rollback drops its writes (db_unit.c), and
 * writes of earlier units that it flushed (its ROLLBACK TO undid them)
 * wait to be written again, as history_buf.c does. Any statement that
 * may read or change these rows flushes first (skv__row_buf_before); the
 * manager's own reads of them come from the state and kernel caches,
 * which follow every write at once as before.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "row_buf.h"
#include "skv_internal.h"
#include "store_int.h"

typedef struct rb_row {
    skv__row_write w;       /* its strings owned */
    uint64_t hash;          /* of the table and id: a cheap first compare */
    size_t next;            /* the row's next unsent write, or NO_NEXT */
    bool merged;            /* taken into an earlier row's UPDATE */
} rb_row;

#define NO_NEXT SIZE_MAX

struct skv__row_buf {
    rb_row *v;
    size_t n, cap;
    size_t sent;            /* v[0..sent) are written (not committed yet) */
    bool flushing;
};

static void row_free(rb_row *r)
{
    skv__free((char *)r->w.id);
    skv__free((char *)r->w.status);
    skv__free((char *)r->w.reason);
    skv__free((char *)r->w.container);
}

static uint64_t row_hash(const skv__row_write *w)
{
    uint64_t h = w->kernel ? 1469598103934665603u : 7809847782465536322u;
    for (const char *p = w->id; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    return h;
}

static bool same_row(const rb_row *a, const rb_row *b)
{
    return a->hash == b->hash && a->w.kernel == b->w.kernel &&
           !strcmp(a->w.id, b->w.id);
}

/* Later writes win, except started_ms (set once, at the first RUNNING)
 * and what a write does not give (it keeps the column). */
static void merge(skv__row_write *m, const skv__row_write *w)
{
    m->status = w->status;
    if (!m->kernel || w->has_exit)
        m->reason = w->reason;
    if (w->container)
        m->container = w->container;
    if (!m->has_started && w->has_started) {
        m->has_started = true;
        m->started_ms = w->started_ms;
    }
    if (w->has_finished) {
        m->has_finished = true;
        m->finished_ms = w->finished_ms;
    }
    if (w->has_exit) {
        m->has_exit = true;
        m->exit_code = w->exit_code;
    }
    if (w->live != SKV__ROW_LIVE_KEEP)
        m->live = w->live;
}

static void bind_opt(skv__db_stmt *st, int i, bool has, int64_t v)
{
    if (has)
        skv__db_bind_int64(st, i, v);
    else
        skv__db_bind_null(st, i);
}

/* The texts sessions.c always wrote (NULL binds keep a column). */
static int emit_session(skv__db *db, const skv__row_write *w,
                        int64_t *changes, skv_error *err)
{
#define SET "UPDATE sessions SET status=?, status_reason=?, " \
    "started_ms=COALESCE(started_ms, ?), finished_ms=COALESCE(?, " \
    "finished_ms), exit_code=COALESCE(?, exit_code)"
    static const char *const sql[] = {SET " WHERE id=?",
                                      SET ", live=1 WHERE id=?",
                                      SET ", live=NULL WHERE id=?"};
#undef SET
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql[w->live], &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, w->status);
    skv__db_bind_text(st, 2, w->reason);
    bind_opt(st, 3, w->has_started, w->started_ms);
    bind_opt(st, 4, w->has_finished, w->finished_ms);
    bind_opt(st, 5, w->has_exit, w->exit_code);
    skv__db_bind_text(st, 6, w->id);
    rc = skv__mgr_store_run(st, err);
    if (!rc && changes)
        *changes = skv__db_changes(st);
    skv__db_done(st);
    return rc;
}

/* Every kernel text as a constant: SQLite's statement cache finds a
 * constant by its address (db_sqlite.c), a built text by hashing it. */
#define K_SET(c, x) "UPDATE kernels SET status=?" c x
#define K_LIVE(c, x) K_SET(c, x) " WHERE id=?", \
    K_SET(c, x) ", live=1 WHERE id=?", K_SET(c, x) ", live=NULL WHERE id=?"
static const char *const kernel_sql[12] = {
    K_LIVE("", ""), K_LIVE("", ", exit_code=?, reason=?"),
    K_LIVE(", container_id=?", ""),
    K_LIVE(", container_id=?", ", exit_code=?, reason=?")};
#undef K_LIVE
#undef K_SET

static int emit_kernel(skv__db *db, const skv__row_write *w,
                       int64_t *changes, skv_error *err)
{
    skv__db_stmt *st;
    int i = 1;
    int rc = skv__db_prepare(db, kernel_sql[(w->container ? 6 : 0) +
                                            (w->has_exit ? 3 : 0) + w->live],
                             &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, i++, w->status);
    if (w->container)
        skv__db_bind_text(st, i++, w->container);
    if (w->has_exit) {
        skv__db_bind_int64(st, i++, w->exit_code);
        skv__db_bind_text(st, i++, w->reason);
    }
    skv__db_bind_text(st, i, w->id);
    rc = skv__mgr_store_run(st, err);
    if (!rc && changes)
        *changes = skv__db_changes(st);
    skv__db_done(st);
    return rc;
}

static int emit(skv__db *db, const skv__row_write *w, int64_t *changes,
                skv_error *err)
{
    return w->kernel ? emit_kernel(db, w, changes, err)
                     : emit_session(db, w, changes, err);
}

/* Chain each unsent write to the next unsent write of its row through
 * an open-addressing table of the rows seen (the last write of each):
 * one pass, where a scan per write was quadratic in a large batch (a
 * thousand agents' events after a failover). */
static int link_rows(struct skv__row_buf *b, skv_error *err)
{
    size_t cap = 16;
    while (cap < 2 * (b->n - b->sent))
        cap *= 2;
    size_t *last = skv__calloc(cap, sizeof *last);     /* index + 1 */
    if (!last)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = b->sent; i < b->n; i++) {
        rb_row *r = &b->v[i];
        size_t p = (size_t)r->hash & (cap - 1);
        while (last[p] && !same_row(&b->v[last[p] - 1], r))
            p = (p + 1) & (cap - 1);
        if (last[p])
            b->v[last[p] - 1].next = i;
        last[p] = i + 1;
        r->next = NO_NEXT;
        r->merged = false;
    }
    skv__free(last);
    return 0;
}

/* v[i] with the later unsent writes of its row merged in. */
static skv__row_write gather(struct skv__row_buf *b, size_t i)
{
    skv__row_write m = b->v[i].w;
    for (size_t j = b->v[i].next; j != NO_NEXT; j = b->v[j].next) {
        merge(&m, &b->v[j].w);
        b->v[j].merged = true;
    }
    return m;
}

int skv__row_buf_flush(skv__db *db, skv_error *err)
{
    struct skv__row_buf *b = db->rows;
    if (!b || b->sent == b->n || b->flushing)
        return 0;
    int rc = link_rows(b, err);
    if (rc)
        return rc;
    b->flushing = true;
    for (size_t i = b->sent; !rc && i < b->n; i++)
        if (!b->v[i].merged) {
            skv__row_write m = gather(b, i);
            rc = emit(db, &m, NULL, err);
        }
    b->flushing = false;
    if (!rc)
        b->sent = b->n;
    return rc;
}

/* Only a plain INSERT of a new row (insert.c) can pass held writes of
 * these tables; a DELETE elsewhere may cascade into them. */
static bool touches(const char *sql)
{
    while (isspace((unsigned char)*sql))
        sql++;
    if (!strncasecmp(sql, "DELETE", 6))
        return true;
    if (!strstr(sql, "sessions") && !strstr(sql, "kernels"))
        return false;
    return strncmp(sql, "INSERT INTO sessions(", 21) != 0 &&
           strncmp(sql, "INSERT INTO kernels(", 20) != 0;
}

int skv__row_buf_before(skv__db *db, const char *sql, skv_error *err)
{
    struct skv__row_buf *b = db->rows;
    if (!b || b->sent == b->n || b->flushing || !touches(sql))
        return 0;
    return skv__row_buf_flush(db, err);
}

static int grow(skv__db *db, skv_error *err)
{
    struct skv__row_buf *b = db->rows;
    if (!b && !(b = db->rows = skv__calloc(1, sizeof *b)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (b->n < b->cap)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : 64;
    rb_row *v = skv__reallocarray(b->v, cap, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    b->v = v;
    b->cap = cap;
    return 0;
}

static char *dup_opt(const char *s, bool *ok)
{
    char *d = s ? skv__strdup(s) : NULL;
    *ok = *ok && (!s || d);
    return d;
}

int skv__row_buf_add(skv__db *db, const skv__row_write *w, int64_t *changes,
                     skv_error *err)
{
    if (changes || !db->late_units || !skv__db_in_transaction(db))
        return emit(db, w, changes, err);   /* after any held (prepare) */
    int rc = grow(db, err);
    if (rc)
        return rc;
    rb_row *r = &db->rows->v[db->rows->n];
    bool ok = true;
    r->w = *w;
    r->w.id = dup_opt(w->id, &ok);
    r->w.status = dup_opt(w->status, &ok);
    r->w.reason = dup_opt(w->reason, &ok);
    r->w.container = dup_opt(w->container, &ok);
    if (!ok) {
        row_free(r);
        return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    r->hash = row_hash(w);
    r->merged = false;
    db->rows->n++;
    return 0;
}

void skv__row_buf_marks(const skv__db *db, size_t *rows, size_t *sent)
{
    *rows = db->rows ? db->rows->n : 0;
    *sent = db->rows ? db->rows->sent : 0;
}

void skv__row_buf_undo(skv__db *db, size_t rows, size_t sent)
{
    struct skv__row_buf *b = db->rows;
    if (!b)
        return;
    while (b->n > rows)
        row_free(&b->v[--b->n]);
    if (b->sent > sent)
        b->sent = sent;
}

void skv__row_buf_clear(skv__db *db)
{
    skv__row_buf_undo(db, 0, 0);
}

void skv__row_buf_free(skv__db *db)
{
    skv__row_buf_clear(db);
    if (db->rows)
        skv__free(db->rows->v);
    skv__free(db->rows);
    db->rows = NULL;
}
