/* Helpers shared by the admin plane (src/manager/admin/): transactions,
 * statement helpers, name checks, policy/key mirroring.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_ADMIN_INT_H
#define SKV_MGR_ADMIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "admin.h"
#include "skv_internal.h"

#define SKV__ADM_NAME_MAX 128   /* names: 1..127 bytes */

/* A transaction, or a savepoint when the caller already holds one. */
typedef struct skv__mgr_admin_tx {
    bool open;
    bool savepoint;
} skv__mgr_admin_tx;

int skv__mgr_admin_begin(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                         skv_error *err);
/* On failure the transaction is rolled back. */
int skv__mgr_admin_commit(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx,
                          skv_error *err);
void skv__mgr_admin_rollback(skv__mgr_admin_ctx *ctx, skv__mgr_admin_tx *tx);

int skv__mgr_admin_dberr(skv__mgr_admin_ctx *ctx, skv_error *err,
                         const char *what);
int skv__mgr_admin_exec(skv__mgr_admin_ctx *ctx, const char *sql,
                        skv_error *err);
int skv__mgr_admin_prepare(skv__mgr_admin_ctx *ctx, sqlite3_stmt **st,
                           const char *sql, skv_error *err);
/* Step a write statement to completion and finalize it. */
int skv__mgr_admin_done(skv__mgr_admin_ctx *ctx, sqlite3_stmt *st,
                        const char *what, skv_error *err);
/* Run sql with text parameters a and b (either may be NULL = unbound/NULL).
 * Returns 1 when a row came back (its first column copied to buf when buf
 * is not NULL), 0 when none, or a negative error. */
int skv__mgr_admin_lookup(skv__mgr_admin_ctx *ctx, char *buf, size_t bufsz,
                          const char *sql, const char *a, const char *b,
                          skv_error *err);
/* Run a write statement with up to two text parameters. */
int skv__mgr_admin_write(skv__mgr_admin_ctx *ctx, const char *sql,
                         const char *a, const char *b, skv_error *err);
void skv__mgr_admin_bind(sqlite3_stmt *st, int i, const char *s);
char *skv__mgr_admin_col_dup(sqlite3_stmt *st, int i);
/* Duplicate into *dst; SKV_ENOMEM on failure. */
int skv__mgr_admin_dup(char **dst, const char *src, skv_error *err);

/* Names: 1..127 printable ASCII characters without spaces. what names the
 * kind of object in the message ("user name"). */
int skv__mgr_admin_name_check(const char *what, const char *name,
                              skv_error *err);
/* Optional name: NULL or "" is fine. */
int skv__mgr_admin_opt_name_check(const char *what, const char *name,
                                  skv_error *err);
int skv__mgr_admin_email_check(const char *email, skv_error *err);
int skv__mgr_admin_text_check(const char *what, const char *text,
                              skv_error *err);
/* 1 when a row named `name` exists in table (a fixed table name). */
int skv__mgr_admin_exists(skv__mgr_admin_ctx *ctx, const char *table,
                          const char *name, skv_error *err);
/* SKV_ENOENT "<what> 'name' does not exist" unless it exists. */
int skv__mgr_admin_need(skv__mgr_admin_ctx *ctx, const char *table,
                        const char *what, const char *name, skv_error *err);

/* Mirror the database (as this connection sees it, uncommitted changes
 * included) into the scheduler's per-owner policies. */
int skv__mgr_admin_sync_user_policy(skv__mgr_admin_ctx *ctx, const char *user,
                                    skv_error *err);
int skv__mgr_admin_sync_project_policy(skv__mgr_admin_ctx *ctx,
                                       const char *project, skv_error *err);
int skv__mgr_admin_sync_all_policies(skv__mgr_admin_ctx *ctx, skv_error *err);
/* Mirror one user's keys into the verifier: active keys of an active user
 * are known, others are not. reset re-adds known keys (role change). */
int skv__mgr_admin_sync_user_keys(skv__mgr_admin_ctx *ctx, const char *user,
                                  bool reset, skv_error *err);
/* Forget access keys listed in keys (n of them); unknown ones are fine. */
void skv__mgr_admin_forget_keys(skv__mgr_admin_ctx *ctx, char **keys,
                                size_t n);
/* Collect the access keys of a user (caller frees each and the array). */
int skv__mgr_admin_user_keys(skv__mgr_admin_ctx *ctx, char ***keys,
                             size_t *n, const char *user, skv_error *err);
void skv__mgr_admin_strv_free(char **v, size_t n);

/* Load a policy row into a scheduler policy; *limit (may stay NULL) is the
 * caller's to free. Returns 1 found, 0 no such policy, negative error. */
int skv__mgr_admin_policy_get(skv__mgr_admin_ctx *ctx, skv_sched_policy *out,
                              skv_slots **limit, uint32_t *max_cluster,
                              uint64_t *max_lifetime, const char *name,
                              skv_error *err);
/* The policy that applies to a user: the user's own, else the one of the
 * user's oldest active keypair naming one. buf "" when none. */
int skv__mgr_admin_user_policy_name(skv__mgr_admin_ctx *ctx, char *buf,
                                    size_t bufsz, const char *user,
                                    skv_error *err);

/* Key pairs (used by bootstrap and by admin.keypair CREATE). */
int skv__mgr_admin_key_insert(skv__mgr_admin_ctx *ctx, const char *access_key,
                              const char *secret_key, const char *user,
                              const char *policy, int64_t now_ms,
                              skv_error *err);
/* Write "access_key=...\nsecret_key=...\n" to path atomically, mode 0600. */
int skv__mgr_admin_keyfile_write(const char *path, const char *access_key,
                                 const char *secret_key, skv_error *err);

/* Resource groups (bootstrap, load, admin.resource_group). */
int skv__mgr_admin_group_insert(skv__mgr_admin_ctx *ctx, const char *name,
                                const char *description, const char *scheduler,
                                const char *selector, const char *lost_policy,
                                uint64_t pending_timeout_ms,
                                const char *session_types, skv_error *err);
int skv__mgr_admin_sched_group_add(skv__mgr_admin_ctx *ctx, const char *name,
                                   const char *scheduler, const char *selector,
                                   skv_error *err);

/* Per-object request handlers (admin/<object>.c). */
int skv__mgr_admin_on_user(skv__mgr_admin_ctx *ctx,
                           const skv_auth_principal *p,
                           const skv_proto_admin_user *rq,
                           skv_proto_admin_user_reply *rp, skv_error *err);
int skv__mgr_admin_on_keypair(skv__mgr_admin_ctx *ctx,
                              const skv_auth_principal *p,
                              const skv_proto_admin_keypair *rq,
                              skv_proto_admin_keypair_reply *rp,
                              int64_t now_ms, skv_error *err);
int skv__mgr_admin_on_project(skv__mgr_admin_ctx *ctx,
                              const skv_proto_admin_project *rq,
                              skv_proto_admin_project_reply *rp,
                              skv_error *err);
int skv__mgr_admin_on_domain(skv__mgr_admin_ctx *ctx,
                             const skv_proto_admin_domain *rq,
                             skv_proto_admin_domain_reply *rp,
                             skv_error *err);
int skv__mgr_admin_on_policy(skv__mgr_admin_ctx *ctx,
                             const skv_proto_admin_resource_policy *rq,
                             skv_proto_admin_resource_policy_reply *rp,
                             skv_error *err);
int skv__mgr_admin_on_group(skv__mgr_admin_ctx *ctx,
                            const skv_proto_admin_resource_group *rq,
                            skv_proto_admin_resource_group_reply *rp,
                            skv_error *err);

/* One admin change: apply writes the rows inside a transaction, mirror
 * brings the scheduler and verifier in line (undo false) and, after a
 * rollback, back to the old state (undo true; errors ignored then). */
typedef int (*skv__mgr_admin_apply_fn)(skv__mgr_admin_ctx *ctx, void *arg,
                                       skv_error *err);
typedef int (*skv__mgr_admin_mirror_fn)(skv__mgr_admin_ctx *ctx, void *arg,
                                        bool undo, skv_error *err);
int skv__mgr_admin_run(skv__mgr_admin_ctx *ctx, skv__mgr_admin_apply_fn apply,
                       skv__mgr_admin_mirror_fn mirror, void *arg,
                       skv_error *err);
/* SKV_EINVAL unless op is CREATE, UPDATE, DELETE or LIST. */
int skv__mgr_admin_op_check(uint32_t op, const char *what, skv_error *err);

/* Append the objects matching a name (NULL: any) to a reply. */
int skv__mgr_admin_read_users(skv__mgr_admin_ctx *ctx,
                              skv_proto_admin_user_reply *rp, const char *name,
                              const char *domain, skv_error *err);
int skv__mgr_admin_read_keys(skv__mgr_admin_ctx *ctx,
                             skv_proto_admin_keypair_reply *rp,
                             const char *access_key, const char *user,
                             skv_error *err);
int skv__mgr_admin_read_groups(skv__mgr_admin_ctx *ctx,
                               skv_proto_admin_resource_group_reply *rp,
                               const char *name, skv_error *err);

/* Grow a reply array by one zeroed element; returns it or NULL (ENOMEM). */
void *skv__mgr_admin_grow(void **arr, size_t *n, size_t elem);
/* Split "a,b,c" into a string vector / join one into "a,b,c". */
int skv__mgr_admin_split(char ***out, size_t *n, const char *csv,
                         skv_error *err);
char *skv__mgr_admin_join(char *const *v, size_t n);

#endif /* SKV_MGR_ADMIN_INT_H */
