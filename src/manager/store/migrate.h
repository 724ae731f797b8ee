/* Versioned schema migrations, one list per component ("core", "nonces",
 * "suspects", "admin", ...), so each owner appends steps to its own list
 * instead of everyone editing one version number.
 *
 * schema_version(component, version) records how far each component got.
 * A step carries its DDL for both engines: the step's text differs per
 * engine (types, AUTOINCREMENT), the statements that use the tables do not.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_MIGRATE_H
#define SKV_MANAGER_STORE_MIGRATE_H

#include <stddef.h>

#include "db.h"

typedef struct {
    int version;            /* 1, 2, 3, ... in order, no gaps */
    const char *sqlite;     /* DDL run on SQLite */
    const char *postgres;   /* DDL run on PostgreSQL; NULL: not written yet
                               (refused loudly on PostgreSQL) */
} skv__mgr_migration;

/* Bring component up to the last step of list: runs the steps above the
 * recorded version, in order, and records each. Inside the caller's
 * transaction when one is open, else in one of its own (all or nothing).
 * SKV_EVERSION when the database is newer than list, SKV_ENOTSUP when a
 * step has no DDL for this engine, SKV_EINVAL for a malformed list. */
int skv__mgr_store_migrate(skv__db *db, const char *component,
                           const skv__mgr_migration *list, size_t n,
                           skv_error *err);

/* The recorded version of component (0: never migrated). */
int skv__mgr_store_schema_version(skv__db *db, const char *component,
                                  int *out, skv_error *err);

#endif
