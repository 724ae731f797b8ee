/* The PostgreSQL DDL of every migration component against the schema a
 * real manager creates on SQLite: the same tables, the same columns, the
 * types mapped (INTEGER -> bigint, BLOB -> bytea, TEXT -> text). A column
 * added to an SQLite step without its PostgreSQL mirror fails here. The
 * migrations themselves run through migrate.h on a real PostgreSQL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../src/manager/store/admin_store.h"
#include "../src/manager/store/db.h"
#include "../src/manager/store/migrate.h"
#include "../src/manager/store/schema.h"
#include "../src/manager/store/schema_pg.h"
#include "pg_harness.h"
#include "skv_test.h"
#include "sokovan/manager.h"

enum { MAX_COLS = 512 };

typedef struct cols {
    char line[MAX_COLS][128];    /* "table.column type" */
    int n;
} cols;

static int send_none(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)conn;
    (void)frame;
    (void)len;
    (void)p;
    return 0;
}

static const char *pg_type_of(const char *sqlite_type)
{
    if (!strcasecmp(sqlite_type, "INTEGER") ||
        !strcasecmp(sqlite_type, "BIGINT"))
        return "bigint";
    if (!strcasecmp(sqlite_type, "BLOB"))
        return "bytea";
    if (!strcasecmp(sqlite_type, "TEXT"))
        return "text";
    return sqlite_type;
}

static void add(cols *c, const char *table, const char *col,
                const char *type)
{
    ck_assert_int_lt(c->n, MAX_COLS);
    snprintf(c->line[c->n++], sizeof c->line[0], "%s.%s %s", table, col,
             type);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Every column of the manager.db a real manager makes in a new dir. */
static void sqlite_columns(cols *c)
{
    char dir[] = "/tmp/skv-schema-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    o.data_dir = dir;
    skv_manager *m = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_open(&m, &o, send_none, NULL, 1000, &e), &e);
    skv_manager_free(m);
    snprintf(path, sizeof path, "%s/manager.db", dir);
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT m.name, p.name, p.type "
                     "FROM sqlite_master m, pragma_table_info(m.name) p "
                     "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'",
                     -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        add(c, (const char *)sqlite3_column_text(st, 0),
            (const char *)sqlite3_column_text(st, 1),
            pg_type_of((const char *)sqlite3_column_text(st, 2)));
    sqlite3_finalize(st);
    sqlite3_close(h);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    qsort(c->line, (size_t)c->n, sizeof c->line[0], by_text);
}

static void pg_columns(skv__db *db, cols *c)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, "SELECT table_name, column_name, data_type"
                              " FROM information_schema.columns"
                              " WHERE table_schema = 'public'", &st, &e), &e);
    while (skv__db_step(st, &e) == SKV__DB_ROW)
        add(c, skv__db_column_text(st, 0), skv__db_column_text(st, 1),
            skv__db_column_text(st, 2));
    skv__db_done(st);
    qsort(c->line, (size_t)c->n, sizeof c->line[0], by_text);
}

static skv__db *pg_open(skv_pg *pg)
{
    const char *skip = skv_pg_start(pg);
    if (skip) {
        fprintf(stderr, "schema_pg: SKIP: %s\n", skip);
        return NULL;
    }
    ck_assert_msg(skv_pg_running(pg), "postgres: %s", pg->why);
    skv__db *db = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_open_postgres(pg->conninfo, &db, &e), &e);
    return db;
}

/* Every component through migrate.h as the manager runs it, twice: the
 * second run finds every version recorded and changes nothing. */
static void migrate_all(skv__db *db)
{
    skv_error e = SKV_ERROR_INIT;
    for (int round = 0; round < 2; round++) {
        SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
        SKV_CK_OK(skv__mgr_store_admin_schema(db, &e), &e);
    }
    const char *comp[] = {"core", "nonces", "suspects", "admin", "net",
                          "limits", "vfolders", "ops", "topology"};
    for (size_t i = 0; i < sizeof comp / sizeof comp[0]; i++) {
        int v = 0;
        SKV_CK_OK(skv__mgr_store_schema_version(db, comp[i], &v, &e), &e);
        int want = strcmp(comp[i], "admin") == 0  ? 6
                   : strcmp(comp[i], "core") == 0 ? 4
                   : strcmp(comp[i], "ops") == 0  ? 2
                                                  : 1;
        ck_assert_msg(v == want, "%s at version %d", comp[i], v);
    }
}

/* The foreign keys core step 4 drops (kernels -> sessions, kernel_alloc
 * -> kernels, session_history -> sessions), by catalog, whatever named. */
#define FKS_GONE                                                          \
    "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid" \
    " IN ('kernels'::regclass, 'kernel_alloc'::regclass,"                 \
    " 'session_history'::regclass)"

static int64_t count(skv__db *db, const char *sql)
{
    skv__db_stmt *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_prepare(db, sql, &st, &e), &e);
    ck_assert_int_eq(skv__db_step(st, &e), SKV__DB_ROW);
    int64_t n = skv__db_column_int64(st, 0);
    skv__db_done(st);
    return n;
}

START_TEST(test_pg_schema_mirrors_sqlite)
{
    static cols lite, pg;
    skv_pg srv;
    skv__db *db = pg_open(&srv);
    if (!db)
        return;
    migrate_all(db);
    sqlite_columns(&lite);
    pg_columns(db, &pg);
    int i = 0, j = 0;
    for (; i < lite.n || j < pg.n;) {
        int d = i == lite.n ? 1 : j == pg.n ? -1
                : strcmp(lite.line[i], pg.line[j]);
        ck_assert_msg(d == 0, "%s only on %s", d < 0 ? lite.line[i]
                      : pg.line[j], d < 0 ? "SQLite" : "PostgreSQL");
        i++;
        j++;
    }
    ck_assert_int_gt(lite.n, 80);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

/* The DDL works as the store uses it: ids generated like AUTOINCREMENT,
 * an explicit id accepted (restores copy them), the token unique per
 * owner, the suspects' cascade, and `user` usable when quoted. */
START_TEST(test_pg_schema_behaves)
{
    skv_pg srv;
    skv__db *db = pg_open(&srv);
    if (!db)
        return;
    migrate_all(db);
    skv_error e = SKV_ERROR_INIT;
    const char *ins = "INSERT INTO sessions (id, owner, domain, project,"
        " resource_group, session_type, cluster_mode, cluster_size, image,"
        " spec, status, created_ms, client_token) VALUES (?, 'o', 'd', 'p',"
        " 'g', 'batch', 'single-node', 1, 'i', ?, 'PENDING', 1, ?)"
        " RETURNING seq";
    int64_t seq[2];
    for (int k = 0; k < 3; k++) {
        skv__db_stmt *st = NULL;
        SKV_CK_OK(skv__db_prepare(db, ins, &st, &e), &e);
        skv__db_bind_text(st, 1, k == 0 ? "s-1" : k == 1 ? "s-2" : "s-3");
        skv__db_bind_blob(st, 2, "\x80\x00", 2);
        skv__db_bind_text(st, 3, k == 2 ? "tok" : k == 1 ? "tok" : NULL);
        int rc = skv__db_step(st, &e);
        if (k < 2) {
            ck_assert_int_eq(rc, SKV__DB_ROW);
            seq[k] = skv__db_column_int64(st, 0);
        } else {
            ck_assert_int_eq(rc, SKV_EEXIST);   /* same owner and token */
        }
        skv__db_done(st);
    }
    ck_assert_int_eq(seq[1], seq[0] + 1);
    SKV_CK_OK(skv__db_exec(db, "INSERT INTO session_history (id, session_id,"
                           " status, ts_ms) VALUES (100, 's-1', 'PENDING', 1);"
                           "INSERT INTO kernel_suspects (kernel_id, session_id,"
                           " idx, agent_id, status, lost_ms) VALUES ('k',"
                           " 's-1', 0, 'a', 'RUNNING', 1);"
                           "INSERT INTO kernel_suspect_alloc (kernel_id,"
                           " device_id, slot, amount, whole) VALUES ('k', 'd',"
                           " 'cpu', 1, 0);"
                           "DELETE FROM sessions WHERE id = 's-1';"
                           "INSERT INTO domains (name) VALUES ('d');"
                           "INSERT INTO users (name, role, domain) VALUES"
                           " ('u', 'user', 'd');"
                           "INSERT INTO keypairs (access_key, secret_key,"
                           " \"user\", created_ms) VALUES ('a', 's', 'u', 1)",
                           &e), &e);
    /* cascaded; the history row has no foreign key any more (step 4) */
    ck_assert_int_eq(count(db, "SELECT (SELECT COUNT(*) FROM kernel_suspects)"
                           " + (SELECT COUNT(*) FROM kernel_suspect_alloc)"),
                     0);
    ck_assert_int_eq(count(db, "SELECT COUNT(*) FROM session_history"), 1);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

/* core step 4: a database migrated fresh has none of the three foreign
 * keys; the suspects' keep theirs. */
START_TEST(test_pg_core_fks_fresh)
{
    skv_pg srv;
    skv__db *db = pg_open(&srv);
    if (!db)
        return;
    migrate_all(db);
    ck_assert_int_eq(count(db, FKS_GONE), 0);
    ck_assert_int_eq(count(db, "SELECT count(*) FROM pg_constraint WHERE"
                           " contype = 'f' AND conrelid IN"
                           " ('kernel_suspects'::regclass,"
                           " 'kernel_suspect_alloc'::regclass)"), 2);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

/* core step 4 on a database as step 3 left it (step 1's foreign keys,
 * under the names PostgreSQL chose): the keys go, every row stays, and
 * a history row no longer waits on a check of its session. */
START_TEST(test_pg_core_step4_upgrade)
{
    static const skv__mgr_migration at_v3[] = {
        {1, "SELECT 1", skv__mgr_store_core_v1_pg},
        {2, "SELECT 1", "SELECT 1"},
        {3, "SELECT 1", skv__mgr_store_core_v3_pg},
    };
    skv_pg srv;
    skv__db *db = pg_open(&srv);
    if (!db)
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_store_migrate(db, "core", at_v3, 3, &e), &e);
    ck_assert_int_eq(count(db, FKS_GONE), 3);
    SKV_CK_OK(skv__db_exec(db, "INSERT INTO sessions (id, owner, domain,"
                           " project, resource_group, session_type,"
                           " cluster_mode, cluster_size, image, spec, status,"
                           " created_ms) VALUES ('s-1', 'o', 'd', 'p', 'g',"
                           " 'batch', 'single-node', 1, 'i', '\\x00',"
                           " 'RUNNING', 1);"
                           "INSERT INTO kernels (id, session_id, idx, role,"
                           " status, agent_id) VALUES ('s-1-0', 's-1', 0,"
                           " 'main', 'RUNNING', 'a1');"
                           "INSERT INTO kernel_alloc VALUES ('s-1-0', 'd0',"
                           " 'cpu', 2, 0);"
                           "INSERT INTO session_history (session_id, status,"
                           " ts_ms) VALUES ('s-1', 'PENDING', 1),"
                           " ('s-1', 'RUNNING', 2)", &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(db, &e), &e);
    int v = 0;
    SKV_CK_OK(skv__mgr_store_schema_version(db, "core", &v, &e), &e);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(count(db, FKS_GONE), 0);
    ck_assert_int_eq(count(db, "SELECT count(*) FROM sessions WHERE"
                           " id = 's-1' AND live = 1"), 1);
    ck_assert_int_eq(count(db, "SELECT count(*) FROM kernels k JOIN"
                           " kernel_alloc a ON a.kernel_id = k.id WHERE"
                           " k.session_id = 's-1' AND a.amount = 2"), 1);
    ck_assert_int_eq(count(db, "SELECT sum(ts_ms) FROM session_history"
                           " WHERE session_id = 's-1'"), 3);
    SKV_CK_OK(skv__db_exec(db, "INSERT INTO session_history (session_id,"
                           " status, ts_ms) VALUES ('nobody', 'X', 3)", &e),
              &e);
    skv__db_close(db);
    skv_pg_stop(&srv);
}
END_TEST

Suite *skv_test_suite_schema_pg(void);
Suite *skv_test_suite_schema_pg(void)
{
    Suite *s = suite_create("schema_pg");
    TCase *tc = tcase_create("schema_pg");
    tcase_add_test(tc, test_pg_schema_mirrors_sqlite);
    tcase_add_test(tc, test_pg_schema_behaves);
    tcase_add_test(tc, test_pg_core_fks_fresh);
    tcase_add_test(tc, test_pg_core_step4_upgrade);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
