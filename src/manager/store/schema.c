/* The store's own components and their migration steps: "core" (agents,
 * sessions, kernels, allocations, history), "nonces" (the replay window),
 * "suspects" (kernels of lost agents), "net" (the cluster network) and
 * "limits" (per-session limits) and "vfolders" (virtual folders, their
 * shares and mounts). Version 1 of core, nonces, suspects and net is the
 * schema the manager had before migrations were versioned per component,
 * written
 * with IF NOT EXISTS, so a database from that time (PRAGMA user_version=1,
 * no schema_version table) passes through step 1 unchanged and keeps its
 * rows. A later change is a new step appended to its component's list.
 * The PostgreSQL DDL is filled in by the PostgreSQL engine's owner; until
 * then skv__mgr_store_migrate refuses PostgreSQL loudly.
 * SPDX-License-Identifier: Apache-2.0 */
#include "migrate.h"
#include "topology.h"
#include "schema.h"
#include "schema_pg.h"

static const char core_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS agents("
    " id TEXT PRIMARY KEY, resource_group TEXT NOT NULL,"
    " architecture TEXT, address TEXT, status TEXT NOT NULL,"
    " capacity BLOB, registered_ms INTEGER, last_heartbeat_ms INTEGER);"
    "CREATE TABLE IF NOT EXISTS agent_devices("
    " agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, device_id TEXT NOT NULL, kind TEXT,"
    " numa_node INTEGER, slots BLOB, model TEXT, bus_id TEXT,"
    " PRIMARY KEY(agent_id, idx));"
    "CREATE TABLE IF NOT EXISTS sessions("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
    " name TEXT, owner TEXT NOT NULL, domain TEXT NOT NULL,"
    " project TEXT NOT NULL, resource_group TEXT NOT NULL,"
    " session_type TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 0,"
    " cluster_mode TEXT NOT NULL, cluster_size INTEGER NOT NULL,"
    " image TEXT NOT NULL, spec BLOB NOT NULL, slots BLOB,"
    " status TEXT NOT NULL, status_reason TEXT, exit_code INTEGER,"
    " end_status TEXT, end_reason TEXT,"
    " created_ms INTEGER NOT NULL, started_ms INTEGER, finished_ms INTEGER,"
    " client_token TEXT, UNIQUE(owner, client_token));"
    "CREATE INDEX IF NOT EXISTS sessions_status ON sessions(status);"
    "CREATE TABLE IF NOT EXISTS kernels("
    " id TEXT PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, role TEXT NOT NULL, image TEXT, slots BLOB,"
    " agent_id TEXT, container_id TEXT, status TEXT NOT NULL,"
    " exit_code INTEGER, signal INTEGER, oom INTEGER, reason TEXT,"
    " cpu_usec INTEGER, mem_bytes INTEGER, mem_peak_bytes INTEGER,"
    " stats_ms INTEGER);"
    "CREATE INDEX IF NOT EXISTS kernels_agent ON kernels(agent_id, status);"
    "CREATE INDEX IF NOT EXISTS kernels_session ON kernels(session_id);"
    "CREATE TABLE IF NOT EXISTS kernel_alloc("
    " kernel_id TEXT NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,"
    " device_id TEXT NOT NULL, slot TEXT NOT NULL, amount INTEGER NOT NULL,"
    " whole INTEGER NOT NULL, PRIMARY KEY(kernel_id, device_id, slot));"
    "CREATE TABLE IF NOT EXISTS session_history("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " status TEXT NOT NULL, ts_ms INTEGER NOT NULL, reason TEXT);"
    "CREATE INDEX IF NOT EXISTS history_session"
    " ON session_history(session_id);";

/* Keyed by timestamp first: inserts append, pruning is a range. */
static const char nonces_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS auth_nonces("
    " ts_ms INTEGER NOT NULL, access_key TEXT NOT NULL,"
    " nonce BLOB NOT NULL, PRIMARY KEY(ts_ms, access_key, nonce))"
    " WITHOUT ROWID;";

static const char suspects_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS kernel_suspects("
    " kernel_id TEXT PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, agent_id TEXT NOT NULL, container_id TEXT,"
    " status TEXT NOT NULL, started_ms INTEGER, lost_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS kernel_suspects_agent"
    " ON kernel_suspects(agent_id);"
    "CREATE INDEX IF NOT EXISTS kernel_suspects_session"
    " ON kernel_suspects(session_id);"
    "CREATE TABLE IF NOT EXISTS kernel_suspect_alloc("
    " kernel_id TEXT NOT NULL"
    "  REFERENCES kernel_suspects(kernel_id) ON DELETE CASCADE,"
    " device_id TEXT NOT NULL, slot TEXT NOT NULL, amount INTEGER NOT NULL,"
    " whole INTEGER NOT NULL, PRIMARY KEY(kernel_id, device_id, slot));";

/* The cluster network (mgr_net.c): created at open before versions were
 * kept, hence IF NOT EXISTS here too. */
static const char net_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS agent_net(agent_id TEXT PRIMARY KEY,"
    " subnet TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS session_net(session_id TEXT NOT NULL,"
    " agent_id TEXT NOT NULL, subnet TEXT NOT NULL,"
    " PRIMARY KEY(session_id, agent_id));"
    "CREATE TABLE IF NOT EXISTS session_ssh(session_id TEXT PRIMARY KEY,"
    " seed BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS kernel_net(kernel_id TEXT PRIMARY KEY,"
    " address TEXT, published TEXT);";

/* Per-session limits a submission asked for (only sessions that did). */
static const char limits_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS session_limits(session_id TEXT PRIMARY KEY,"
    " max_lifetime_ms INTEGER NOT NULL);";
/* A folder's name is unique per owner among ready folders only (a deleted
 * one in the trash keeps its name), hence no UNIQUE constraint: the
 * manager checks before it inserts, in the one loop that writes. */
static const char vfolders_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS vfolders(id TEXT PRIMARY KEY,"
    " name TEXT NOT NULL, host TEXT NOT NULL, owner TEXT NOT NULL,"
    " project TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,"
    " trash_name TEXT NOT NULL DEFAULT '', quota_bytes INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS vfolders_owner ON vfolders(owner, name);"
    "CREATE TABLE IF NOT EXISTS vfolder_shares(folder_id TEXT NOT NULL"
    " REFERENCES vfolders(id) ON DELETE CASCADE, grantee TEXT NOT NULL,"
    " perm TEXT NOT NULL, accepted INTEGER NOT NULL,"
    " PRIMARY KEY(folder_id, grantee));"
    "CREATE TABLE IF NOT EXISTS vfolder_mounts(session_id TEXT NOT NULL,"
    " folder_id TEXT NOT NULL, PRIMARY KEY(session_id, folder_id));"
    "CREATE INDEX IF NOT EXISTS vfolder_mounts_folder"
    " ON vfolder_mounts(folder_id);";

/* History ids need only grow within a session (the reader orders a
 * session's rows by id), which a plain rowid does: a new row gets the
 * largest id + 1, and rows only go with their session. AUTOINCREMENT
 * added a write to sqlite_sequence to each of the ~5 history rows of
 * every session. SQLite cannot drop it in place, so the table is rebuilt
 * with its rows and ids (issue 14). */
static const char core_v2_sqlite[] =
    "CREATE TABLE session_history_v2("
    " id INTEGER PRIMARY KEY,"
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " status TEXT NOT NULL, ts_ms INTEGER NOT NULL, reason TEXT);"
    "INSERT INTO session_history_v2(id, session_id, status, ts_ms, reason)"
    " SELECT id, session_id, status, ts_ms, reason FROM session_history;"
    "DROP TABLE session_history;"
    "ALTER TABLE session_history_v2 RENAME TO session_history;"
    "CREATE INDEX history_session ON session_history(session_id);";

/* PostgreSQL's BIGSERIAL has no such extra write: nothing to change; the
 * step only records the version (the index exists since step 1). */
static const char core_v2_pg[] =
    "CREATE INDEX IF NOT EXISTS history_session"
    " ON session_history(session_id)";

/* Index upkeep was ~20 % of the manager's CPU (issue 14): every status
 * change was a delete and an insert in sessions_status and kernels_agent,
 * four or five per row. The indexes are now over a "live" marker (1 while
 * the row's status is not final, NULL after) that changes once per row,
 * and hold no status: SQLite rewrites an index on UPDATE only when a SET
 * column is among its columns or its WHERE, so a status change touches
 * none (PostgreSQL's HOT updates the same way). Queries that need a
 * status filter it over the small live set. sessions_ended gets a row
 * once, at the end, and keeps the counts by final status (metrics) an
 * index scan. */
static const char core_v3_sqlite[] =
    "ALTER TABLE sessions ADD COLUMN live INTEGER DEFAULT 1;"
    "UPDATE sessions SET live=NULL"
    " WHERE status IN ('TERMINATED','CANCELLED','ERROR');"
    "ALTER TABLE kernels ADD COLUMN live INTEGER DEFAULT 1;"
    "UPDATE kernels SET live=NULL"
    " WHERE status IN ('TERMINATED','CANCELLED','ERROR');"
    "DROP INDEX IF EXISTS sessions_status;"
    "DROP INDEX IF EXISTS kernels_agent;"
    "CREATE INDEX sessions_live ON sessions(seq) WHERE live=1;"
    "CREATE INDEX kernels_live ON kernels(agent_id) WHERE live=1;"
    "CREATE INDEX sessions_ended ON sessions(status) WHERE live IS NULL;";

/* Step 4 drops, on PostgreSQL, the foreign keys of kernels.session_id,
 * kernel_alloc.kernel_id and session_history.session_id (schema_pg.c:
 * their checks were ~15 % of the server's CPU). SQLite keeps them: it
 * cannot drop a constraint without rebuilding the three tables, and its
 * check is an in-process probe of the parent's index, a few per cent of
 * the manager's CPU at most (docs/architecture.md, "Foreign keys"). The
 * step only records the version there. */
static const char core_v4_sqlite[] = "SELECT 1";

static const skv__mgr_migration core[] = {
    {1, core_v1_sqlite, skv__mgr_store_core_v1_pg},
    {2, core_v2_sqlite, core_v2_pg},
    {3, core_v3_sqlite, skv__mgr_store_core_v3_pg},
    {4, core_v4_sqlite, skv__mgr_store_core_v4_pg},
};

static const skv__mgr_migration nonces[] = {
    {1, nonces_v1_sqlite, skv__mgr_store_nonces_v1_pg},
};

static const skv__mgr_migration suspects[] = {
    {1, suspects_v1_sqlite, skv__mgr_store_suspects_v1_pg},
};

static const skv__mgr_migration net[] = {
    {1, net_v1_sqlite, skv__mgr_store_net_v1_pg},
};

static const skv__mgr_migration limits[] = {
    {1, limits_v1_sqlite, skv__mgr_store_limits_v1_pg},
};

static const skv__mgr_migration vfolders[] = {
    {1, vfolders_v1_sqlite, skv__mgr_store_vfolders_v1_pg},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* core first: the others reference its tables. */
int skv__mgr_store_schema(skv__db *db, skv_error *err)
{
    int rc = skv__mgr_store_migrate(db, "core", core, N(core), err);
    if (!rc)
        rc = skv__mgr_store_migrate(db, "nonces", nonces, N(nonces), err);
    if (!rc)
        rc = skv__mgr_store_migrate(db, "suspects", suspects, N(suspects),
                                    err);
    if (!rc)
        rc = skv__mgr_store_migrate(db, "net", net, N(net), err);
    if (!rc)
        rc = skv__mgr_store_migrate(db, "limits", limits, N(limits), err);
    if (!rc)
        rc = skv__mgr_store_migrate(db, "vfolders", vfolders, N(vfolders),
                                    err);
    if (!rc)
        rc = skv__mgr_store_topology_schema(db, err);
    return rc;
}
