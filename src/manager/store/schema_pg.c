/* PostgreSQL DDL for the migration components; see schema_pg.h. Kept
 * beside, not inside, the SQLite lists so each engine's text reads whole.
 * SPDX-License-Identifier: Apache-2.0 */
#include "schema_pg.h"

const char skv__mgr_store_core_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS agents("
    " id TEXT PRIMARY KEY, resource_group TEXT NOT NULL,"
    " architecture TEXT, address TEXT, status TEXT NOT NULL,"
    " capacity BYTEA, registered_ms BIGINT, last_heartbeat_ms BIGINT);"
    "CREATE TABLE IF NOT EXISTS agent_devices("
    " agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
    " idx BIGINT NOT NULL, device_id TEXT NOT NULL, kind TEXT,"
    " numa_node BIGINT, slots BYTEA, model TEXT, bus_id TEXT,"
    " PRIMARY KEY(agent_id, idx));"
    "CREATE TABLE IF NOT EXISTS sessions("
    " seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
    " name TEXT, owner TEXT NOT NULL, domain TEXT NOT NULL,"
    " project TEXT NOT NULL, resource_group TEXT NOT NULL,"
    " session_type TEXT NOT NULL, priority BIGINT NOT NULL DEFAULT 0,"
    " cluster_mode TEXT NOT NULL, cluster_size BIGINT NOT NULL,"
    " image TEXT NOT NULL, spec BYTEA NOT NULL, slots BYTEA,"
    " status TEXT NOT NULL, status_reason TEXT, exit_code BIGINT,"
    " end_status TEXT, end_reason TEXT,"
    " created_ms BIGINT NOT NULL, started_ms BIGINT, finished_ms BIGINT,"
    " client_token TEXT, UNIQUE(owner, client_token));"
    "CREATE INDEX IF NOT EXISTS sessions_status ON sessions(status);"
    "CREATE TABLE IF NOT EXISTS kernels("
    " id TEXT PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " idx BIGINT NOT NULL, role TEXT NOT NULL, image TEXT, slots BYTEA,"
    " agent_id TEXT, container_id TEXT, status TEXT NOT NULL,"
    " exit_code BIGINT, signal BIGINT, oom BIGINT, reason TEXT,"
    " cpu_usec BIGINT, mem_bytes BIGINT, mem_peak_bytes BIGINT,"
    " stats_ms BIGINT);"
    "CREATE INDEX IF NOT EXISTS kernels_agent ON kernels(agent_id, status);"
    "CREATE INDEX IF NOT EXISTS kernels_session ON kernels(session_id);"
    "CREATE TABLE IF NOT EXISTS kernel_alloc("
    " kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,"
    " device_id TEXT NOT NULL, slot TEXT NOT NULL, amount BIGINT NOT NULL,"
    " whole BIGINT NOT NULL, PRIMARY KEY(kernel_id, device_id, slot));"
    "CREATE TABLE IF NOT EXISTS session_history("
    " id BIGSERIAL PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " status TEXT NOT NULL, ts_ms BIGINT NOT NULL, reason TEXT);"
    "CREATE INDEX IF NOT EXISTS history_session"
    " ON session_history(session_id);";

/* PostgreSQL has no WITHOUT ROWID: the primary key is a separate index
 * there, which the range prune by ts_ms uses just the same. */
const char skv__mgr_store_nonces_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS auth_nonces("
    " ts_ms BIGINT NOT NULL, access_key TEXT NOT NULL,"
    " nonce BYTEA NOT NULL, PRIMARY KEY(ts_ms, access_key, nonce));";

const char skv__mgr_store_suspects_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS kernel_suspects("
    " kernel_id TEXT PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " idx BIGINT NOT NULL, agent_id TEXT NOT NULL, container_id TEXT,"
    " status TEXT NOT NULL, started_ms BIGINT, lost_ms BIGINT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS kernel_suspects_agent"
    " ON kernel_suspects(agent_id);"
    "CREATE INDEX IF NOT EXISTS kernel_suspects_session"
    " ON kernel_suspects(session_id);"
    "CREATE TABLE IF NOT EXISTS kernel_suspect_alloc("
    " kernel_id TEXT NOT NULL"
    "  REFERENCES kernel_suspects(kernel_id) ON DELETE CASCADE,"
    " device_id TEXT NOT NULL, slot TEXT NOT NULL, amount BIGINT NOT NULL,"
    " whole BIGINT NOT NULL, PRIMARY KEY(kernel_id, device_id, slot));";

/* `user` is reserved in PostgreSQL: quoted here, and statements using the
 * column must quote it too ("user" means the same on SQLite). */
const char skv__mgr_store_admin_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS domains ("
    " name TEXT PRIMARY KEY, description TEXT,"
    " active BIGINT NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS resource_policies ("
    " name TEXT PRIMARY KEY,"
    " max_slots BYTEA,"
    " max_concurrent_sessions BIGINT NOT NULL DEFAULT 0,"
    " max_pending_sessions BIGINT NOT NULL DEFAULT 0,"
    " max_cluster_size BIGINT NOT NULL DEFAULT 0,"
    " max_session_lifetime_ms BIGINT NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS resource_groups ("
    " name TEXT PRIMARY KEY, description TEXT,"
    " scheduler TEXT NOT NULL, selector TEXT NOT NULL,"
    " lost_batch_policy TEXT NOT NULL DEFAULT 'requeue'"
    "  CHECK (lost_batch_policy IN ('requeue','fail')),"
    " pending_timeout_ms BIGINT NOT NULL DEFAULT 0,"
    " session_types TEXT NOT NULL DEFAULT '',"
    " active BIGINT NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS domain_groups ("
    " domain TEXT NOT NULL REFERENCES domains(name),"
    " resource_group TEXT NOT NULL REFERENCES resource_groups(name),"
    " PRIMARY KEY (domain, resource_group));"
    "CREATE TABLE IF NOT EXISTS projects ("
    " name TEXT PRIMARY KEY,"
    " domain TEXT NOT NULL REFERENCES domains(name), description TEXT,"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " active BIGINT NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS users ("
    " name TEXT PRIMARY KEY, email TEXT,"
    " role TEXT NOT NULL CHECK (role IN ('user','admin','agent')),"
    " domain TEXT NOT NULL REFERENCES domains(name),"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " description TEXT, active BIGINT NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS user_projects ("
    " \"user\" TEXT NOT NULL REFERENCES users(name),"
    " project TEXT NOT NULL REFERENCES projects(name),"
    " PRIMARY KEY (\"user\", project));"
    "CREATE TABLE IF NOT EXISTS keypairs ("
    " access_key TEXT PRIMARY KEY, secret_key TEXT NOT NULL,"
    " \"user\" TEXT NOT NULL REFERENCES users(name),"
    " resource_policy TEXT REFERENCES resource_policies(name),"
    " active BIGINT NOT NULL DEFAULT 1, created_ms BIGINT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS keypairs_user ON keypairs(\"user\");"
    "CREATE INDEX IF NOT EXISTS users_domain ON users(domain);"
    "CREATE INDEX IF NOT EXISTS user_projects_project"
    " ON user_projects(project);";

const char skv__mgr_store_net_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS agent_net(agent_id TEXT PRIMARY KEY,"
    " subnet TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS session_net(session_id TEXT NOT NULL,"
    " agent_id TEXT NOT NULL, subnet TEXT NOT NULL,"
    " PRIMARY KEY(session_id, agent_id));"
    "CREATE TABLE IF NOT EXISTS session_ssh(session_id TEXT PRIMARY KEY,"
    " seed BYTEA NOT NULL);"
    "CREATE TABLE IF NOT EXISTS kernel_net(kernel_id TEXT PRIMARY KEY,"
    " address TEXT, published TEXT);";

const char skv__mgr_store_limits_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS session_limits(session_id TEXT PRIMARY KEY,"
    " max_lifetime_ms BIGINT NOT NULL);";

const char skv__mgr_store_admin_v2_pg[] =
    "ALTER TABLE resource_groups ADD COLUMN preemption BIGINT NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN preempt_min_runtime_ms BIGINT"
    " NOT NULL DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN preempt_mode TEXT NOT NULL"
    " DEFAULT 'requeue';";
const char skv__mgr_store_admin_v3_pg[] =
    "CREATE TABLE IF NOT EXISTS quotas ("
    " scope TEXT NOT NULL, owner TEXT NOT NULL,"
    " resource_group TEXT NOT NULL REFERENCES resource_groups(name),"
    " guaranteed BYTEA, hard_limit BYTEA, borrow_limit BYTEA,"
    " PRIMARY KEY (scope, owner, resource_group));";
const char skv__mgr_store_admin_v4_pg[] =
    "ALTER TABLE resource_groups ADD COLUMN idle_timeout_ms BIGINT NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_groups ADD COLUMN max_lifetime_ms BIGINT NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE resource_policies ADD COLUMN idle_timeout_ms BIGINT NOT"
    " NULL DEFAULT 0;";
const char skv__mgr_store_admin_v5_pg[] =
    "ALTER TABLE resource_groups ADD COLUMN preempt_order TEXT NOT NULL"
    " DEFAULT 'lowest-priority';";
const char skv__mgr_store_admin_v6_pg[] =
    "ALTER TABLE resource_groups ADD COLUMN numa_policy TEXT NOT NULL"
    " DEFAULT 'prefer-single-node';";
const char skv__mgr_store_vfolders_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS vfolders(id TEXT PRIMARY KEY,"
    " name TEXT NOT NULL, host TEXT NOT NULL, owner TEXT NOT NULL,"
    " project TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,"
    " trash_name TEXT NOT NULL DEFAULT '', quota_bytes BIGINT NOT NULL,"
    " created_ms BIGINT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS vfolders_owner ON vfolders(owner, name);"
    "CREATE TABLE IF NOT EXISTS vfolder_shares(folder_id TEXT NOT NULL"
    " REFERENCES vfolders(id) ON DELETE CASCADE, grantee TEXT NOT NULL,"
    " perm TEXT NOT NULL, accepted BIGINT NOT NULL,"
    " PRIMARY KEY(folder_id, grantee));"
    "CREATE TABLE IF NOT EXISTS vfolder_mounts(session_id TEXT NOT NULL,"
    " folder_id TEXT NOT NULL, PRIMARY KEY(session_id, folder_id));"
    "CREATE INDEX IF NOT EXISTS vfolder_mounts_folder"
    " ON vfolder_mounts(folder_id);";

/* core step 3 (schema.c): the status indexes become indexes over the live
 * rows' marker, so that a status change is a HOT update here too. */
const char skv__mgr_store_core_v3_pg[] =
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS live BIGINT DEFAULT 1;"
    "UPDATE sessions SET live=NULL"
    " WHERE status IN ('TERMINATED','CANCELLED','ERROR');"
    "ALTER TABLE kernels ADD COLUMN IF NOT EXISTS live BIGINT DEFAULT 1;"
    "UPDATE kernels SET live=NULL"
    " WHERE status IN ('TERMINATED','CANCELLED','ERROR');"
    "DROP INDEX IF EXISTS sessions_status;"
    "DROP INDEX IF EXISTS kernels_agent;"
    "CREATE INDEX IF NOT EXISTS sessions_live ON sessions(seq)"
    " WHERE live=1;"
    "CREATE INDEX IF NOT EXISTS kernels_live ON kernels(agent_id)"
    " WHERE live=1;"
    "CREATE INDEX IF NOT EXISTS sessions_ended ON sessions(status)"
    " WHERE live IS NULL;";

/* core step 4 (schema.c): the foreign keys of kernels.session_id,
 * kernel_alloc.kernel_id and session_history.session_id go. Each was an
 * AFTER trigger running a SELECT ... FOR KEY SHARE on the parent per
 * inserted row, ~9 a session and ~15 % of the server backend's CPU
 * (bench/RESULTS.md, h/pgserver14), for rows the store writes only for
 * a parent it wrote or read in the same transaction; no session or
 * kernel row is ever deleted, so their cascades never ran. Step 1 let
 * PostgreSQL name them: the names are read from pg_constraint. */
const char skv__mgr_store_core_v4_pg[] =
    "DO $$ DECLARE c record; BEGIN"
    " FOR c IN SELECT conrelid::regclass AS t, conname FROM pg_constraint"
    "  WHERE contype = 'f' AND"
    "  ((conrelid = 'kernels'::regclass AND confrelid = 'sessions'::regclass)"
    "  OR (conrelid = 'session_history'::regclass"
    "   AND confrelid = 'sessions'::regclass)"
    "  OR (conrelid = 'kernel_alloc'::regclass"
    "   AND confrelid = 'kernels'::regclass))"
    " LOOP"
    "  EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.t, c.conname);"
    " END LOOP;"
    " END $$;";
