/* Helpers shared by the admin plane (src/manager/admin/): transactions,
 * name checks, policy/key mirroring. Rows come from the store
 * (store/admin_store.h); nothing here speaks SQL.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_ADMIN_INT_H
#define SKV_MGR_ADMIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../store/admin_store.h"
#include "admin.h"
#include "skv_internal.h"

#define SKV__ADM_NAME_MAX SKV__MGR_STORE_ADMIN_NAME_MAX /* 1..127 bytes */

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
/* SKV_ENOENT "<what> 'name' does not exist" unless it exists. */
int skv__mgr_admin_need(skv__mgr_admin_ctx *ctx,
                        skv__mgr_store_admin_table table, const char *what,
                        const char *name, skv_error *err);

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

/* The policy that applies to a user: the user's own, else the one of the
 * user's oldest active keypair naming one. buf "" when none. */
int skv__mgr_admin_user_policy_name(skv__mgr_admin_ctx *ctx, char *buf,
                                    size_t bufsz, const char *user,
                                    skv_error *err);

/* Store a key pair (bootstrap and admin.keypair CREATE); SKV_EEXIST
 * naming the key when it is taken. */
int skv__mgr_admin_key_insert(skv__mgr_admin_ctx *ctx, const char *access_key,
                              const char *secret_key, const char *user,
                              const char *policy, int64_t now_ms,
                              skv_error *err);
/* Write "access_key=...\nsecret_key=...\n" to path atomically, mode 0600. */
int skv__mgr_admin_keyfile_write(const char *path, const char *access_key,
                                 const char *secret_key, skv_error *err);

/* Store a resource group (bootstrap, admin.resource_group); SKV_EEXIST
 * naming the group when it is taken. */
int skv__mgr_admin_group_insert(skv__mgr_admin_ctx *ctx,
                                const skv__mgr_store_admin_group *g,
                                skv_error *err);
/* preempt_order.c: "lowest-priority" / "newest" as the scheduler's order
 * (-1: neither), and a group's stored preemption settings put into the
 * scheduler (on/off, min runtime, order). */
int skv__mgr_admin_preempt_order(const char *name);
int skv__mgr_admin_preempt_mirror(skv__mgr_admin_ctx *ctx, const char *group,
                                  const skv__mgr_store_preempt *p,
                                  skv_error *err);
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

int skv__mgr_admin_on_quota(skv__mgr_admin_ctx *ctx,
                            const skv_proto_admin_quota *rq,
                            skv_proto_admin_quota_reply *rp, skv_error *err);
int skv__mgr_admin_on_quota_tree(skv__mgr_admin_ctx *ctx,
                                 const skv_proto_admin_quota_tree *rq,
                                 skv_proto_admin_quota_tree_reply *rp,
                                 skv_error *err);
/* SKV_EBUSY while the owner (scope "domain", "project", "user") or, with
 * scope NULL, the resource group `name` has a quota (quotas.c). */
int skv__mgr_admin_quota_busy(skv__mgr_admin_ctx *ctx, const char *scope,
                              const char *name, skv_error *err);
/* Every stored quota into the scheduler (load). */
int skv__mgr_admin_sync_all_quotas(skv__mgr_admin_ctx *ctx, skv_error *err);

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

/* group_ops.c: a group's operations policy (drain, device faults,
 * unenforced fractions). */
struct skv__mgr_store_gops;
int skv__mgr_admin_gops_check(const skv_proto_resource_group *g,
                              skv_error *err);
void skv__mgr_admin_gops_merge(const skv_proto_resource_group *g,
                               const struct skv__mgr_store_gops *old,
                               struct skv__mgr_store_gops *out);
int skv__mgr_admin_gops_fill(skv__db *db,
                             skv_proto_admin_resource_group_reply *rp,
                             skv_error *err);

/* cache.c: the answer of kind (a letter) about a, b, c (NULL: none) from
 * memory, n bytes into out; remember notes one (store/admin_cache.h). */
bool skv__mgr_admin_cached(skv__mgr_admin_ctx *ctx, char kind, const char *a,
                           const char *b, const char *c, void *out,
                           size_t n);
void skv__mgr_admin_remember(skv__mgr_admin_ctx *ctx, char kind,
                             const char *a, const char *b, const char *c,
                             const void *val, size_t n);

/* Join a string vector into "a,b,c" (store/admin_store.h splits). */
char *skv__mgr_admin_join(char *const *v, size_t n);

#endif /* SKV_MGR_ADMIN_INT_H */
