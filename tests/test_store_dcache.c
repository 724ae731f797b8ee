/* The store's dispatch cache (src/manager/store/dispatch_cache.h): after
 * any sequence of the store's writes that touch what kernel.create is
 * built from (agents registering with new or no addresses, sessions
 * inserted, kernels placed, requeued, renamed), in transactions committed,
 * rolled back or cut by a unit's ROLLBACK TO, a session's hosts, a
 * kernel's row and its slots equal a fresh SELECT on the same connection.
 * On SQLite and, with a server, on PostgreSQL (SKIP without one).
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/manager/store/admin_cache.h"
#include "../src/manager/store/create_cache.h"
#include "../src/manager/store/dispatch_cache.h"
#include "../src/manager/store/ops.h"
#include "../src/manager/store/schema.h"
#include "../src/manager/store/store_int.h"
#include "pg_harness.h"
#include "skv_test.h"

#define STEPS 500
#define MAXSESS 40

static const char *const AGENTS[] = {"a0", "a1", "a2", "a9"};
static const char *const ADDRS[] = {"10.0.0.1:6001", "10.0.0.2:6002",
    "host-b:7000", NULL, ""};
static const char *const IMAGES[] = {"img/a", "img/b:2", NULL};

static const char *const SLOTS[] = {"cpu", "mem", "cuda.shares"};

static char dir[64], path[96];
static int nsess, ndev;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-dcache-XXXXXX");
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

/* ---- the writes, through the store ----------------------------------- */

static void agent_put(skv__db *db, const char *id, const char *addr)
{
    skv_proto_agent_register r = {.agent_id = (char *)id,
        .resource_group = "g", .architecture = "x86_64",
        .address = (char *)addr};
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_agent_put(db, &r, 1, &e), &e);
}

/* A new session of 1..3 kernels, images and slot requests varied. */
static void session_add(skv__db *db, unsigned *seed)
{
    size_t n = (size_t)rand_r(seed) % 3 + 1;
    skv_proto_kernel_spec k[3] = {{0}};
    skv_slots *req[3] = {NULL};
    skv_error e = SKV_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        k[i].role = i ? "sub" : "main";
        k[i].image = (char *)IMAGES[rand_r(seed) % 3];
        SKV_CK_OK(skv_slots_new(&req[i], &e), &e);    /* some empty */
        if (rand_r(seed) % 4) {
            SKV_CK_OK(skv_slots_set(req[i], "cpu", SKV_SLOT_COUNT,
                                    (skv_qty)(rand_r(seed) % 8 + 1) * 1000,
                                    &e), &e);
        }
    }
    skv_proto_session_submit s = {.name = "n", .owner = "u", .project = "p",
        .resource_group = "g", .session_type = "batch", .cluster_mode =
        "single-node", .cluster_size = (uint32_t)n, .image = "img/base",
        .kernels = k, .n_kernels = n};
    char sid[16];
    snprintf(sid, sizeof sid, "s%d", nsess);
    SKV_CK_OK(skv__mgr_store_session_insert(db, &s, sid, "d",
              (const skv_slots *const *)req, n, 1, &e), &e);
    for (size_t i = 0; i < n; i++)
        skv_slots_free(req[i]);
}

static void pick_kid(skv__db *db, unsigned *seed, char *kid, size_t cap)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT id FROM kernels ORDER BY id", &st,
                              &e), &e);
    size_t n = 0, want = (size_t)rand_r(seed) % 64;
    *kid = 0;
    while (skv__db_step(st, &e) == SKV__DB_ROW)
        if (n++ <= want || !*kid)
            snprintf(kid, cap, "%s", skv__db_column_text(st, 0));
    skv__db_done(st);
}

/* 0..2 allocation rows for kid, each on a device of its own (the key
 * never repeats), as a pass writes them after a placement. */
static int alloc_rows(skv__db *db, unsigned *seed, const char *kid,
                      skv_error *e)
{
    int rc = 0;
    for (int n = *kid ? rand_r(seed) % 3 : 0; !rc && n > 0; n--) {
        char dev[16];
        snprintf(dev, sizeof dev, "d%d", ndev++);
        skv__mgr_store_alloc a = {kid, dev, SLOTS[rand_r(seed) % 3],
                                  rand_r(seed) % 1000 + 1,
                                  rand_r(seed) % 2 == 0, "", ""};
        rc = skv__mgr_store_alloc_add(db, &a, 1, e);
    }
    return rc;
}

/* Whether sid's kernels hold allocation rows: their ids are renewed only
 * after unplacing deleted them (the rows refer to the ids). */
static bool allocated(skv__db *db, const char *sid)
{
    int64_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_int1(db, "SELECT count(*) FROM kernel_alloc a "
              "JOIN kernels k ON k.id=a.kernel_id WHERE k.session_id=?",
              SKV__ARGS(sid), &n, &e), &e);
    return n > 0;
}

static bool pending(skv__db *db, const char *kid)
{
    char st[16];
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__mgr_store_text1(db, "SELECT status FROM kernels WHERE id=?",
                                  SKV__ARGS(kid), st, sizeof st, &e);
    ck_assert_int_ge(rc, 0);
    return rc == SKV__DB_ROW && !strcmp(st, "PENDING");
}

static void write_one(skv__db *db, unsigned *seed)
{
    char sid[16], kid[64];
    skv_error e = SKV_ERROR_INIT;
    snprintf(sid, sizeof sid, "s%d", rand_r(seed) % (nsess ? nsess : 1));
    const char *agent = AGENTS[rand_r(seed) % 4];
    int rc = 0;
    switch (rand_r(seed) % 8) {
    case 0: agent_put(db, AGENTS[rand_r(seed) % 3], ADDRS[rand_r(seed) % 5]);
        break;
    case 1: if (nsess < MAXSESS) {
            session_add(db, seed);
            nsess++;    /* a rolled-back id is never taken again */
        }
        break;
    case 2:
    case 3: pick_kid(db, seed, kid, sizeof kid);
        rc = skv__mgr_store_kernel_place(db, kid, agent, &e);
        if (!rc)
            rc = alloc_rows(db, seed, kid, &e);
        break;
    case 4: pick_kid(db, seed, kid, sizeof kid);
        rc = skv__mgr_store_kernel_set(db, kid, "RUNNING", &e);
        break;
    case 5: if (rand_r(seed) % 3 == 0)
            rc = skv__mgr_store_session_unplace(db, sid, &e);
        else {    /* more rows of a kernel placed earlier (never of a
                     PENDING one: the pass writes them after placing) */
            pick_kid(db, seed, kid, sizeof kid);
            if (*kid && !pending(db, kid))
                rc = alloc_rows(db, seed, kid, &e);
        }
        break;
    default: if (rand_r(seed) % 3 == 0 && !allocated(db, sid))
            rc = skv__mgr_store_kernel_ids_renew(db, sid, &e);
        break;
    }
    SKV_CK_OK(rc, &e);
}

/* ---- the truth: SELECTs that do not go through the cache ------------- */

static void check_hosts(skv__db *db, const char *sid, int step)
{
    skv__mgr_store_host *h = NULL;
    size_t n = 0, m = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_session_hosts(db, sid, &h, &n, &e), &e);
    skv__db_stmt *st;
    SKV_CK_OK(skv__db_prepare(db, "SELECT k.idx, a.address, k.agent_id, "
              "k.id, (SELECT count(*) FROM kernels) FROM kernels k LEFT "
              "JOIN agents a ON a.id=k.agent_id WHERE k.session_id=? ORDER "
              "BY k.idx", &st, &e), &e);
    skv__db_bind_text(st, 1, sid);
    for (; skv__db_step(st, &e) == SKV__DB_ROW; m++) {
        const char *addr = skv__db_column_text(st, 1);
        const char *agent = skv__db_column_text(st, 2);
        ck_assert_msg(m < n, "step %d: %s: %zu hosts, more rows", step, sid,
                      n);
        ck_assert_msg(h[m].idx == (uint32_t)skv__db_column_int64(st, 0) &&
                      !strcmp(h[m].kid, skv__db_column_text(st, 3)) &&
                      h[m].placed == (agent != NULL) &&
                      !strcmp(h[m].agent, agent ? agent : "") &&
                      h[m].has_address == (addr != NULL) &&
                      !strcmp(h[m].address, addr ? addr : ""),
                      "step %d: %s host %zu: %s on '%s' at %d'%s', the "
                      "database says %s on '%s' at '%s'", step, sid, m,
                      h[m].kid, h[m].agent, h[m].has_address, h[m].address,
                      skv__db_column_text(st, 3), agent ? agent : "(null)",
                      addr ? addr : "(null)");
    }
    skv__db_done(st);
    ck_assert_uint_eq(m, n);
    skv__free(h);
}

static bool same_slots(const skv_slots *a, const skv_slots *b)
{
    skv_error e = SKV_ERROR_INIT;
    void *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    SKV_CK_OK(skv_slots_encode(&x, &nx, a, &e), &e);
    SKV_CK_OK(skv_slots_encode(&y, &ny, b, &e), &e);
    bool same = nx == ny && !memcmp(x, y, nx);
    skv_free(x);
    skv_free(y);
    return same;
}

static void check_kernel(skv__db *db, skv__db_stmt *st, int step)
{
    skv_error e = SKV_ERROR_INIT;
    const char *kid = skv__db_column_text(st, 0);
    const char *image = skv__db_column_text(st, 2);
    const char *agent = skv__db_column_text(st, 3);
    skv_slots *truth = NULL, *slots = NULL;
    SKV_CK_OK(skv__mgr_store_col_slots(&truth, st, 4, &e), &e);
    skv__mgr_store_kernel_row r;
    ck_assert_int_eq(skv__mgr_store_kernel_get(db, kid, &r, &e), 1);
    ck_assert_msg(r.idx == (uint32_t)skv__db_column_int64(st, 1) &&
                  !strcmp(r.agent, agent ? agent : "") &&
                  (r.image ? image && !strcmp(r.image, image) : !image) &&
                  same_slots(r.slots, truth), "step %d: kernel %s is "
                  "%u '%s' on '%s', the database says %lld '%s' on '%s'",
                  step, kid, r.idx, r.image ? r.image : "(null)", r.agent,
                  (long long)skv__db_column_int64(st, 1),
                  image ? image : "(null)", agent ? agent : "(null)");
    SKV_CK_OK(skv__mgr_store_kernel_slots(db, kid, &slots, &e), &e);
    ck_assert_msg(same_slots(slots, truth), "step %d: %s slots", step, kid);
    skv__mgr_store_kernel_row_free(&r);
    skv_slots_free(slots);
    skv_slots_free(truth);
}

/* kid's allocation rows equal the table's, in (device, slot) order. */
static void check_alloc(skv__db *db, const char *kid, int step)
{
    skv__mgr_store_alloc *v = NULL;
    size_t n = 0, m = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_alloc_of(db, kid, &v, &n, &e), &e);
    skv__db_stmt *st;
    SKV_CK_OK(skv__db_prepare(db, "SELECT device_id, slot, amount, whole "
              "FROM kernel_alloc WHERE kernel_id=? ORDER BY device_id, slot",
              &st, &e), &e);
    skv__db_bind_text(st, 1, kid);
    for (; skv__db_step(st, &e) == SKV__DB_ROW; m++) {
        ck_assert_msg(m < n, "step %d: %s: %zu rows, the table has more",
                      step, kid, n);
        ck_assert_msg(!strcmp(v[m].device_id, skv__db_column_text(st, 0)) &&
                      !strcmp(v[m].slot, skv__db_column_text(st, 1)) &&
                      v[m].amount == skv__db_column_int64(st, 2) &&
                      v[m].whole == (skv__db_column_int64(st, 3) != 0),
                      "step %d: %s row %zu: %s %s %lld, the table says %s %s"
                      " %lld", step, kid, m, v[m].device_id, v[m].slot,
                      (long long)v[m].amount, skv__db_column_text(st, 0),
                      skv__db_column_text(st, 1),
                      (long long)skv__db_column_int64(st, 2));
    }
    skv__db_done(st);
    ck_assert_msg(m == n, "step %d: %s: %zu rows, the table has %zu", step,
                  kid, n, m);
    skv__free(v);
}

/* sid's submit body and owners equal the row's; no row: SKV_ENOENT. */
static void check_submit(skv__db *db, const char *sid, int step)
{
    skv_error e = SKV_ERROR_INIT;
    skv__db_stmt *st;
    SKV_CK_OK(skv__db_prepare(db, "SELECT spec, domain, project, owner FROM "
              "sessions WHERE id=?", &st, &e), &e);
    skv__db_bind_text(st, 1, sid);
    bool row = skv__db_step(st, &e) == SKV__DB_ROW;
    char dom[SKV__STORE_ID_MAX], proj[SKV__STORE_ID_MAX], own[SKV__STORE_ID_MAX];
    const void *body = NULL;
    size_t len = 0;
    if (skv__mgr_store_cc_submit(db, sid, &body, &len, dom, proj, own)) {
        size_t tlen = 0;
        const void *truth = row ? skv__db_column_blob(st, 0, &tlen) : NULL;
        ck_assert_msg(row, "step %d: %s is cached, not in the table", step,
                      sid);
        ck_assert_msg(len == tlen && !memcmp(body, truth, len) &&
                      !strcmp(dom, skv__db_column_text(st, 1)) &&
                      !strcmp(proj, skv__db_column_text(st, 2)) &&
                      !strcmp(own, skv__db_column_text(st, 3)),
                      "step %d: %s: the cached body differs", step, sid);
    }
    skv__db_done(st);
    skv_proto_session_submit sub;
    memset(&sub, 0, sizeof sub);
    int rc = skv__mgr_store_session_submit(db, sid, &sub, dom, proj, own, &e);
    ck_assert_msg(rc == (row ? 0 : SKV_ENOENT), "step %d: %s: %d", step, sid,
                  rc);
    if (!rc) {
        ck_assert_str_eq(sub.resource_group, "g");
        ck_assert_str_eq(own, "u");
        skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &sub);
    }
}

static void check_all(skv__db *db, int step)
{
    skv__db_stmt *st;
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < nsess; i++) {
        char sid[16];
        snprintf(sid, sizeof sid, "s%d", i);
        check_hosts(db, sid, step);
        check_submit(db, sid, step);
    }
    SKV_CK_OK(skv__db_prepare(db, "SELECT id, idx, image, agent_id, slots "
                              "FROM kernels ORDER BY id", &st, &e), &e);
    while (skv__db_step(st, &e) == SKV__DB_ROW) {
        check_kernel(db, st, step);
        check_alloc(db, skv__db_column_text(st, 0), step);
    }
    skv__db_done(st);
    skv__mgr_store_kernel_row r;
    ck_assert_int_eq(skv__mgr_store_kernel_get(db, "no-such", &r, &e), 0);
}

/* Transactions of a few units each: a unit is released or rolled back to
 * its savepoint, the transaction committed or rolled back; the check runs
 * after every write and every undo. */
static void run_sequence(skv__db *db, unsigned seed)
{
    skv_error e = SKV_ERROR_INIT;
    nsess = ndev = 0;
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
    skv__mgr_store_dc_stats(db, &hits, &misses);
    /* Most answers come from memory, or the test shows nothing. */
    ck_assert_msg(hits > misses, "hits %llu misses %llu",
                  (unsigned long long)hits, (unsigned long long)misses);
    skv__mgr_store_cc_stats(db, &hits, &misses);
    /* Every kernel and session is checked at every step, most of them
     * long placed or inserted before a rollback: misses dominate here;
     * what matters is that answers from memory were checked. */
    ck_assert_msg(hits > 100, "create cache: hits %llu misses %llu",
                  (unsigned long long)hits, (unsigned long long)misses);
}

START_TEST(test_dcache_sequence_sqlite)
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

START_TEST(test_dcache_sequence_pg)
{
    skv_pg srv;
    const char *skip = skv_pg_start(&srv);
    if (skip) {
        fprintf(stderr, "store_dcache: SKIP: %s\n", skip);
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

static int fence_ok(skv__db *db, void *arg, skv_error *err)
{
    (void)db, (void)arg, (void)err;
    return 0;
}

/* Another writer's new address is read once this connection is the
 * leader (its fence installed): the cache forgets with the epoch. */
START_TEST(test_dcache_fence)
{
    skv__db *db = open_sqlite();
    skv_error e = SKV_ERROR_INIT;
    unsigned seed = 1;
    agent_put(db, "a0", "10.0.0.1:6001");
    nsess = 0;
    session_add(db, &seed);
    nsess = 1;
    SKV_CK_OK(skv__mgr_store_kernel_place(db, "s0-0", "a0", &e), &e);
    check_hosts(db, "s0", 0);
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE agents SET address='moved:1' "
                                  "WHERE id='a0'", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    skv__mgr_store_host *v = NULL;
    size_t n = 0;
    SKV_CK_OK(skv__mgr_store_session_hosts(db, "s0", &v, &n, &e), &e);
    ck_assert_str_eq(v[0].address, "10.0.0.1:6001");   /* from memory */
    skv__free(v);
    skv__db_on_begin(db, fence_ok, NULL);
    SKV_CK_OK(skv__mgr_store_session_hosts(db, "s0", &v, &n, &e), &e);
    ck_assert_str_eq(v[0].address, "moved:1");
    skv__free(v);
    skv__db_close(db);
}
END_TEST

static int allowed(skv__db *db)
{
    skv__mgr_store_gops o;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_group_ops(db, "g", &o, &e), &e);
    return o.allow_unenforced;
}

static void allow_set(skv__db *db, int v)
{
    skv__mgr_store_gops o;
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_store_gops_default(&o);
    o.allow_unenforced = v;
    SKV_CK_OK(skv__mgr_store_group_ops_set(db, "g", &o, &e), &e);
}

/* A group's policy, asked at every kernel.create, is answered from the
 * admin cache and reads as the row does after an admin change committed
 * or rolled back (admin/tx.c holds the cache around it). */
START_TEST(test_dcache_group_ops)
{
    skv__db *db = open_sqlite();
    skv_error e = SKV_ERROR_INIT;
    uint64_t h0 = 0, h1 = 0, m = 0;
    SKV_CK_OK(skv__mgr_store_ops_schema(db, &e), &e);
    ck_assert_int_eq(allowed(db), 0);        /* no row: the defaults */
    skv__mgr_store_admin_cache_stats(db, &h0, &m);
    ck_assert_int_eq(allowed(db), 0);
    skv__mgr_store_admin_cache_stats(db, &h1, &m);
    ck_assert_uint_eq(h1, h0 + 1);           /* from memory */
    /* committed */
    SKV_CK_OK(skv__mgr_store_admin_cache_hold(db, &e), &e);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    allow_set(db, 1);
    ck_assert_int_eq(allowed(db), 1);
    SKV_CK_OK(skv__db_commit(db, &e), &e);
    skv__mgr_store_admin_cache_end(db);
    ck_assert_int_eq(allowed(db), 1);
    ck_assert_int_eq(allowed(db), 1);
    /* rolled back */
    SKV_CK_OK(skv__mgr_store_admin_cache_hold(db, &e), &e);
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    allow_set(db, 0);
    ck_assert_int_eq(allowed(db), 0);
    skv__db_rollback(db);
    skv__mgr_store_admin_cache_end(db);
    ck_assert_int_eq(allowed(db), 1);
    /* deleted */
    SKV_CK_OK(skv__mgr_store_admin_cache_hold(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_group_ops_delete(db, "g", &e), &e);
    skv__mgr_store_admin_cache_end(db);
    ck_assert_int_eq(allowed(db), 0);
    /* a write outside an admin transaction forgets it too */
    allow_set(db, 1);
    ck_assert_int_eq(allowed(db), 1);
    skv__db_close(db);
}
END_TEST

/* A thousand agents all stay answered (sets of ways, dispatch_cache.h:
 * direct-mapped, ~200 of them shared a slot and missed on their turn),
 * every hit is the agent's latest address, and a note too long to keep
 * forgets the agent's one way. */
START_TEST(test_dcache_thousand_agents)
{
    skv__db *db = open_sqlite();
    char id[32], addr[32], got[SKV__DCACHE_ADDR];
    bool has = false;
    int hits = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 1000; i++) {
            snprintf(id, sizeof id, "agent-%04d", i);
            snprintf(addr, sizeof addr, "10.0.%d.%d:%d", i / 250, i % 250,
                     6000 + round);
            skv__mgr_store_dc_agent_note(db, id, addr);
        }
    for (int i = 0; i < 1000; i++) {
        snprintf(id, sizeof id, "agent-%04d", i);
        snprintf(addr, sizeof addr, "10.0.%d.%d:6001", i / 250, i % 250);
        if (!skv__mgr_store_dc_agent(db, id, &has, got))
            continue;
        hits++;
        ck_assert(has);
        ck_assert_str_eq(got, addr);
    }
    ck_assert_int_ge(hits, 995);
    char longaddr[SKV__DCACHE_ADDR + 8];
    memset(longaddr, 'x', sizeof longaddr - 1);
    longaddr[sizeof longaddr - 1] = 0;
    skv__mgr_store_dc_agent_note(db, "agent-0007", longaddr);
    ck_assert(!skv__mgr_store_dc_agent(db, "agent-0007", &has, got));
    skv__mgr_store_dc_agent_note(db, "agent-0007", NULL);
    ck_assert(skv__mgr_store_dc_agent(db, "agent-0007", &has, got));
    ck_assert(!has);
    skv__db_close(db);
}
END_TEST

Suite *skv_test_suite_store_dcache(void);
Suite *skv_test_suite_store_dcache(void)
{
    Suite *s = suite_create("store_dcache");
    TCase *tc = tcase_create("store_dcache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_dcache_sequence_sqlite);
    tcase_add_test(tc, test_dcache_fence);
    tcase_add_test(tc, test_dcache_group_ops);
    tcase_add_test(tc, test_dcache_thousand_agents);
    suite_add_tcase(s, tc);
    TCase *pg = tcase_create("store_dcache_pg");
    tcase_set_timeout(pg, 300);
    tcase_add_test(pg, test_dcache_sequence_pg);
    suite_add_tcase(s, pg);
    return s;
}
