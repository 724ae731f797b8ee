/* The store's kernel-row cache (src/manager/store/kernel_cache.h): after
 * any sequence of the store's kernel writes, in transactions committed,
 * rolled back or cut by a unit's ROLLBACK TO, every answer it serves (a
 * kernel's row, a session's counts, ids, total, the checks at a kernel
 * event) equals a fresh SELECT on the same connection. On SQLite and, with
 * a server, on PostgreSQL (SKIP without one).
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/manager/store/history_buf.h"
#include "../src/manager/store/kernel_cache.h"
#include "../src/manager/store/schema.h"
#include "../src/manager/store/store.h"
#include "pg_harness.h"
#include "skv_test.h"

#define NSESS 6
#define STEPS 600

static const char *const STATUS[] = {"PENDING", "SCHEDULED", "PREPARING",
    "RUNNING", "TERMINATING", "TERMINATED", "CANCELLED", "ERROR"};
#define NSTATUS (sizeof STATUS / sizeof STATUS[0])
/* Sets the manager passes, plus a few more. */
static const char *const SETS[] = {"RUNNING", "TERMINATED,CANCELLED,ERROR",
    "PENDING,SCHEDULED", "PREPARING,RUNNING", "PENDING,SCHEDULED,PREPARING,"
    "RUNNING", "TERMINATING", "ERROR"};
#define NSETS (sizeof SETS / sizeof SETS[0])
static const char *const AGENTS[] = {"a1", "a2", "a3"};

static char dir[64], path[96];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-kcache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.db", dir);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static skv__db *open_sqlite(void)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE |
                                     SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__db_exec(db, "PRAGMA foreign_keys=ON", &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    return db;
}

static void sql(skv__db *db, const char *text, const char *a, const char *b)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, text, &st, &e), &e);
    if (a)
        skv__db_bind_text(st, 1, a);
    if (b)
        skv__db_bind_text(st, 2, b);
    ck_assert_int_ge(skv__db_step(st, &e), 0);
    skv__db_done(st);
}

/* What the store's insert notes (insert.c note_kernels): the kernels,
 * and that the end's columns are all NULL. */
static void note_inserted(skv__db *db, const char *sid, int n)
{
    skv__kc_kernel k[SKV__KCACHE_KERNELS];
    memset(k, 0, sizeof k);
    for (int i = 0; i < n; i++) {
        snprintf(k[i].kid, sizeof k[i].kid, "%s-%d", sid, i);
        snprintf(k[i].status, sizeof k[i].status, "PENDING");
        k[i].idx = i;
    }
    skv__mgr_store_kc_fill(db, sid, k, (size_t)n);
    skv__mgr_store_kc_fin_new(db, sid);
}

/* Session i with i % 4 + 1 kernels, all PENDING, none placed; noted: as
 * the store's insert leaves the caches. */
static void add_sessions(skv__db *db, bool noted)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < NSESS; i++) {
        char sid[16], kid[32], idx[8];
        snprintf(sid, sizeof sid, "s%d", i);
        skv__db_stmt *st;
        SKV_CK_OK(skv__db_prepare(db, "INSERT INTO sessions(id, owner, "
                  "domain, project, resource_group, session_type, "
                  "cluster_mode, cluster_size, image, spec, status, "
                  "created_ms) VALUES(?, 'u', 'd', 'p', 'g', 'batch', "
                  "'single-node', 1, 'i', ?, 'PENDING', 1)", &st, &e), &e);
        skv__db_bind_text(st, 1, sid);
        skv__db_bind_blob(st, 2, "", 1);
        ck_assert_int_ge(skv__db_step(st, &e), 0);
        skv__db_done(st);
        for (int k = 0; k <= i % 4; k++) {
            snprintf(kid, sizeof kid, "%s-%d", sid, k);
            snprintf(idx, sizeof idx, "%d", k);
            sql(db, "INSERT INTO kernels(id, session_id, idx, role, status)"
                " VALUES(?, ?, " "0, 'main', 'PENDING')", kid, sid);
            sql(db, "UPDATE kernels SET idx=CAST(? AS INTEGER) WHERE id=?",
                idx, kid);
        }
        if (noted)
            note_inserted(db, sid, i % 4 + 1);
    }
}

/* ---- the truth: SELECTs that do not go through the cache ------------- */

static int64_t count_sql(skv__db *db, const char *sid, const char *set,
                         bool in, bool main_only)
{
    char text[512], marks[64] = "", buf[128];
    const char *v[8];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", set);
    for (char *p = buf, *save; (p = strtok_r(p, ",", &save)); p = NULL) {
        v[n] = p;
        strcat(marks, n++ ? ",?" : "?");
    }
    snprintf(text, sizeof text, "SELECT count(*) FROM kernels WHERE status "
             "%s (%s) AND session_id=?%s", in ? "IN" : "NOT IN", marks,
             main_only ? " AND idx=0" : "");
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, text, &st, &e), &e);
    for (int i = 0; i < n; i++)
        skv__db_bind_text(st, i + 1, v[i]);
    skv__db_bind_text(st, n + 1, sid);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t c = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return c;
}

typedef struct row {
    char kid[64], sid[16], status[16], agent[16];
    int idx;
} row;

/* Every kernel row, by id. */
static size_t rows_sql(skv__db *db, row *r, size_t cap)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    size_t n = 0;
    SKV_CK_OK(skv__db_prepare(db, "SELECT id, session_id, idx, status, "
                              "agent_id FROM kernels ORDER BY session_id, "
                              "idx", &st, &e), &e);
    while (skv__db_step(st, &e) == SKV__DB_ROW && n < cap) {
        const char *a = skv__db_column_text(st, 4);
        snprintf(r[n].kid, sizeof r[n].kid, "%s", skv__db_column_text(st, 0));
        snprintf(r[n].sid, sizeof r[n].sid, "%s", skv__db_column_text(st, 1));
        r[n].idx = (int)skv__db_column_int64(st, 2);
        snprintf(r[n].status, sizeof r[n].status, "%s",
                 skv__db_column_text(st, 3));
        snprintf(r[n++].agent, sizeof r->agent, "%s", a ? a : "");
    }
    skv__db_done(st);
    return n;
}

/* ---- what the store answers (through the cache) vs the truth ---------- */

static void check_kernel(skv__db *db, const row *r, int step)
{
    skv__mgr_store_kernel k;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_kernel_info(db, r->kid, &k, &e), &e);
    ck_assert_msg(!strcmp(k.sid, r->sid) && k.idx == r->idx &&
                  !strcmp(k.status, r->status) && !strcmp(k.agent, r->agent),
                  "step %d: %s is %s/%d/%s/'%s', the database says "
                  "%s/%d/%s/'%s'", step, r->kid, k.sid, k.idx, k.status,
                  k.agent, r->sid, r->idx, r->status, r->agent);
    ck_assert(skv__mgr_store_kernel_exists(db, r->kid));
    for (size_t a = 0; a < 3; a++) {
        bool sent = !strcmp(r->agent, AGENTS[a]) &&
                    strcmp(r->status, "PENDING") &&
                    strcmp(r->status, "SCHEDULED") &&
                    strcmp(r->status, "CANCELLED");
        bool stop = !strcmp(r->agent, AGENTS[a]) &&
                    !strcmp(r->status, "TERMINATING");
        ck_assert_int_eq(skv__mgr_store_kernel_sent_to(db, r->kid,
                                                       AGENTS[a]), sent);
        ck_assert_int_eq(skv__mgr_store_kernel_stopping_on(db, r->kid,
                                                           AGENTS[a]), stop);
    }
    char kid[64];
    SKV_CK_OK(skv__mgr_store_kernel_id_at(db, r->sid, (uint32_t)r->idx, kid,
                                          sizeof kid, &e), &e);
    ck_assert_str_eq(kid, r->kid);
}

static uint64_t fin_hits;

/* finish_row's SELECT, not through the store. */
static void finish_sql(skv__db *db, const char *sid, skv__mgr_store_finish *o)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT s.end_status, s.end_reason, "
        "k.exit_code, k.status, k.reason FROM sessions s LEFT JOIN kernels k"
        " ON k.session_id=s.id AND k.idx=0 WHERE s.id=? ", &st, &e), &e);
    skv__db_bind_text(st, 1, sid);
    memset(o, 0, sizeof *o);
    o->exit_code = -1;
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    const char *es = skv__db_column_text(st, 0);
    const char *er = skv__db_column_text(st, 1);
    const char *ks = skv__db_column_text(st, 3);
    const char *kr = skv__db_column_text(st, 4);
    snprintf(o->end_status, sizeof o->end_status, "%s", es ? es : "");
    snprintf(o->reason, sizeof o->reason, "%s", er ? er : kr ? kr : "");
    o->stop_reason = er != NULL;
    if (!skv__db_column_is_null(st, 2))
        o->exit_code = (int)skv__db_column_int64(st, 2);
    o->main_error = ks && strcmp(ks, "ERROR") == 0;
    skv__db_done(st);
}

/* The end's row from memory (when known) equals the SELECT's. */
static void check_finish(skv__db *db, const char *sid, int step)
{
    skv__mgr_store_finish a, b;
    skv_error e = SKV_ERROR_INIT;
    finish_sql(db, sid, &b);
    if (skv__mgr_store_kc_finish(db, sid, &a))
        fin_hits++;
    SKV_CK_OK(skv__mgr_store_session_finish_row(db, sid, &a, &e), &e);
    ck_assert_msg(!strcmp(a.end_status, b.end_status) &&
                  !strcmp(a.reason, b.reason) &&
                  a.stop_reason == b.stop_reason &&
                  a.exit_code == b.exit_code && a.main_error == b.main_error,
                  "step %d: %s's end: '%s' '%s' %d %d %d, the row: '%s' '%s' "
                  "%d %d %d", step, sid, a.end_status, a.reason, a.stop_reason,
                  a.exit_code, a.main_error, b.end_status, b.reason,
                  b.stop_reason, b.exit_code, b.main_error);
}

static void check_session(skv__db *db, const char *sid, const row *r,
                          size_t n, int step)
{
    check_finish(db, sid, step);
    skv_error e = SKV_ERROR_INIT;
    int total = -1;
    size_t have = 0;
    for (size_t i = 0; i < n; i++)
        have += !strcmp(r[i].sid, sid);
    SKV_CK_OK(skv__mgr_store_kernel_total(db, sid, &total, &e), &e);
    ck_assert_int_eq(total, (int)have);
    for (size_t s = 0; s < NSETS; s++)
        for (int f = 0; f < 4; f++) {
            int c = -1;
            SKV_CK_OK(skv__mgr_store_kernel_count(db, sid, SETS[s], f & 1,
                                                  f & 2, &c, &e), &e);
            ck_assert_msg(c == count_sql(db, sid, SETS[s], f & 1, f & 2),
                          "step %d: %s count %s in=%d main=%d: %d", step,
                          sid, SETS[s], f & 1, f & 2, c);
        }
    char **ids = NULL;
    size_t m = 0, j = 0;
    SKV_CK_OK(skv__mgr_store_kernel_ids(db, sid, "PREPARING,RUNNING,"
                                        "TERMINATING", &ids, &m, &e), &e);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].sid, sid) && (!strcmp(r[i].status, "PREPARING") ||
            !strcmp(r[i].status, "RUNNING") ||
            !strcmp(r[i].status, "TERMINATING"))) {
            ck_assert_uint_lt(j, m);
            ck_assert_str_eq(ids[j++], r[i].kid);
        }
    ck_assert_uint_eq(j, m);
    skv__mgr_store_ids_free(ids, m);
}

/* The live marker (core step 3) is 1 exactly on the kernels whose status
 * is not final, whatever the cache knew when the status was written. */
static void check_live(skv__db *db, int step)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT id, status, live FROM kernels "
                              "WHERE COALESCE(live, 0) <> CASE WHEN status "
                              "IN ('TERMINATED','CANCELLED','ERROR') THEN 0 "
                              "ELSE 1 END", &st, &e), &e);
    bool bad = skv__db_step(st, &e) == SKV__DB_ROW;
    ck_assert_msg(!bad, "step %d: kernel %s is %s with live %s", step,
                  bad ? skv__db_column_text(st, 0) : "",
                  bad ? skv__db_column_text(st, 1) : "",
                  bad && skv__db_column_text(st, 2) ? "1" : "NULL");
    skv__db_done(st);
}

/* No kernel, allocation or history row without its parent: on
 * PostgreSQL no foreign key says so since core step 4, the store's order
 * of writes does (the buffered history rows are written first, as a read
 * of the table by the store would). */
static void check_orphans(skv__db *db, int step)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__history_buf_flush(db, &e), &e);
    SKV_CK_OK(skv__db_prepare(db, "SELECT (SELECT count(*) FROM kernels k "
        "WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id="
        "k.session_id)), (SELECT count(*) FROM kernel_alloc a WHERE NOT "
        "EXISTS (SELECT 1 FROM kernels k WHERE k.id=a.kernel_id)), (SELECT "
        "count(*) FROM session_history h WHERE NOT EXISTS (SELECT 1 FROM "
        "sessions s WHERE s.id=h.session_id))", &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    ck_assert_msg(skv__db_column_int64(st, 0) == 0 &&
                  skv__db_column_int64(st, 1) == 0 &&
                  skv__db_column_int64(st, 2) == 0, "step %d: orphans: "
                  "kernels %lld, allocations %lld, history %lld", step,
                  (long long)skv__db_column_int64(st, 0),
                  (long long)skv__db_column_int64(st, 1),
                  (long long)skv__db_column_int64(st, 2));
    skv__db_done(st);
}

static void check_all(skv__db *db, int step)
{
    row r[64];
    size_t n = rows_sql(db, r, 64);
    check_live(db, step);
    check_orphans(db, step);
    for (size_t i = 0; i < n; i++)
        check_kernel(db, &r[i], step);
    for (int i = 0; i < NSESS; i++) {
        char sid[16];
        snprintf(sid, sizeof sid, "s%d", i);
        check_session(db, sid, r, n, step);
    }
}

/* ---- the writes ------------------------------------------------------- */

static const char *pick_kid(skv__db *db, unsigned *seed, char *buf)
{
    row r[64];
    size_t n = rows_sql(db, r, 64);
    snprintf(buf, 64, "%s", r[(size_t)rand_r(seed) % n].kid);
    return buf;
}

/* A placement with its allocation rows half of the time, as a
 * scheduling pass writes them (device ids unique: placed again, a kernel
 * gets rows of its own). */
static int place(skv__db *db, const char *kid, const char *agent,
                 unsigned step_no, skv_error *e)
{
    static unsigned dev;
    char d[2][32];
    int rc = skv__mgr_store_kernel_place(db, kid, agent, e);
    if (rc || step_no % 2)
        return rc;
    skv__mgr_store_alloc a[2];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 2; i++) {
        snprintf(d[i], sizeof d[i], "d%u", dev++);
        a[i].kernel_id = kid;
        a[i].device_id = d[i];
        a[i].slot = i ? "mem" : "cpu";
        a[i].amount = 1 + i;
    }
    return skv__mgr_store_alloc_add(db, a, 2, e);
}

/* New kernel ids come after the allocation went (alloc.c unplace): an
 * id renamed under its rows would leave them behind. */
static int renew(skv__db *db, const char *sid, skv_error *e)
{
    sql(db, "DELETE FROM kernel_alloc WHERE kernel_id IN (SELECT id FROM "
        "kernels WHERE session_id=?)", sid, NULL);
    return skv__mgr_store_kernel_ids_renew(db, sid, e);
}

static void write_one(skv__db *db, unsigned *seed)
{
    char sid[16], kid[64];
    skv_error e = SKV_ERROR_INIT;
    snprintf(sid, sizeof sid, "s%d", rand_r(seed) % NSESS);
    const char *st = STATUS[(size_t)rand_r(seed) % NSTATUS];
    const char *agent = AGENTS[rand_r(seed) % 3];
    int rc = 0;
    unsigned step_no = (unsigned)rand_r(seed);
    switch (rand_r(seed) % 11) {
    case 0: rc = skv__mgr_store_kernel_set(db, pick_kid(db, seed, kid), st,
                                           &e); break;
    case 1: rc = skv__mgr_store_kernel_running(db, pick_kid(db, seed, kid),
                                               "c1", &e); break;
    case 2: rc = skv__mgr_store_kernel_ended(db, pick_kid(db, seed, kid), st,
                                             (int)(step_no % 3), step_no % 2 ?
                                             "why" : NULL, &e); break;
    case 3: rc = skv__mgr_store_kernels_move(db, sid, SETS[(size_t)rand_r(
                 seed) % NSETS], st, &e); break;
    case 4: rc = skv__mgr_store_kernels_lost(db, sid, agent, "lost", &e);
        break;
    case 5:
    case 6: rc = place(db, pick_kid(db, seed, kid), agent, step_no, &e);
        break;
    case 7: if (rand_r(seed) % 4 == 0)
            rc = skv__mgr_store_session_unplace(db, sid, &e);
        break;
    case 8: rc = skv__mgr_store_session_end(db, sid, step_no % 3 ? "CANCELLED"
                                            : "TERMINATED", step_no % 2 ?
                                            "stopped" : NULL, &e); break;
    case 9: rc = skv__mgr_store_session_status(db, sid, st, "why",
                                               (int64_t)step_no, &e); break;
    default: if (rand_r(seed) % 4 == 0)
            rc = renew(db, sid, &e);
        break;
    }
    SKV_CK_OK(rc, &e);
}

/* Transactions of a few units each: a unit is released or rolled back to
 * its savepoint, the transaction committed or rolled back; the check runs
 * after every write and every undo. */
static void run_sequence(skv__db *db, unsigned seed)
{
    skv_error e = SKV_ERROR_INIT;
    add_sessions(db, true);
    check_all(db, -1);
    for (int step = 0; step < STEPS;) {
        SKV_CK_OK(skv__db_begin(db, &e), &e);
        for (int u = rand_r(&seed) % 4; u >= 0; u--) {
            SKV_CK_OK(skv__mgr_store_savepoint(db, &e), &e);
            for (int w = rand_r(&seed) % 3; w >= 0; w--, step++) {
                write_one(db, &seed);
                check_all(db, step);
            }
            if (rand_r(&seed) % 4 == 0)
                skv__mgr_store_rollback_to(db);
            else
                SKV_CK_OK(skv__mgr_store_release(db, &e), &e);
            check_all(db, step);
        }
        if (rand_r(&seed) % 4 == 0)
            skv__db_rollback(db);
        else
            SKV_CK_OK(skv__db_commit(db, &e), &e);
        check_all(db, step);
    }
    uint64_t hits = 0, misses = 0;
    ck_assert_msg(fin_hits > STEPS, "the end's row from memory %llu times",
                  (unsigned long long)fin_hits);
    fin_hits = 0;
    skv__mgr_store_kc_stats(db, &hits, &misses);
    /* The check reads far more than it writes: most of it from memory. */
    ck_assert_msg(hits > 10 * misses, "hits %llu misses %llu",
                  (unsigned long long)hits, (unsigned long long)misses);
}

START_TEST(test_kcache_sequence_sqlite)
{
    for (unsigned seed = 1; seed <= 3; seed++) {
        char cmd[160];
        skv__db *db = open_sqlite();
        run_sequence(db, seed);
        skv__db_close(db);
        snprintf(cmd, sizeof cmd, "rm -f '%s'*", path);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

START_TEST(test_kcache_sequence_pg)
{
    skv_pg srv;
    const char *skip = skv_pg_start(&srv);
    if (skip) {
        fprintf(stderr, "store_kcache: SKIP: %s\n", skip);
        return;
    }
    ck_assert_msg(skv_pg_running(&srv), "postgres: %s", srv.why);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(srv.conninfo, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    run_sequence(db, 7);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

/* An entry read whole from the database (not inserted here, or read
 * again after an undo or after another session took its slot) knows the
 * end's row from the same SELECT: the end reads nothing more, and gets the
 * row. A stop that named no end is not held: the end reads the row. */
START_TEST(test_kcache_finish_read)
{
    skv__db *db = open_sqlite();
    skv_error e = SKV_ERROR_INIT;
    add_sessions(db, false);            /* no entry: all from reads */
    SKV_CK_OK(skv__mgr_store_session_end(db, "s1", "CANCELLED", "stopped",
                                         &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_ended(db, "s1-0", "ERROR", 3, "why", &e),
              &e);
    SKV_CK_OK(skv__mgr_store_kernel_ended(db, "s2-0", "TERMINATED", 0, NULL,
                                          &e), &e);
    SKV_CK_OK(skv__mgr_store_kernel_ended(db, "s5-0", "ERROR", 1, "oom",
                                          &e), &e);
    SKV_CK_OK(skv__mgr_store_session_end(db, "s3", NULL, "no end", &e), &e);
    for (int i = 0; i < NSESS; i++) {
        char sid[16];
        int total = 0;
        skv__mgr_store_finish a;
        snprintf(sid, sizeof sid, "s%d", i);
        ck_assert(!skv__mgr_store_kc_finish(db, sid, &a));
        SKV_CK_OK(skv__mgr_store_kernel_total(db, sid, &total, &e), &e);
        ck_assert_int_eq(skv__mgr_store_kc_finish(db, sid, &a), i != 3);
        check_finish(db, sid, i);
    }
    skv__db_close(db);
}
END_TEST

static int fence_ok(skv__db *db, void *arg, skv_error *err)
{
    (void)db, (void)arg, (void)err;
    return 0;
}

/* Another writer's change is read once this connection is the leader (its
 * fence installed): the cache forgets with the state cache's epoch. */
START_TEST(test_kcache_fence)
{
    skv__db *db = open_sqlite();
    skv_error e = SKV_ERROR_INIT;
    add_sessions(db, false);
    SKV_CK_OK(skv__mgr_store_kernel_place(db, "s0-0", "a1", &e), &e);
    skv__mgr_store_kernel k;
    SKV_CK_OK(skv__mgr_store_kernel_info(db, "s0-0", &k, &e), &e);
    int c = 0;
    SKV_CK_OK(skv__mgr_store_kernel_count(db, "s0", "SCHEDULED", true, false,
                                          &c, &e), &e);
    ck_assert_int_eq(c, 1);
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE kernels SET status='RUNNING', "
                                  "agent_id='a2' WHERE id='s0-0'", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    SKV_CK_OK(skv__mgr_store_kernel_info(db, "s0-0", &k, &e), &e);
    ck_assert_str_eq(k.status, "SCHEDULED");    /* served from memory */
    skv__db_on_begin(db, fence_ok, NULL);
    SKV_CK_OK(skv__mgr_store_kernel_info(db, "s0-0", &k, &e), &e);
    ck_assert_str_eq(k.status, "RUNNING");
    ck_assert_str_eq(k.agent, "a2");
    SKV_CK_OK(skv__mgr_store_kernel_count(db, "s0", "SCHEDULED", true, false,
                                          &c, &e), &e);
    ck_assert_int_eq(c, 0);
    skv__db_close(db);
}
END_TEST

/* Rows the cache cannot hold (more kernels than its room, long ids) are
 * answered by the database, right. */
START_TEST(test_kcache_uncacheable)
{
    skv__db *db = open_sqlite();
    skv_error e = SKV_ERROR_INIT;
    add_sessions(db, false);
    for (int k = 4; k < 4 + SKV__KCACHE_KERNELS; k++) {
        char kid[32], idx[8];
        snprintf(kid, sizeof kid, "s3-%d", k);
        snprintf(idx, sizeof idx, "%d", k);
        sql(db, "INSERT INTO kernels(id, session_id, idx, role, status) "
            "VALUES(?, 's3', 0, 'sub', 'RUNNING')", kid, NULL);
        sql(db, "UPDATE kernels SET idx=CAST(? AS INTEGER) WHERE id=?", idx,
            kid);
    }
    char longid[200];
    memset(longid, 'k', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    sql(db, "UPDATE kernels SET id=? WHERE id='s1-1'", longid, NULL);
    SKV_CK_OK(skv__mgr_store_kernel_place(db, longid, "a3", &e), &e);
    check_all(db, 0);
    int c = 0;
    SKV_CK_OK(skv__mgr_store_kernel_count(db, "s3", "RUNNING", true, false,
                                          &c, &e), &e);
    ck_assert_int_eq(c, SKV__KCACHE_KERNELS);
    skv__db_close(db);
}
END_TEST

Suite *skv_test_suite_store_kcache(void);
Suite *skv_test_suite_store_kcache(void)
{
    Suite *s = suite_create("store_kcache");
    TCase *tc = tcase_create("store_kcache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kcache_sequence_sqlite);
    tcase_add_test(tc, test_kcache_finish_read);
    tcase_add_test(tc, test_kcache_fence);
    tcase_add_test(tc, test_kcache_uncacheable);
    suite_add_tcase(s, tc);
    TCase *pg = tcase_create("store_kcache_pg");
    tcase_set_timeout(pg, 300);
    tcase_add_test(pg, test_kcache_sequence_pg);
    suite_add_tcase(s, pg);
    return s;
}
