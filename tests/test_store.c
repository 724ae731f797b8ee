/* The manager's database as the operator meets it: what skv_manager_open
 * does with an empty, foreign, damaged or missing manager.db (refuses,
 * leaving it and admin.key untouched), --init, the full check, and the
 * replay window surviving a restart.
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/manager/store/migrate.h"
#include "../src/manager/store/ops.h"
#include "../src/manager/store/schema.h"
#include "../src/manager/store/store.h"
#include "../src/manager/store/store_int.h"
#include "../src/manager/store/vfolders.h"
#include "skv_test.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"

#define T0 1700000000000LL
#define ADMIN 2

static char dir[64];
static int n_replies, n_errors;
static char last_error[256];

/* Counts what the manager sends the admin connection. */
static int send_cb(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)p;
    skv_proto_envelope env;
    if (conn != ADMIN || skv_proto_envelope_decode(&env, (const uint8_t *)
                                                   frame + 4, len - 4, NULL))
        return 0;
    if (env.type == SKV_PROTO_ERROR) {
        skv_proto_error er = {0};
        if (!skv_proto_body_decode(&er, env.type, env.body, env.body_len,
                                   NULL)) {
            snprintf(last_error, sizeof last_error, "%s",
                     er.message ? er.message : "");
            skv_proto_body_free(SKV_PROTO_ERROR, &er);
        }
        n_errors++;
    } else {
        n_replies++;
    }
    skv_proto_envelope_free(&env);
    return 0;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-store-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    n_replies = n_errors = 0;
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int try_open(skv_manager **m, uint32_t init, int64_t now,
                    skv_error *e)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    o.data_dir = dir;
    o.init = init;
    *m = NULL;
    int rc = skv_manager_open(m, &o, send_cb, NULL, now, e);
    if (!rc)
        ck_assert_int_eq(skv_manager_conn_open(*m, ADMIN, "admin", NULL), 0);
    return rc;
}

static skv_manager *open_ok(int64_t now)
{
    skv_manager *m;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(try_open(&m, 0, now, &e), &e);
    return m;
}

static void path_of(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", dir, rel);
}

/* The whole file (for "unchanged" checks); at most cap bytes. */
static size_t slurp(const char *rel, char *buf, size_t cap)
{
    char p[128];
    path_of(p, sizeof p, rel);
    FILE *f = fopen(p, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", p);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

typedef struct cred {
    char ak[64], sk[128];
} cred;

static void admin_cred(cred *c)
{
    char text[512];
    size_t n = slurp("admin.key", text, sizeof text - 1);
    text[n] = 0;
    ck_assert_int_eq(sscanf(text, "access_key=%63s secret_key=%127s", c->ak,
                            c->sk), 2);
}

/* A signed frame (without its length prefix) of type/body. */
static void *frame_of(size_t *len, skv_proto_type type, const void *body,
                      const cred *c, int64_t now)
{
    static uint64_t id = 100;
    void *f = NULL;
    skv_error e = SKV_ERROR_INIT;
    skv_proto_credentials pc = {c->ak, c->sk};
    SKV_CK_OK(skv_proto_message_encode(&f, len, SKV_PROTO_REQUEST, ++id, type,
                                       body, now, &pc, &e), &e);
    return f;
}

/* Hand a frame to the manager, then commit the batch of submissions
 * (their replies wait for it). */
static int feed(skv_manager *m, const void *frame, size_t len, int64_t now)
{
    int rc = skv_manager_handle_frame(m, ADMIN, (const uint8_t *)frame + 4,
                                      len - 4, now, NULL);
    skv_manager_flush(m, now, NULL);
    return rc;
}

static void *submit_frame(size_t *len, const cred *c, int64_t now)
{
    static char *cmd[] = {"/bin/true"};
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    memset(&k, 0, sizeof k);
    memset(&s, 0, sizeof s);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_parse(&k.slots, "cpu=1", NULL, &e), &e);
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 1;
    s.kernels = &k;
    s.n_kernels = 1;
    void *f = frame_of(len, SKV_PROTO_SESSION_SUBMIT, &s, c, now);
    skv_slots_free(k.slots);
    return f;
}

static void submit_ok(skv_manager *m, const cred *c, int64_t now)
{
    size_t len;
    void *f = submit_frame(&len, c, now);
    int r = n_replies, er = n_errors;
    ck_assert_int_eq(feed(m, f, len, now), 0);
    skv_free(f);
    ck_assert_msg(n_errors == er, "submit refused: %s", last_error);
    ck_assert_int_eq(n_replies, r + 1);
}

static int64_t query_int(const char *sql)
{
    char p[128];
    sqlite3 *db;
    sqlite3_stmt *st;
    path_of(p, sizeof p, "manager.db");
    ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void exec_sql(const char *rel, const char *sql)
{
    char p[128];
    sqlite3 *db;
    path_of(p, sizeof p, rel);
    ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The refusal: SKV_ESTATE naming the problem; admin.key and manager.db
 * exactly as before. */
static void expect_refused(const char *what, uint32_t init)
{
    static char key0[512], key1[512];
    struct stat st0, st1;
    char db[128];
    path_of(db, sizeof db, "manager.db");
    size_t k0 = slurp("admin.key", key0, sizeof key0);
    int had_db = stat(db, &st0) == 0;
    char wal[128];
    path_of(wal, sizeof wal, "manager.db-wal");
    int had_wal = access(wal, F_OK) == 0;
    skv_manager *m;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(try_open(&m, init, T0 + 50, &e), SKV_ESTATE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, what), "'%s' lacks '%s'", e.message,
                  what);
    ck_assert_uint_eq(slurp("admin.key", key1, sizeof key1), k0);
    ck_assert(memcmp(key0, key1, k0) == 0);
    ck_assert_int_eq(stat(db, &st1) == 0, had_db);
    ck_assert_int_eq(access(wal, F_OK) == 0, had_wal);
    if (had_db) {
        ck_assert_int_eq(st1.st_size, st0.st_size);
        ck_assert_int_eq(st1.st_mtime, st0.st_mtime);
    }
}

/* A cluster with n sessions, closed cleanly (no WAL left). */
static void populate(int n)
{
    skv_manager *m = open_ok(T0);
    cred c;
    admin_cred(&c);
    for (int i = 0; i < n; i++)
        submit_ok(m, &c, T0 + 1 + i);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT count(*) FROM kernels"), n);
}

/* core as step 2 left it: status indexes, no live marker (step 3). */
static void core_at_v2(void)
{
    exec_sql("manager.db", "DROP INDEX sessions_live; DROP INDEX "
             "sessions_ended; DROP INDEX kernels_live; ALTER TABLE sessions DROP COLUMN live; ALTER "
             "TABLE kernels DROP COLUMN live; CREATE INDEX sessions_status ON "
             "sessions(status); CREATE INDEX kernels_agent ON kernels("
             "agent_id, status)");
}

START_TEST(test_empty_db_refused)
{
    populate(3);
    char p[128];
    path_of(p, sizeof p, "manager.db");
    ck_assert_int_eq(truncate(p, 0), 0);
    expect_refused("empty (0 bytes)", 0);
    /* --check says the same. */
    char *report = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_manager_check(dir, &report, &e), SKV_ESTATE);
    skv_free(report);
}
END_TEST

/* One 4 KiB page of the kernels table overwritten: quick_check at open
 * refuses it; the full check lists the damage. */
START_TEST(test_damaged_page_refused)
{
    populate(25);
    int64_t page = query_int("SELECT rootpage FROM sqlite_master WHERE "
                             "name='kernels'");
    int64_t psize = query_int("PRAGMA page_size");
    ck_assert_int_eq(psize, 4096);
    char p[128], junk[4096];
    path_of(p, sizeof p, "manager.db");
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 13);
    int fd = open(p, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, junk, sizeof junk, (page - 1) * psize),
                     (ssize_t)sizeof junk);
    close(fd);
    expect_refused("is damaged (quick_check", 0);
    char *report = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_manager_check(dir, &report, &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(report);
    ck_assert_msg(strstr(e.message, "integrity_check"), "%s", e.message);
    skv_free(report);
}
END_TEST

START_TEST(test_foreign_db_refused)
{
    populate(1);
    char p[128], q[128];
    path_of(p, sizeof p, "manager.db");
    path_of(q, sizeof q, "other.db");
    /* Another program's database (its own application_id). */
    exec_sql("other.db", "CREATE TABLE t(x); PRAGMA application_id=42");
    ck_assert_int_eq(rename(q, p), 0);
    expect_refused("belongs to another program", 0);
    /* An SQLite database without the sokovan schema. */
    exec_sql("other.db", "CREATE TABLE sessions(x)");
    ck_assert_int_eq(rename(q, p), 0);
    expect_refused("without the sokovan schema", 0);
    /* Not SQLite at all. */
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 4096; i++)
        fputc('x', f);
    fclose(f);
    expect_refused("cannot be read as an SQLite database", 0);
    char *report = NULL;
    ck_assert_int_eq(skv_manager_check(dir, &report, NULL), SKV_ESTATE);
    skv_free(report);
}
END_TEST

/* No database: a new cluster only where none lived, or with init. */
START_TEST(test_missing_db_and_init)
{
    skv_manager *m = open_ok(T0);    /* first start: a new cluster */
    skv_manager_free(m);
    char p[128], q[128];
    path_of(p, sizeof p, "manager.db");
    path_of(q, sizeof q, "manager.db.moved");
    ck_assert_int_eq(rename(p, q), 0);
    expect_refused("admin.key shows a cluster lived here", 0);
    /* init over an existing database is refused too. */
    ck_assert_int_eq(rename(q, p), 0);
    expect_refused("--init", 1);
    /* Moved away: init creates a new cluster and a new admin key. */
    char key0[512], key1[512];
    size_t k0 = slurp("admin.key", key0, sizeof key0);
    ck_assert_int_eq(rename(p, q), 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(try_open(&m, 1, T0 + 60, &e), &e);
    skv_manager_free(m);
    size_t k1 = slurp("admin.key", key1, sizeof key1);
    ck_assert(k0 != k1 || memcmp(key0, key1, k0) != 0);
    ck_assert_int_eq(query_int("PRAGMA application_id"), 0x534B4F56);
    /* A WAL without its database: refused even with init. */
    char w[128];
    path_of(w, sizeof w, "manager.db-wal");
    ck_assert_int_eq(rename(p, q), 0);
    FILE *f = fopen(w, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(try_open(&m, 1, T0, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "WAL"), "%s", e.message);
    ck_assert_int_eq(access(p, F_OK), -1);
    /* Bad option values. */
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    o.data_dir = dir;
    o.init = 2;
    ck_assert_int_eq(skv_manager_open(&m, &o, send_cb, NULL, T0, NULL),
                     SKV_EINVAL);
    o.init = 0;
    o.backup_dir = "relative";
    ck_assert_int_eq(skv_manager_open(&m, &o, send_cb, NULL, T0, NULL),
                     SKV_EINVAL);
}
END_TEST

/* Databases written before application_id was set are adopted. */
START_TEST(test_old_db_adopted)
{
    populate(2);
    exec_sql("manager.db", "PRAGMA application_id=0");
    ck_assert_int_eq(query_int("PRAGMA application_id"), 0);
    skv_manager *m = open_ok(T0 + 100);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("PRAGMA application_id"), 0x534B4F56);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 2);
    ck_assert_int_eq(skv_manager_check(dir, NULL, NULL), 0);
    ck_assert_int_eq(skv_manager_check("relative", NULL, NULL), SKV_EINVAL);
}
END_TEST

/* A manager that died (no close, its WAL left): the full check reads the
 * WAL but leaves it as it is; the next open takes it in. */
START_TEST(test_check_keeps_wal)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        skv_manager *m = open_ok(T0);
        cred c;
        admin_cred(&c);
        for (int i = 0; i < 3; i++)
            submit_ok(m, &c, T0 + 1 + i);
        _exit(0);    /* like kill -9: nothing closed */
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char w[128];
    struct stat s0, s1;
    path_of(w, sizeof w, "manager.db-wal");
    ck_assert_int_eq(stat(w, &s0), 0);
    ck_assert_int_gt(s0.st_size, 0);
    char *report = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_check(dir, &report, &e), &e);
    ck_assert_ptr_null(report);
    ck_assert_int_eq(stat(w, &s1), 0);
    ck_assert_int_eq(s1.st_size, s0.st_size);
    skv_manager *m = open_ok(T0 + 100);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 3);
}
END_TEST

/* A captured signed session.submit replayed after a restart within the
 * skew window is refused; so is a read whose nonce a tick persisted. */
START_TEST(test_replay_after_restart)
{
    skv_manager *m = open_ok(T0);
    cred c;
    admin_cred(&c);
    size_t len, rlen;
    void *f = submit_frame(&len, &c, T0 + 10);
    ck_assert_int_eq(feed(m, f, len, T0 + 10), 0);
    ck_assert_int_eq(n_errors, 0);
    skv_proto_session_list q;
    memset(&q, 0, sizeof q);
    void *r = frame_of(&rlen, SKV_PROTO_SESSION_LIST, &q, &c, T0 + 11);
    ck_assert_int_eq(feed(m, r, rlen, T0 + 11), 0);
    ck_assert_int_eq(n_replies, 2);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_tick(m, T0 + 12, &e), &e);
    /* In memory the replay is refused already. */
    ck_assert_int_eq(feed(m, f, len, T0 + 13), SKV_EAUTH);
    /* An admin change, its nonce committed with it (no tick after). */
    skv_proto_admin_domain d;
    memset(&d, 0, sizeof d);
    d.op = SKV_PROTO_ADMIN_CREATE;
    d.domain.name = "d1";
    d.domain.active = 1;
    size_t alen;
    void *a = frame_of(&alen, SKV_PROTO_ADMIN_DOMAIN, &d, &c, T0 + 14);
    ck_assert_int_eq(feed(m, a, alen, T0 + 14), 0);
    ck_assert_int_eq(n_replies, 3);
    ck_assert_int_eq(n_errors, 1);    /* the in-memory replay */
    skv_manager_free(m);

    m = open_ok(T0 + 60000);    /* a minute later, inside the window */
    n_replies = n_errors = 0;
    ck_assert_int_eq(feed(m, f, len, T0 + 60001), SKV_EAUTH);
    ck_assert_msg(strstr(last_error, "replayed"), "%s", last_error);
    ck_assert_int_eq(feed(m, r, rlen, T0 + 60002), SKV_EAUTH);
    ck_assert_int_eq(feed(m, a, alen, T0 + 60002), SKV_EAUTH);
    ck_assert_int_eq(n_replies, 0);
    /* New requests still pass. */
    submit_ok(m, &c, T0 + 60003);
    skv_manager_free(m);
    skv_free(f);
    skv_free(r);
    skv_free(a);
    /* The first submit and the new one: the replay added nothing. */
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 2);
}
END_TEST

/* Nonces outside the window are pruned by the tick. */
START_TEST(test_nonces_pruned)
{
    skv_manager *m = open_ok(T0);
    cred c;
    admin_cred(&c);
    submit_ok(m, &c, T0 + 1);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT count(*) FROM auth_nonces"), 1);
    int64_t later = T0 + 3 * 300000;
    m = open_ok(later);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_tick(m, later + 1, &e), &e);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT count(*) FROM auth_nonces"), 0);
}
END_TEST

/* The verifier's side: remembered nonces, bad input. */
START_TEST(test_verifier_remember)
{
    skv_auth_verifier *v = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_auth_verifier_new(&v, NULL, &e), &e);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    SKV_CK_OK(skv_auth_keypair_generate(ak, sk, &e), &e);
    skv_auth_principal p = {"u", SKV_AUTH_ROLE_USER};
    SKV_CK_OK(skv_auth_verifier_add_key(v, ak, sk, &p, &e), &e);
    uint8_t nonce[SKV_AUTH_NONCE_BYTES] = {1, 2, 3};
    ck_assert_int_eq(skv_auth_verifier_remember(v, ak, nonce, T0, T0, &e), 0);
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, ak), 1);
    ck_assert_int_eq(skv_auth_verifier_remember(v, ak, nonce, T0, T0, &e), 0);
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, ak), 1);
    /* Stale: ignored (such a request is refused anyway). */
    nonce[0] = 9;
    ck_assert_int_eq(skv_auth_verifier_remember(v, ak, nonce, T0 - 3600000,
                                                T0, &e), 0);
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, ak), 1);
    ck_assert_int_eq(skv_auth_verifier_remember(v, "AKnope", nonce, T0, T0,
                                                &e), SKV_ENOENT);
    ck_assert_int_eq(skv_auth_verifier_remember(NULL, ak, nonce, T0, T0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_auth_verifier_remember(v, ak, NULL, T0, T0, &e),
                     SKV_EINVAL);
    skv_auth_verifier_free(v);
}
END_TEST

/* A database written before per-component versions (PRAGMA user_version=1,
 * no schema_version table, as every earlier manager left it) opens, is
 * migrated to the current components, and keeps every row. */
START_TEST(test_migrate_unversioned_db)
{
    populate(3);
    skv_manager *m = open_ok(T0 + 10);
    skv_manager_free(m);
    exec_sql("manager.db", "DROP TABLE schema_version");
    /* As such a database was: without the columns later steps add. */
    core_at_v2();
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "preemption");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "preempt_min_runtime_ms");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "preempt_mode");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "idle_timeout_ms");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "max_lifetime_ms");
    exec_sql("manager.db", "ALTER TABLE resource_policies DROP COLUMN "
             "idle_timeout_ms");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "preempt_order");
    exec_sql("manager.db", "ALTER TABLE resource_groups DROP COLUMN "
             "numa_policy");
    ck_assert_int_eq(query_int("PRAGMA user_version"), 1);
    int64_t hist = query_int("SELECT count(*) FROM session_history");
    int64_t nonces = query_int("SELECT count(*) FROM auth_nonces");
    ck_assert_int_gt(hist, 0);
    ck_assert_int_gt(nonces, 0);
    m = open_ok(T0 + 20);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 3);
    ck_assert_int_eq(query_int("SELECT count(*) FROM kernels"), 3);
    ck_assert_int_eq(query_int("SELECT count(*) FROM session_history"), hist);
    ck_assert_int_eq(query_int("SELECT count(*) FROM auth_nonces"), nonces);
    ck_assert_int_eq(query_int("SELECT count(*) FROM users"), 1);
    ck_assert_int_eq(query_int("SELECT count(*) FROM schema_version WHERE "
                               "component IN ('nonces','suspects','net') "
                               "AND version = 1"), 3);
    ck_assert_int_eq(query_int("SELECT version FROM schema_version WHERE "
                               "component = 'core'"), 4);
    ck_assert_int_eq(skv_manager_check(dir, NULL, NULL), 0);
}
END_TEST

/* core step 2: a database whose session_history still has AUTOINCREMENT
 * (core at version 1) opens with every history row and id kept, and new
 * rows still get larger ids. */
START_TEST(test_migrate_history_v2)
{
    populate(3);
    core_at_v2();
    exec_sql("manager.db", "CREATE TABLE h1(id INTEGER PRIMARY KEY "
             "AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id)"
             " ON DELETE CASCADE, status TEXT NOT NULL, ts_ms INTEGER NOT "
             "NULL, reason TEXT); INSERT INTO h1 SELECT * FROM "
             "session_history; DROP TABLE session_history; ALTER TABLE h1 "
             "RENAME TO session_history; CREATE INDEX history_session ON "
             "session_history(session_id); UPDATE schema_version SET "
             "version = 1 WHERE component = 'core'");
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name = 'session_history' AND sql LIKE "
                               "'%AUTOINCREMENT%'"), 1);
    int64_t n = query_int("SELECT count(*) FROM session_history");
    int64_t sum = query_int("SELECT sum(id * 7 + ts_ms) FROM "
                            "session_history");
    int64_t top = query_int("SELECT max(id) FROM session_history");
    ck_assert_int_gt(n, 0);
    skv_manager *m = open_ok(T0 + 20);
    cred c;
    admin_cred(&c);
    submit_ok(m, &c, T0 + 21);
    skv_manager_free(m);
    ck_assert_int_eq(query_int("SELECT version FROM schema_version WHERE "
                               "component = 'core'"), 4);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name = 'session_history' AND sql LIKE "
                               "'%AUTOINCREMENT%'"), 0);
    ck_assert_int_eq(query_int("SELECT count(*) FROM session_history"),
                     n + 1);
    ck_assert_int_eq(query_int("SELECT sum(id * 7 + ts_ms) FROM "
                               "session_history WHERE ts_ms < 1700000000021"),
                     sum);
    ck_assert_int_gt(query_int("SELECT min(id) FROM session_history WHERE "
                               "ts_ms = 1700000000021"), top);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name = 'history_session'"), 1);
    ck_assert_int_eq(skv_manager_check(dir, NULL, NULL), 0);
}
END_TEST

/* A database a newer library migrated further is refused, untouched. */
START_TEST(test_migrate_newer_refused)
{
    populate(1);
    exec_sql("manager.db", "UPDATE schema_version SET version = 7 WHERE "
             "component = 'suspects'");
    skv_manager *m;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(try_open(&m, 0, T0 + 50, &e), SKV_EVERSION);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, "'suspects' is at version 7"), "%s",
                  e.message);
    ck_assert_int_eq(query_int("SELECT version FROM schema_version WHERE "
                               "component = 'suspects'"), 7);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 1);
}
END_TEST

static skv__db *mem_db(void)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE,
                                     NULL), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    return db;
}

static int version_of(skv__db *db, const char *component)
{
    int v = -1;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_schema_version(db, component, &v, &e), &e);
    return v;
}

static int64_t mem_count(skv__db *db, const char *sql)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    if (skv__db_prepare(db, sql, &st, &e))
        return -1;    /* no such table */
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return n;
}

/* Steps run in order, once; a failing step leaves nothing of itself; a
 * malformed list or a newer database is refused before anything runs. */
START_TEST(test_migrate_steps)
{
    static const skv__mgr_migration list[] = {
        {1, "CREATE TABLE t(a INTEGER)", "CREATE TABLE t(a BIGINT)"},
        {2, "ALTER TABLE t ADD COLUMN b TEXT", NULL},
        {3, "CREATE TABLE u(x); CREATE TABLE t(y)", NULL},
    };
    skv__db *db = mem_db();
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_migrate(db, "c", list, 2, &e), &e);
    ck_assert_int_eq(version_of(db, "c"), 2);
    SKV_CK_OK(skv__db_exec(db, "INSERT INTO t(a, b) VALUES (1, 'x')", &e),
              &e);
    SKV_CK_OK(skv__mgr_store_migrate(db, "c", list, 2, &e), &e); /* again */
    ck_assert_int_eq(mem_count(db, "SELECT count(*) FROM t"), 1);
    /* Step 3 fails half-way: u is not left behind, the version stays. */
    ck_assert_int_eq(skv__mgr_store_migrate(db, "c", list, 3, &e), SKV_EIO);
    ck_assert_msg(strstr(e.message, "'c' step 3"), "%s", e.message);
    ck_assert_int_eq(version_of(db, "c"), 2);
    ck_assert_int_eq(mem_count(db, "SELECT count(*) FROM u"), -1);
    /* Newer than the list. */
    ck_assert_int_eq(skv__mgr_store_migrate(db, "c", list, 1, &e),
                     SKV_EVERSION);
    /* Another component is independent. */
    static const skv__mgr_migration d[] = {{1, "CREATE TABLE w(x)", NULL}};
    SKV_CK_OK(skv__mgr_store_migrate(db, "d", d, 1, &e), &e);
    ck_assert_int_eq(version_of(db, "d"), 1);
    /* Inside the caller's transaction: its rollback undoes the step. */
    static const skv__mgr_migration other[] = {{1, "CREATE TABLE v(x)",
                                                NULL}};
    SKV_CK_OK(skv__db_begin(db, &e), &e);
    SKV_CK_OK(skv__mgr_store_migrate(db, "e", other, 1, &e), &e);
    skv__db_rollback(db);
    ck_assert_int_eq(version_of(db, "e"), 0);
    ck_assert_int_eq(mem_count(db, "SELECT count(*) FROM v"), -1);
    /* Malformed lists and arguments. */
    static const skv__mgr_migration gap[] = {{1, "SELECT 1", NULL},
                                             {3, "SELECT 1", NULL}};
    static const skv__mgr_migration nosql[] = {{1, NULL, "SELECT 1"}};
    ck_assert_int_eq(skv__mgr_store_migrate(db, "g", gap, 2, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_migrate(db, "g", nosql, 1, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_migrate(db, "", list, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_migrate(db, NULL, list, 1, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_migrate(db, "g", list, 0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv__mgr_store_migrate(NULL, "g", list, 1, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(version_of(db, "g"), 0);
    skv__db_close(db);
}
END_TEST

/* The statements the store ran, as prepared (sqlite3_trace_v2). */
typedef struct traced {
    char sql[24][600];
    size_t n;
} traced;

static int trace_cb(unsigned type, void *ctx, void *p, void *x)
{
    (void)type;
    (void)x;
    traced *t = ctx;
    const char *sql = sqlite3_sql(p);
    if (t->n < 24 && sql && (strstr(sql, "sessions") ||
                             strstr(sql, "kernels")))
        snprintf(t->sql[t->n++], sizeof t->sql[0], "%s", sql);
    return 0;
}

static bool names_rows_table(const char *d)
{
    static const char *const t[] = {"kernels", "k", "sessions", "s"};
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(t[i]);
        if (!strncmp(d + 5, t[i], n) && (!d[5 + n] || d[5 + n] == ' '))
            return true;
    }
    return false;
}

/* The plan of sql reads kernels and sessions only through an index: a
 * SCAN of either is one of a partial index (core step 3). Returns whether
 * the plan uses one of them. */
static bool ck_indexed(sqlite3 *h, const char *sql)
{
    char q[700];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK,
                  "%s: %s", sql, sqlite3_errmsg(h));
    bool live = false;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *d = (const char *)sqlite3_column_text(st, 3);
        bool via_live = strstr(d, "INDEX kernels_live") ||
                        strstr(d, "INDEX sessions_live") ||
                        strstr(d, "INDEX sessions_ended");
        ck_assert_msg(strncmp(d, "SCAN ", 5) || !names_rows_table(d) ||
                      via_live, "%s: %s", sql, d);
        live |= via_live;
    }
    sqlite3_finalize(st);
    return live;
}

static int count_one(void *arg, const char *sid, const char *group)
{
    (void)sid;
    (void)group;
    ++*(int *)arg;
    return 0;
}

static void count_state(void *arg, const char *status, uint64_t n)
{
    (void)status;
    (void)n;
    ++*(int *)arg;
}

static void count_subnet(void *arg, const char *subnet)
{
    (void)subnet;
    ++*(int *)arg;
}

/* core step 3: the queries over live rows that the manager runs on its
 * hot paths and per agent (traced as the store runs them) read kernels
 * and sessions through the partial indexes kernels_live and
 * sessions_live, never by scanning either table. */
START_TEST(test_live_queries_indexed)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE,
                                     NULL), SQLITE_OK);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    traced t = {0};
    sqlite3_trace_v2(h, SQLITE_TRACE_STMT, trace_cb, &t);
    char **ids = NULL, sid[64];
    size_t n = 0;
    uint32_t load = 0;
    int calls = 0;
    int64_t kept = 0;
    skv__mgr_store_aging *ag = NULL;
    skv__mgr_store_live *lv = NULL;
    SKV_CK_OK(skv__mgr_store_agent_load(db, "a1", &load, &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_on(db, "a1", &ids, &n, &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_on_device(db, "a1", "cpu", &ids, &n,
                                                &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_to_create(db, "a1", &ids, &n, &e),
              &e);
    SKV_CK_OK(skv__mgr_store_agent_kernels(db, "a1", "RUNNING,TERMINATING",
                                           &ids, &n, &e), &e);
    SKV_CK_OK(skv__mgr_store_suspect_keep(db, "s1", "a1", 5, &kept, &e), &e);
    size_t agent_queries = t.n;
    SKV_CK_OK(skv__mgr_store_pending_each(db, count_one, &calls, &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_aging(db, false, &ag, &n, &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_aging(db, true, &ag, &n, &e), &e);
    SKV_CK_OK(skv__mgr_store_sessions_live(db, &lv, &n, &e), &e);
    ck_assert(!skv__mgr_store_pending_mentions(db, "s1"));
    SKV_CK_OK(skv__mgr_store_live_subnets(db, "a1", count_subnet, &calls,
                                          &e), &e);
    ck_assert_int_eq(skv__mgr_store_vfolder_mounted(db, "f1", sid,
                                                    sizeof sid, &e), 0);
    SKV_CK_OK(skv__mgr_store_count_states(db, count_state, &calls, &e), &e);
    sqlite3_trace_v2(h, 0, NULL, NULL);
    ck_assert_uint_eq(agent_queries, 6);
    ck_assert_uint_eq(t.n, 14);
    ck_assert_int_eq(calls, 0);
    for (size_t i = 0; i < t.n; i++) {
        bool live = ck_indexed(h, t.sql[i]);
        /* the one exception: a folder's mounts lead to sessions by id */
        ck_assert_msg(live || strstr(t.sql[i], "vfolder_mounts"),
                      "%s: no live index used", t.sql[i]);
    }
    skv__free(ag);
    skv__free(lv);
    skv__db_close(db);
}
END_TEST

/* core step 3 on a database at step 2 (status indexes, no live marker):
 * the marker is set on the live rows only, the status indexes go, the
 * partial ones come, and every row stays. */
START_TEST(test_migrate_live_marker)
{
    populate(3);
    core_at_v2();
    exec_sql("manager.db", "UPDATE schema_version SET version = 2 WHERE "
             "component = 'core'");
    /* one session ended, one running, one pending (as populated) */
    exec_sql("manager.db", "UPDATE sessions SET status='TERMINATED' WHERE "
             "seq=1; UPDATE kernels SET status='TERMINATED' WHERE session_id"
             "=(SELECT id FROM sessions WHERE seq=1); UPDATE sessions SET "
             "status='RUNNING' WHERE seq=2; UPDATE kernels SET status="
             "'RUNNING', agent_id='a1' WHERE session_id=(SELECT id FROM "
             "sessions WHERE seq=2)");
    int64_t hist = query_int("SELECT count(*) FROM session_history");
    /* the store's migration alone: a manager's restore would move the
     * running session of the unknown agent on */
    char p[128];
    sqlite3 *h = NULL;
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    path_of(p, sizeof p, "manager.db");
    ck_assert_int_eq(sqlite3_open_v2(p, &h, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    SKV_CK_OK(skv__db_wrap_sqlite(h, &db, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    skv__db_close(db);
    ck_assert_int_eq(query_int("SELECT version FROM schema_version WHERE "
                               "component = 'core'"), 4);
    /* core step 4 drops foreign keys on PostgreSQL only: here they stay */
    ck_assert_int_eq(query_int("SELECT (SELECT count(*) FROM pragma_"
                               "foreign_key_list('kernels')) + (SELECT "
                               "count(*) FROM pragma_foreign_key_list("
                               "'kernel_alloc')) + (SELECT count(*) FROM "
                               "pragma_foreign_key_list('session_history'))"),
                     3);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name IN ('sessions_status', "
                               "'kernels_agent')"), 0);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name IN ('sessions_live', 'kernels_live') "
                               "AND sql LIKE '%WHERE live=1%'"), 2);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sqlite_master WHERE "
                               "name = 'sessions_ended' AND sql LIKE "
                               "'%WHERE live IS NULL%'"), 1);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions INDEXED BY "
                               "sessions_ended WHERE live IS NULL AND "
                               "status='TERMINATED'"), 1);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions"), 3);
    ck_assert_int_eq(query_int("SELECT count(*) FROM kernels"), 3);
    ck_assert_int_eq(query_int("SELECT count(*) FROM session_history"), hist);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions WHERE live IS "
                               "NULL AND seq=1"), 1);
    ck_assert_int_eq(query_int("SELECT count(*) FROM sessions WHERE live=1 "
                               "AND seq>1"), 2);
    ck_assert_int_eq(query_int("SELECT count(*) FROM kernels WHERE live=1"),
                     2);
    ck_assert_int_eq(query_int("SELECT count(*) FROM kernels INDEXED BY "
                               "kernels_live WHERE live=1 AND agent_id="
                               "'a1'"), 1);
    skv_manager_free(open_ok(T0 + 20));
    ck_assert_int_eq(skv_manager_check(dir, NULL, NULL), 0);
}
END_TEST

Suite *skv_test_suite_store(void);
Suite *skv_test_suite_store(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_empty_db_refused);
    tcase_add_test(tc, test_damaged_page_refused);
    tcase_add_test(tc, test_foreign_db_refused);
    tcase_add_test(tc, test_missing_db_and_init);
    tcase_add_test(tc, test_old_db_adopted);
    tcase_add_test(tc, test_check_keeps_wal);
    tcase_add_test(tc, test_replay_after_restart);
    tcase_add_test(tc, test_nonces_pruned);
    tcase_add_test(tc, test_verifier_remember);
    tcase_add_test(tc, test_migrate_unversioned_db);
    tcase_add_test(tc, test_migrate_history_v2);
    tcase_add_test(tc, test_migrate_newer_refused);
    tcase_add_test(tc, test_migrate_steps);
    tcase_add_test(tc, test_live_queries_indexed);
    tcase_add_test(tc, test_migrate_live_marker);
    suite_add_tcase(s, tc);
    return s;
}
