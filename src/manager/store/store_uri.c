/* The `store` setting: SQLite (the default) or a PostgreSQL server. It is
 * checked before the manager creates anything, so a typo or a server that
 * is down leaves no data_dir, socket or connection behind; mgr_open.c
 * then opens the store it names.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "db.h"
#include "skv_internal.h"
#include "store_uri.h"

static bool is_postgres(const char *s)
{
    return !strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11)
           || strchr(s, '=') != NULL;
}

bool skv__mgr_store_uri_is_postgres(const char *store)
{
    return store && *store && strcmp(store, "sqlite") && is_postgres(store);
}

int skv__mgr_store_uri_check(const char *store, skv_error *err)
{
    if (!store || !*store || !strcmp(store, "sqlite"))
        return 0;
    if (!is_postgres(store))
        return skv__err(err, SKV_EINVAL, "manager: store must be \"sqlite\" "
                        "or a PostgreSQL URI (postgresql://USER@HOST/DB) or "
                        "libpq key=value string");
    skv__db *db = NULL;
    int rc = skv__db_open_postgres(store, &db, err);
    if (rc) {
        skv__err_prefix(err, "manager: store");
        return rc;
    }
    skv__db_close(db);
    return 0;
}
