/* skv_manager_check: the full PRAGMA integrity_check of a stopped
 * manager's database, on demand (sokovan-manager --check). The manager
 * itself runs only the cheaper quick_check when it opens.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "sokovan/manager.h"
#include "sqlite_file.h"

static int open_existing(sqlite3 **db, const char *dir, const char *path,
                         skv_error *err)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return errno == ENOENT
                   ? skv__err(err, SKV_ENOENT, "%s does not exist", path)
                   : skv__err_sys(err, errno, "cannot stat '%s'", path);
    if (!S_ISREG(st.st_mode) || st.st_size == 0)
        return skv__err(err, SKV_ESTATE, "%s is %s", path,
                        S_ISREG(st.st_mode) ? "empty (0 bytes)"
                                            : "not a regular file");
    /* Read-write without create (SQLite needs it to read a WAL a crash
     * left), but query-only and without the checkpoint at close. */
    bool had_wal = skv__mgr_store_has_wal(dir);
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        /* A check changes nothing: no checkpoint of a WAL at close. */
        skv__mgr_store_keep_wal(*db, had_wal);
        sqlite3_exec(*db, "PRAGMA query_only=1", NULL, NULL, NULL);
        return 0;
    }
    int rc = skv__err(err, SKV_EIO, "cannot open '%s': %s", path,
                      *db ? sqlite3_errmsg(*db) : "out of memory");
    sqlite3_close_v2(*db);
    *db = NULL;
    return rc;
}

SKV_EXTERN int skv_manager_check(const char *data_dir, char **report,
                                 skv_error *err)
{
    if (report)
        *report = NULL;
    if (!data_dir || data_dir[0] != '/')
        return skv__err(err, SKV_EINVAL,
                        "manager check: data_dir must be an absolute path");
    char *path = skv__asprintf("%s/manager.db", data_dir);
    if (!path)
        return skv__err(err, SKV_ENOMEM, "manager check: out of memory");
    sqlite3 *db = NULL;
    int rc = open_existing(&db, data_dir, path, err);
    if (!rc)
        rc = skv__mgr_store_identify(db, path, err);
    if (!rc)
        rc = skv__mgr_store_verify(db, path, true, report, err);
    sqlite3_close_v2(db);
    skv__free(path);
    return rc;
}
