/* The manager's `store` setting (skv_manager_options.store, the daemon's
 * --store): which engine holds the state. store_uri.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_URI_H
#define SKV_MANAGER_STORE_URI_H

#include "sokovan/common.h"

/* 0 for SQLite in data_dir (NULL, "", "sqlite"). A PostgreSQL string is
 * parsed and the server reached (the connection closed again), then
 * refused with SKV_ENOTSUP: the manager's statements are not all on db.h
 * yet. Anything else is SKV_EINVAL. Creates nothing. */
int skv__mgr_store_uri_check(const char *store, skv_error *err);

#endif
