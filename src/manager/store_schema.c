/* Opening the manager database: WAL, foreign keys, busy timeout, and the
 * schema: the store's components migrated through store/schema.h, the
 * admin plane's tables (component "admin") through store/admin_schema.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"
#include "store/admin_store.h"
#include "store/schema.h"

/* PRAGMA user_version: the file format generation older libraries check.
 * The tables' versions live in schema_version per component (store/
 * migrate.h); this stays 1 until a change older libraries cannot read. */
#define SCHEMA_VERSION 1

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
    rc = skv__mgr_store_schema(m->store, err);
    if (!rc)
        rc = skv__mgr_store_admin_schema(m->store, err);
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
    if ((rc = skv__db_wrap_sqlite(m->db, &m->store, err))) {
        m->db = NULL;    /* closed by the wrap */
        skv__free(path);
        return rc;
    }
    m->admin.db = m->store;
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
