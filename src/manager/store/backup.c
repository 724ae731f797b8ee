/* admin.backup's copy: SQLite's online backup API. One backup_step over the
 * whole database copies one consistent snapshot while the manager keeps
 * its exclusive lock (the copy reads through the manager's own
 * connection). mgr_backup.c names, syncs and publishes the file.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>

#include "store_int.h"

/* The snapshot into tmp, an empty file the caller created. */
int skv__mgr_store_backup(skv__db *db, const char *tmp, skv_error *err)
{
    sqlite3 *src = skv__db_sqlite(db);
    if (!src)
        return skv__err(err, SKV_ENOTSUP, "admin.backup copies an SQLite "
                        "store; back a PostgreSQL store up with its own "
                        "tools (pg_dump)");
    sqlite3 *dst = NULL;
    int rc = 0;
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        rc = skv__err(err, SKV_EIO, "open '%s': %s", tmp,
                      dst ? sqlite3_errmsg(dst) : "out of memory");
    sqlite3_backup *b = rc ? NULL : sqlite3_backup_init(dst, "main", src,
                                                        "main");
    if (!rc && !b)
        rc = skv__err(err, SKV_EIO, "%s", sqlite3_errmsg(dst));
    if (b) {
        int s = sqlite3_backup_step(b, -1);
        if (s != SQLITE_DONE)
            rc = skv__err(err, s == SQLITE_BUSY || s == SQLITE_LOCKED
                          ? SKV_EBUSY : SKV_EIO, "copy: %s",
                          sqlite3_errstr(s));
        if (sqlite3_backup_finish(b) != SQLITE_OK && !rc)
            rc = skv__err(err, SKV_EIO, "%s", sqlite3_errmsg(dst));
    }
    if (sqlite3_close(dst) != SQLITE_OK && !rc)
        rc = skv__err(err, SKV_EIO, "close '%s'", tmp);
    return rc;
}
