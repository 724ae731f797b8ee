/* Running a component's migration steps (migrate.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "migrate.h"
#include "skv_internal.h"

#define COMPONENT_MAX 64

/* The same text on both engines: TEXT and BIGINT mean the same there. */
static const char table_sql[] =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " component TEXT PRIMARY KEY, version BIGINT NOT NULL)";

int skv__mgr_store_schema_version(skv__db *db, const char *component,
                                  int *out, skv_error *err)
{
    skv__db_stmt *st = NULL;
    *out = 0;
    int rc = skv__db_prepare(db, "SELECT version FROM schema_version"
                             " WHERE component = ?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, component);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        *out = (int)skv__db_column_int64(st, 0);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

static int record(skv__db *db, const char *component, int version,
                  skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO schema_version (component,"
                             " version) VALUES (?, ?) ON CONFLICT (component)"
                             " DO UPDATE SET version = excluded.version",
                             &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, component);
    skv__db_bind_int64(st, 2, version);
    rc = skv__db_step(st, err);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* A list is checked whole before anything runs: a gap or a reordering is
 * a programming error that must not half-migrate a database. */
static int check_list(const char *component, const skv__mgr_migration *list,
                      size_t n, skv_error *err)
{
    if (!component || !*component || strlen(component) >= COMPONENT_MAX)
        return skv__err(err, SKV_EINVAL, "schema migration: bad component "
                        "name");
    if (!list || !n)
        return skv__err(err, SKV_EINVAL, "schema migration '%s': no steps",
                        component);
    for (size_t i = 0; i < n; i++)
        if (list[i].version != (int)i + 1 || !list[i].sqlite)
            return skv__err(err, SKV_EINVAL, "schema migration '%s': step "
                            "%zu has version %d (want %zu, with SQLite DDL)",
                            component, i, list[i].version, i + 1);
    return 0;
}

static int step(skv__db *db, const char *component,
                const skv__mgr_migration *s, skv_error *err)
{
    bool pg = skv__db_kind_of(db) == SKV__DB_POSTGRES;
    const char *ddl = pg ? s->postgres : s->sqlite;
    if (!ddl)
        return skv__err(err, SKV_ENOTSUP, "schema migration '%s' step %d "
                        "has no %s DDL yet", component, s->version,
                        pg ? "PostgreSQL" : "SQLite");
    int rc = skv__db_exec(db, ddl, err);
    if (!rc)
        rc = record(db, component, s->version, err);
    if (rc)
        skv__err_prefix(err, "schema migration '%s' step %d", component,
                        s->version);
    return rc;
}

static int run(skv__db *db, const char *component,
               const skv__mgr_migration *list, size_t n, skv_error *err)
{
    int have = 0;
    int rc = skv__db_exec(db, table_sql, err);
    if (!rc)
        rc = skv__mgr_store_schema_version(db, component, &have, err);
    if (rc)
        return rc;
    if (have > (int)n)
        return skv__err(err, SKV_EVERSION, "manager database: schema of "
                        "'%s' is at version %d, newer than this library's "
                        "%zu", component, have, n);
    for (size_t i = (size_t)have; i < n && !rc; i++)
        rc = step(db, component, &list[i], err);
    return rc;
}

int skv__mgr_store_migrate(skv__db *db, const char *component,
                           const skv__mgr_migration *list, size_t n,
                           skv_error *err)
{
    if (!db)
        return skv__err(err, SKV_EINVAL, "schema migration: no database");
    int rc = check_list(component, list, n, err);
    if (rc)
        return rc;
    if (skv__db_in_transaction(db))
        return run(db, component, list, n, err);
    if ((rc = skv__db_begin(db, err)))
        return rc;
    rc = run(db, component, list, n, err);
    if (rc) {
        skv__db_rollback(db);
        return rc;
    }
    return skv__db_commit(db, err);
}
