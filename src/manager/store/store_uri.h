/* The manager's `store` setting (skv_manager_options.store, the daemon's
 * --store): which engine holds the state. store_uri.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_URI_H
#define SKV_MANAGER_STORE_URI_H

#include <stdbool.h>

#include "sokovan/common.h"

/* 0 for SQLite in data_dir (NULL, "", "sqlite") and for a PostgreSQL
 * string whose server answers (checked with a connection closed again, so
 * a typo or a server that is down stops the manager before it creates
 * anything). Anything else is SKV_EINVAL. Creates nothing. */
int skv__mgr_store_uri_check(const char *store, skv_error *err);
/* Whether store names a PostgreSQL server (not SQLite). */
bool skv__mgr_store_uri_is_postgres(const char *store);

#endif
