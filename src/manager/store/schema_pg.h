/* The PostgreSQL DDL of every migration component (schema_pg.c), each the
 * mirror of its SQLite step: INTEGER -> BIGINT, BLOB -> BYTEA,
 * AUTOINCREMENT -> BIGSERIAL (explicit ids still allowed, as on SQLite),
 * no WITHOUT ROWID, and the column name `user` (a reserved word there)
 * quoted. Suite schema_pg checks that the tables and columns match the
 * SQLite database a real manager creates.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_SCHEMA_PG_H
#define SKV_MANAGER_STORE_SCHEMA_PG_H

extern const char skv__mgr_store_core_v1_pg[];
extern const char skv__mgr_store_core_v3_pg[];
extern const char skv__mgr_store_core_v4_pg[];
extern const char skv__mgr_store_nonces_v1_pg[];
extern const char skv__mgr_store_suspects_v1_pg[];
/* Components whose SQLite DDL is not on migrate.h yet (admin plane,
 * kernel networks): ready for their lists. */
extern const char skv__mgr_store_admin_v1_pg[];
extern const char skv__mgr_store_admin_v2_pg[];
extern const char skv__mgr_store_admin_v3_pg[];
extern const char skv__mgr_store_admin_v4_pg[];
extern const char skv__mgr_store_admin_v5_pg[];
extern const char skv__mgr_store_admin_v6_pg[];
extern const char skv__mgr_store_net_v1_pg[];
extern const char skv__mgr_store_limits_v1_pg[];
extern const char skv__mgr_store_vfolders_v1_pg[];

#endif
