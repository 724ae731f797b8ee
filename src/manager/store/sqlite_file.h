/* The manager's SQLite file as a file: whether it may be used (present,
 * sokovan's, sound), its WAL, and the checks --check runs. SQLite-only
 * maintenance; the statements of the store go through db.h.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_SQLITE_FILE_H
#define SKV_MANAGER_STORE_SQLITE_FILE_H

#include <stdbool.h>

#include "skv_internal.h"

typedef struct sqlite3 sqlite3;

/* manager.db's PRAGMA application_id: "SKOV". */
#define SKV__STORE_APP_ID 0x534B4F56u

/* SKV_ESTATE for an empty, foreign or damaged database, or a missing one
 * where a cluster lived (admin.key or a WAL left); *fresh: create one. */
int skv__mgr_store_precheck(const char *dir, bool init, bool *fresh,
                            skv_error *err);
int skv__mgr_store_identify(sqlite3 *db, const char *path, skv_error *err);
/* quick_check (full: integrity_check); problems appended to *report. */
int skv__mgr_store_verify(sqlite3 *db, const char *path, bool full,
                          char **report, skv_error *err);
void skv__mgr_store_report_add(char **report, const char *line);
bool skv__mgr_store_has_wal(const char *dir);
void skv__mgr_store_keep_wal(sqlite3 *db, bool had_wal);

#endif
