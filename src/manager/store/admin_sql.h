/* Statement helpers shared by the admin store files (admin_*.c) only.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_ADMIN_SQL_H
#define SKV_MANAGER_STORE_ADMIN_SQL_H

#include <stdio.h>

#include "admin_store.h"
#include "skv_internal.h"

/* Run sql with n (0..2) text parameters a, b (NULL binds NULL): 1 when a
 * row came back (its first column copied into buf when buf is not NULL),
 * 0 when none, or a negative SKV_E*. */
int skv__mgr_store_admin_get(skv__db *db, char *buf, size_t bufsz,
                             const char *sql, int n, const char *a,
                             const char *b, skv_error *err);
/* Run sql with one text parameter: 1 with its first column (an integer)
 * as *flag (non-zero: true), 0 when no row (*flag false). */
int skv__mgr_store_admin_flag(skv__db *db, const char *sql, const char *a,
                              bool *flag, skv_error *err);
/* Run a write with n (0..2) text parameters. */
int skv__mgr_store_admin_put(skv__db *db, const char *sql, int n,
                             const char *a, const char *b, skv_error *err);
/* Step a bound write to completion and give the statement back. */
int skv__mgr_store_admin_finish(skv__db_stmt *st, skv_error *err);
/* The first column of every row of sql (one text parameter a when n is
 * 1), as a vector. */
int skv__mgr_store_admin_texts(skv__db *db, char ***v, size_t *n,
                               const char *sql, int nargs, const char *a,
                               skv_error *err);
/* Copy a column (NULL stays NULL). */
char *skv__mgr_store_admin_col_dup(skv__db_stmt *st, int i);
/* Copy a column into buf ("" for NULL). */
void skv__mgr_store_admin_col_copy(skv__db_stmt *st, int i, char *buf,
                                   size_t bufsz);
/* Grow a reply array by one zeroed element; NULL when out of memory. */
void *skv__mgr_store_admin_grow(void **arr, size_t *n, size_t elem);
/* Append a copy of column i to a string vector. */
int skv__mgr_store_admin_push_col(char ***v, size_t *n, skv__db_stmt *st,
                                  int i, skv_error *err);
int skv__mgr_store_admin_nomem(skv_error *err);

#endif
