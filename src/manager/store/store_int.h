/* Helpers shared by the store's files (never included outside store/).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_INT_H
#define SKV_MANAGER_STORE_INT_H

#include <stdio.h>

#include "db.h"
#include "skv_internal.h"
#include "sokovan/slots.h"
#include "store.h"

/* Step a statement that returns no rows; 0 or negative SKV_E*. */
int skv__mgr_store_run(skv__db_stmt *st, skv_error *err);
/* Prepare sql, bind n text parameters, run it, give it back; *changes
 * (when not NULL) gets the rows written. */
int skv__mgr_store_exec_text(skv__db *db, const char *sql, size_t n,
                             const char *const *args, int64_t *changes,
                             skv_error *err);
/* A slot vector as a msgpack blob (NULL binds NULL). */
int skv__mgr_store_bind_slots(skv__db_stmt *st, int i, const skv_slots *s,
                              skv_error *err);
/* A msgpack blob column as a slot vector (NULL: an empty one). */
int skv__mgr_store_col_slots(skv_slots **out, skv__db_stmt *st, int i,
                             skv_error *err);
char *skv__mgr_store_col_dup(skv__db_stmt *st, int i);
/* Column i of every row of a prepared, bound statement, as strings. */
int skv__mgr_store_col_list(skv__db_stmt *st, int i, char ***out,
                            size_t *n, skv_error *err);
/* First column of the first row into buf: 1 found, 0 none, or < 0. */
int skv__mgr_store_text1(skv__db *db, const char *sql, size_t n,
                         const char *const *args, char *buf, size_t cap,
                         skv_error *err);
/* First column of the first row as an integer (0 without a row). */
int skv__mgr_store_int1(skv__db *db, const char *sql, size_t n,
                        const char *const *args, int64_t *out,
                        skv_error *err);

/* The end's row (skv__mgr_store_session_finish_row) from its columns,
 * NULL where a column is NULL: end_status, end_reason, the main kernel's
 * exit_code (has_code), status and reason. One builder for the SELECT's
 * row and the kernel cache's (kernel_cache.c), so the two agree. */
void skv__mgr_store_finish_fill(skv__mgr_store_finish *out, const char *es,
                                const char *er, bool has_code, int code,
                                const char *ks, const char *kr);

#define SKV__ARGS(...) (sizeof((const char *[]){__VA_ARGS__}) / \
                        sizeof(const char *)), (const char *[]){__VA_ARGS__}

#endif
