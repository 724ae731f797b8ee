/* The store components' schemas (schema.c), migrated through migrate.h.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_SCHEMA_H
#define SKV_MANAGER_STORE_SCHEMA_H

#include "db.h"

/* Migrate "core", "nonces", "suspects", "net" and "vfolders" to this
 * library's versions (inside the caller's transaction when one is open). */
int skv__mgr_store_schema(skv__db *db, skv_error *err);

#endif
