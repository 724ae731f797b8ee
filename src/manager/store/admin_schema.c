/* The admin plane's tables. References are checked by the admin plane
 * (with messages naming the culprit); the REFERENCES clauses document them
 * and hold when the core enables foreign keys. Secret keys are stored as
 * given because verification needs them: the database must be owner-only
 * (admin_protect.c).
 *
 * The "admin" component of the versioned migrations (migrate.h). Step 1
 * is the schema the admin plane had before migrations were versioned,
 * written with IF NOT EXISTS, so a database from that time passes through
 * it unchanged and keeps its rows. A later change is a step appended to
 * the list. The PostgreSQL DDL (NULL until the engine's owner writes it,
 * refused loudly there) mirrors this one: BYTEA for max_slots, BIGINT for
 * the integers, the column "user" quoted.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"
#include "migrate.h"
#include "ops.h"
#include "schema_pg.h"

static const char admin_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS domains ("
    " name TEXT PRIMARY KEY, description TEXT,"
    " active INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS resource_policies ("
    " name TEXT PRIMARY KEY,"
    " max_slots BLOB,"                         /* skv_slots msgpack */
    " max_concurrent_sessions INTEGER NOT NULL DEFAULT 0,"
    " max_pending_sessions INTEGER NOT NULL DEFAULT 0,"
    " max_cluster_size INTEGER NOT NULL DEFAULT 0,"
    " max_session_lifetime_ms INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS resource_groups ("
    " name TEXT PRIMARY KEY, description TEXT,"
    " scheduler TEXT NOT NULL, selector TEXT NOT NULL,"
    " lost_batch_policy TEXT NOT NULL DEFAULT 'requeue'"
    "  CHECK (lost_batch_policy IN ('requeue','fail')),"
    " pending_timeout_ms INTEGER NOT NULL DEFAULT 0,"
    " session_types TEXT NOT NULL DEFAULT '',"  /* "batch,inference"; "" all */
    " active INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS domain_groups ("
    " domain TEXT NOT NULL REFERENCES domains(name),"
    " resource_group TEXT NOT NULL REFERENCES resource_groups(name),"
    " PRIMARY KEY (domain, resource_group));"
    "CREATE TABLE IF NOT EXISTS projects ("
    " name TEXT PRIMARY KEY,"
    " domain TEXT NOT NULL REFERENCES domains(name), description TEXT,"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " active INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS users ("
    " name TEXT PRIMARY KEY, email TEXT,"
    " role TEXT NOT NULL CHECK (role IN ('user','admin','agent')),"
    " domain TEXT NOT NULL REFERENCES domains(name),"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " description TEXT, active INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS user_projects ("
    " user TEXT NOT NULL REFERENCES users(name),"
    " project TEXT NOT NULL REFERENCES projects(name),"
    " PRIMARY KEY (user, project));"
    "CREATE TABLE IF NOT EXISTS keypairs ("
    " access_key TEXT PRIMARY KEY, secret_key TEXT NOT NULL,"
    " user TEXT NOT NULL REFERENCES users(name),"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " active INTEGER NOT NULL DEFAULT 1, created_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS keypairs_user ON keypairs(user);"
    "CREATE INDEX IF NOT EXISTS users_domain ON users(domain);"
    "CREATE INDEX IF NOT EXISTS user_projects_project"
    " ON user_projects(project);";

/* Step 2: per-group preemption (off by default, as before). preempt_mode
 * is checked by the admin plane (no CHECK: a column under a CHECK cannot
 * be dropped again, which the migration tests do). */
static const char admin_v2_sqlite[] =
    "ALTER TABLE resource_groups ADD COLUMN preemption INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN preempt_min_runtime_ms INTEGER"
    " NOT NULL DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN preempt_mode TEXT NOT NULL"
    " DEFAULT 'requeue';";

/* Step 3: quotas per resource group (the quota tree). IF NOT EXISTS: a
 * database whose versions table was lost passes through unchanged. */
static const char admin_v3_sqlite[] =
    "CREATE TABLE IF NOT EXISTS quotas ("
    " scope TEXT NOT NULL, owner TEXT NOT NULL,"
    " resource_group TEXT NOT NULL REFERENCES resource_groups(name),"
    " guaranteed BLOB, hard_limit BLOB, borrow_limit BLOB,"  /* msgpack */
    " PRIMARY KEY (scope, owner, resource_group));";

/* Step 4: idle and lifetime limits per group and per resource policy
 * (0: none, as before). */
static const char admin_v4_sqlite[] =
    "ALTER TABLE resource_groups ADD COLUMN idle_timeout_ms INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN max_lifetime_ms INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_policies ADD COLUMN idle_timeout_ms INTEGER NOT"
    " NULL DEFAULT 0;";

/* Step 5: which victims preemption considers first (as before: the
 * lowest priority). */
static const char admin_v5_sqlite[] =
    "ALTER TABLE resource_groups ADD COLUMN preempt_order TEXT NOT NULL"
    " DEFAULT 'lowest-priority';";

static const skv__mgr_migration admin[] = {
    {1, admin_v1_sqlite, skv__mgr_store_admin_v1_pg},
    {2, admin_v2_sqlite, skv__mgr_store_admin_v2_pg},
    {3, admin_v3_sqlite, skv__mgr_store_admin_v3_pg},
    {4, admin_v4_sqlite, skv__mgr_store_admin_v4_pg},
    {5, admin_v5_sqlite, skv__mgr_store_admin_v5_pg},
};

int skv__mgr_store_admin_schema(skv__db *db, skv_error *err)
{
    if (!db)
        return skv__err(err, SKV_EINVAL, "admin schema: no database");
    int rc = skv__mgr_store_migrate(db, "admin", admin,
                                    sizeof admin / sizeof admin[0], err);
    /* the groups' operations policy next to them (ops.c; its agent
     * states serve the manager core, which always opens the admin plane) */
    return rc ? rc : skv__mgr_store_ops_schema(db, err);
}
