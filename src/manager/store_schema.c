/* Opening the manager database: WAL, foreign keys, busy timeout, and the
 * versioned schema (PRAGMA user_version) of the core's tables. The admin
 * tables come from store/admin_schema.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"
#include "store/admin_store.h"

#define SCHEMA_VERSION 1

static const char *const schema_v1 =
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

static int pragmas(skv_manager *m, skv_error *err)
{
    sqlite3_busy_timeout(m->db, 5000);
    /* One manager owns its database: an exclusive lock spares a lock
     * round trip per transaction (and refuses a second manager). */
    int rc = skv__mgr_db_exec(m, "PRAGMA locking_mode=EXCLUSIVE", err);
    if (!rc)
        rc = skv__mgr_db_exec(m, "PRAGMA journal_mode=WAL", err);
    if (!rc)
        rc = skv__mgr_db_exec(m, "PRAGMA foreign_keys=ON", err);
    if (!rc)
        rc = skv__mgr_db_exec(m, "PRAGMA synchronous=NORMAL", err);
    return rc;
}

static int user_version(skv_manager *m, int *out, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "PRAGMA user_version", err);
    if (rc)
        return rc;
    *out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    skv__mgr_db_done(m, st);
    return 0;
}

static int schema(skv_manager *m, skv_error *err)
{
    int ver = 0;
    int rc = user_version(m, &ver, err);
    if (rc)
        return rc;
    if (ver > SCHEMA_VERSION)
        return skv__err(err, SKV_EVERSION, "manager database schema version "
                        "%d is newer than this library's %d", ver,
                        SCHEMA_VERSION);
    rc = skv__mgr_begin(m, err);
    if (rc)
        return rc;
    rc = skv__mgr_db_exec(m, schema_v1, err);
    if (!rc)
        rc = skv__mgr_store_admin_schema(m->admin.db, err);
    if (!rc)
        rc = skv__mgr_suspect_schema(m, err);
    if (!rc)
        rc = skv__mgr_nonce_schema(m, err);
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d; PRAGMA application_id"
             "=%d", SCHEMA_VERSION, (int)SKV__MGR_APP_ID);
    if (!rc)
        rc = skv__mgr_db_exec(m, sql, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    return skv__mgr_commit(m, err);
}

/* An existing file must be sokovan's and pass quick_check before
 * anything is written to it (the WAL pragma included). */
static int vet(skv_manager *m, const char *path, skv_error *err)
{
    int rc = skv__mgr_db_exec(m, "PRAGMA locking_mode=EXCLUSIVE", err);
    if (!rc)
        rc = skv__mgr_db_identify(m->db, path, err);
    if (!rc)
        rc = skv__mgr_db_verify(m->db, path, false, NULL, err);
    return rc;
}

int skv__mgr_db_open(skv_manager *m, bool init, skv_error *err)
{
    bool fresh = false;
    int rc = skv__mgr_db_precheck(m->data_dir, init, &fresh, err);
    if (rc)
        return rc;
    char *path = skv__asprintf("%s/manager.db", m->data_dir);
    if (!path)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    bool had_wal = skv__mgr_db_has_wal(m->data_dir);
    rc = sqlite3_open_v2(path, &m->db, SQLITE_OPEN_READWRITE |
                             (fresh ? SQLITE_OPEN_CREATE : 0) |
                             SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = skv__err(err, SKV_EIO, "manager: cannot open '%s': %s", path,
                      m->db ? sqlite3_errmsg(m->db) : "out of memory");
        skv__free(path);
        return rc;
    }
    /* The admin plane speaks db.h; the wrapper owns the handle from here
     * (skv__mgr_db_close closes it through the wrapper). */
    rc = skv__db_wrap_sqlite(m->db, &m->admin.db, err);
    if (rc) {
        m->db = NULL;    /* closed by the failed wrap */
        skv__free(path);
        return rc;
    }
    rc = fresh ? 0 : vet(m, path, err);
    if (rc)    /* refused: closing must not checkpoint a WAL into it */
        skv__mgr_db_keep_wal(m->db, had_wal);
    if (fresh)
        skv__log(SKV_LOG_INFO, "manager", "%s: creating a new cluster", path);
    skv__free(path);
    if (!rc)
        rc = pragmas(m, err);
    if (!rc)
        rc = schema(m, err);
    return rc;
}
