/* Opening the manager's SQLite database: the file vetted first (present,
 * sokovan's, sound), then WAL, foreign keys, busy timeout and the
 * exclusive lock; format_mark stamps the file as sokovan's once the
 * schema is in.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_file.h"
#include "store_int.h"

/* PRAGMA user_version: the file format generation older libraries check.
 * The tables' versions live in schema_version per component (migrate.h);
 * this stays 1 until a change older libraries cannot read. */
#define FORMAT_VERSION 1

static int pragmas(skv__db *db, skv_error *err)
{
    sqlite3_busy_timeout(skv__db_sqlite(db), 5000);
    /* One manager owns its database: an exclusive lock spares a lock
     * round trip per transaction (and refuses a second manager). */
    int rc = skv__db_exec(db, "PRAGMA locking_mode=EXCLUSIVE", err);
    if (!rc)
        rc = skv__db_exec(db, "PRAGMA journal_mode=WAL", err);
    if (!rc)
        rc = skv__db_exec(db, "PRAGMA foreign_keys=ON", err);
    if (!rc)
        rc = skv__db_exec(db, "PRAGMA synchronous=NORMAL", err);
    /* Every state change of a batch is a savepoint, and SQLite keeps the
     * pages a savepoint may have to restore in a sub-journal: in a temp
     * file past 64 KiB by default, i.e. a pwrite per first touch of a
     * page in each unit (~12 % of the manager's CPU at 1,000 agents).
     * The sub-journal lives only until the batch commits, so memory it
     * is; durability is the WAL's and is unchanged. */
    if (!rc)
        rc = skv__db_exec(db, "PRAGMA temp_store=MEMORY", err);
    /* Checkpoint every 4,000 WAL pages (16 MiB) instead of 1,000: the
     * same hot index pages are copied back once per checkpoint, and each
     * checkpoint ends in an fdatasync (together ~4 % of the manager's CPU
     * at the default). Commits stay as durable: they are in the WAL. */
    if (!rc)
        rc = skv__db_exec(db, "PRAGMA wal_autocheckpoint=4000", err);
    return rc;
}

static int format_version(sqlite3 *h, int *out, skv_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL))
        return skv__err(err, SKV_EIO, "manager database: %s",
                        sqlite3_errmsg(h));
    *out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (*out > FORMAT_VERSION)
        return skv__err(err, SKV_EVERSION, "manager database schema version "
                        "%d is newer than this library's %d", *out,
                        FORMAT_VERSION);
    return 0;
}

/* An existing file must be sokovan's and pass quick_check before
 * anything is written to it (the WAL pragma included). */
static int vet(skv__db *db, const char *path, skv_error *err)
{
    int rc = skv__db_exec(db, "PRAGMA locking_mode=EXCLUSIVE", err);
    if (!rc)
        rc = skv__mgr_store_identify(skv__db_sqlite(db), path, err);
    if (!rc)
        rc = skv__mgr_store_verify(skv__db_sqlite(db), path, false, NULL,
                                   err);
    return rc;
}

static int open_file(const char *path, bool fresh, skv__db **out,
                     skv_error *err)
{
    sqlite3 *h = NULL;
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE |
                                 (fresh ? SQLITE_OPEN_CREATE : 0) |
                                 SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = skv__err(err, SKV_EIO, "manager: cannot open '%s': %s", path,
                      h ? sqlite3_errmsg(h) : "out of memory");
        sqlite3_close_v2(h);
        return rc;
    }
    return skv__db_wrap_sqlite(h, out, err);
}

int skv__mgr_store_open_sqlite(const char *data_dir, bool init,
                               skv__db **out, skv_error *err)
{
    bool fresh = false;
    *out = NULL;
    int rc = skv__mgr_store_precheck(data_dir, init, &fresh, err);
    if (rc)
        return rc;
    char *path = skv__asprintf("%s/manager.db", data_dir);
    if (!path)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    bool had_wal = skv__mgr_store_has_wal(data_dir);
    skv__db *db = NULL;
    rc = open_file(path, fresh, &db, err);
    if (!rc && !fresh && (rc = vet(db, path, err)))
        /* refused: closing must not checkpoint a WAL into it */
        skv__mgr_store_keep_wal(skv__db_sqlite(db), had_wal);
    if (!rc && fresh)
        skv__log(SKV_LOG_INFO, "manager", "%s: creating a new cluster", path);
    skv__free(path);
    int ver = 0;
    if (!rc)
        rc = pragmas(db, err);
    if (!rc)
        rc = format_version(skv__db_sqlite(db), &ver, err);
    if (rc) {
        skv__db_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

/* Inside the schema transaction: the file is sokovan's, this format. */
int skv__mgr_store_format_mark(skv__db *db, skv_error *err)
{
    if (!skv__db_sqlite(db))
        return 0;    /* other engines keep versions in schema_version */
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d; PRAGMA application_id"
             "=%d", FORMAT_VERSION, (int)SKV__STORE_APP_ID);
    return skv__db_exec(db, sql, err);
}
