/* Savepoints for an admin change made inside the caller's transaction
 * (the standard spelling, which SQLite and PostgreSQL both take), and the
 * owner-only file mode of an SQLite database holding secret keys.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "admin_sql.h"
#include "state_cache.h"

int skv__mgr_store_admin_savepoint(skv__db *db, skv_error *err)
{
    return skv__db_exec(db, "SAVEPOINT skv_admin", err);
}

int skv__mgr_store_admin_release(skv__db *db, skv_error *err)
{
    return skv__db_exec(db, "RELEASE SAVEPOINT skv_admin", err);
}

void skv__mgr_store_admin_rollback_to(skv__db *db)
{
    /* Nothing to report: either the savepoint goes or the caller's
     * transaction fails at its COMMIT. */
    skv__mgr_store_state_forget(db);
    if (!skv__db_exec(db, "ROLLBACK TO SAVEPOINT skv_admin", NULL))
        skv__db_exec(db, "RELEASE SAVEPOINT skv_admin", NULL);
}

void skv__mgr_store_admin_protect(skv__db *db)
{
    sqlite3 *h = skv__db_sqlite(db);
    const char *file = h ? sqlite3_db_filename(h, "main") : NULL;
    if (!file || !file[0])
        return;    /* PostgreSQL, in-memory or temporary database */
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char *p = skv__asprintf("%s%s", file, sfx[i]);
        if (p && chmod(p, 0600) < 0 && errno != ENOENT)
            skv__log(SKV_LOG_WARN, "manager", "cannot make %s owner-only: "
                     "%s", p, strerror(errno));
        skv__free(p);
    }
}
