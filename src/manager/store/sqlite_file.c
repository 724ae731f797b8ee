/* Whether manager.db may be used as this cluster's state. A new cluster is
 * created only where no database (and no trace of one) exists, or with
 * init; an empty, foreign or damaged file stops the manager (SKV_ESTATE)
 * instead of being silently replaced or half-read: the operator restores
 * a backup or moves the file away and starts with --init.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sqlite_file.h"

static bool present(const char *dir, const char *name)
{
    char *p = skv__asprintf("%s/%s", dir, name);
    bool yes = p && access(p, F_OK) == 0;
    skv__free(p);
    return yes;
}

/* The database file is there: usable unless init asks for a new cluster
 * or the file cannot be a database (SQLite would take an empty file for a
 * new, empty database). */
static int existing(const char *path, const struct stat *st, bool init,
                    skv_error *err)
{
    if (init)
        return skv__err(err, SKV_ESTATE, "--init: %s exists; a new cluster "
                        "is created only where there is no database (move "
                        "it away first)", path);
    if (!S_ISREG(st->st_mode))
        return skv__err(err, SKV_ESTATE, "%s is not a regular file", path);
    if (st->st_size == 0)
        return skv__err(err, SKV_ESTATE, "%s is empty (0 bytes): the "
                        "cluster's state is gone", path);
    return 0;
}

/* No database file. Its WAL or the admin key file left behind mean a
 * cluster lived here: creating a new one would rewrite admin.key and
 * orphan every session, so that takes init (and a stale WAL must go even
 * then: SQLite would replay it into the new database). */
static int missing(const char *dir, const char *path, bool init,
                   bool *fresh, skv_error *err)
{
    if (present(dir, "manager.db-wal"))
        return skv__err(err, SKV_ESTATE, "%s is missing but its WAL "
                        "manager.db-wal is there (move both away, or put the "
                        "database back)", path);
    if (!init && present(dir, "admin.key"))
        return skv__err(err, SKV_ESTATE, "%s is missing but %s/admin.key "
                        "shows a cluster lived here; --init creates a new "
                        "one", path, dir);
    *fresh = true;
    return 0;
}

/* A WAL left by a crash holds committed transactions: a refused open or
 * a check must keep it (no checkpoint at close). One SQLite created for
 * the read is empty and goes away at a normal close. */
void skv__mgr_store_keep_wal(sqlite3 *db, bool had_wal)
{
    if (had_wal)
        sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
}

bool skv__mgr_store_has_wal(const char *dir)
{
    return present(dir, "manager.db-wal");
}

int skv__mgr_store_precheck(const char *dir, bool init, bool *fresh,
                         skv_error *err)
{
    *fresh = false;
    char *path = skv__asprintf("%s/manager.db", dir);
    if (!path)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    struct stat st;
    int rc;
    if (stat(path, &st) == 0)
        rc = existing(path, &st, init, err);
    else if (errno == ENOENT)
        rc = missing(dir, path, init, fresh, err);
    else
        rc = skv__err_sys(err, errno, "manager: cannot stat '%s'", path);
    skv__free(path);
    return rc;
}

static int pragma_int(sqlite3 *db, const char *sql, int *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int s = sqlite3_step(st);
    *out = s == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return s == SQLITE_ROW || s == SQLITE_DONE ? 0 : -1;
}

/* Databases written before application_id was set: the core's and the
 * admin plane's key tables and a schema version. */
static bool old_sokovan(sqlite3 *db, int version)
{
    int n = 0;
    return version >= 1 &&
           pragma_int(db, "SELECT count(*) FROM sqlite_master WHERE type="
                      "'table' AND name IN ('sessions','kernels','agents',"
                      "'users','keypairs')", &n) == 0 && n == 5;
}

int skv__mgr_store_identify(sqlite3 *db, const char *path, skv_error *err)
{
    int app = 0, version = 0;
    if (pragma_int(db, "PRAGMA application_id", &app) ||
        pragma_int(db, "PRAGMA user_version", &version)) {
        int code = sqlite3_errcode(db);
        if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
            return skv__err(err, SKV_EBUSY, "%s is in use (is a manager "
                            "running on it?): SQLite serves one manager "
                            "per data_dir; standby managers need a "
                            "PostgreSQL store (--store postgresql://...)",
                            path);
        return skv__err(err, SKV_ESTATE, "%s cannot be read as an SQLite "
                        "database: %s", path, sqlite3_errmsg(db));
    }
    if ((uint32_t)app == SKV__STORE_APP_ID)
        return 0;
    if (app != 0)
        return skv__err(err, SKV_ESTATE, "%s belongs to another program "
                        "(application_id 0x%08x, sokovan's is 0x%08x)", path,
                        (unsigned)app, (unsigned)SKV__STORE_APP_ID);
    if (!old_sokovan(db, version))
        return skv__err(err, SKV_ESTATE, "%s is an SQLite database without "
                        "the sokovan schema", path);
    return 0;
}

/* Runs PRAGMA quick_check or integrity_check; each problem is logged and
 * the first few go to err. Returns 0 when the database is sound. */
int skv__mgr_store_verify(sqlite3 *db, const char *path, bool full,
                       char **report, skv_error *err)
{
    sqlite3_stmt *st;
    const char *sql = full ? "PRAGMA integrity_check(100)"
                           : "PRAGMA quick_check(100)";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return skv__err(err, SKV_ESTATE, "%s: %s failed: %s", path, sql + 7,
                        sqlite3_errmsg(db));
    char first[160] = "";
    size_t bad = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") == 0)
            continue;
        if (!bad++)
            snprintf(first, sizeof first, "%s", line ? line : "?");
        skv__log(SKV_LOG_ERROR, "manager", "%s: %s", path, line ? line : "?");
        if (report)
            skv__mgr_store_report_add(report, line ? line : "?");
    }
    if (s != SQLITE_DONE) {
        if (!bad++)
            snprintf(first, sizeof first, "%s", sqlite3_errmsg(db));
        if (report)
            skv__mgr_store_report_add(report, sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    if (!bad)
        return 0;
    return skv__err(err, SKV_ESTATE, "%s is damaged (%s: %zu problem%s; "
                    "first: %s)", path, full ? "integrity_check"
                    : "quick_check", bad, bad == 1 ? "" : "s", first);
}

void skv__mgr_store_report_add(char **report, const char *line)
{
    char *n = *report ? skv__asprintf("%s%s\n", *report, line)
                      : skv__asprintf("%s\n", line);
    if (!n)
        return;    /* the error message still names the first problem */
    skv__free(*report);
    *report = n;
}
