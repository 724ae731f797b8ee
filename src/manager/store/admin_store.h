/* The admin plane's rows: domains, projects, users, key pairs, resource
 * policies and resource groups. src/manager/admin/ keeps the rules
 * (validation, authorization, mirroring into the scheduler and verifier)
 * and asks here for rows; every statement is in db.h's common SQL subset,
 * so the same text runs on SQLite and PostgreSQL.
 *
 * Conventions: lookups return 1 (found), 0 (none) or a negative SKV_E*;
 * readers append to a reply structure, which the caller frees on failure
 * as on success; writers return 0 or SKV_E* (SKV_EEXIST for a duplicate
 * key). Names fit SKV__MGR_STORE_ADMIN_NAME_MAX bytes (the admin plane
 * checks them before any write); a buffer too short truncates.
 *
 * The column "user" (keypairs, user_projects) is quoted in every
 * statement: USER is a reserved word in PostgreSQL.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_ADMIN_STORE_H
#define SKV_MANAGER_STORE_ADMIN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "sokovan/proto.h"
#include "sokovan/slots.h"

#define SKV__MGR_STORE_ADMIN_NAME_MAX 128

/* ---- schema, savepoints, the file ---------------------------------- */
/* Migrate the "admin" component (migrate.h) to this library's version:
 * inside the caller's transaction when one is open. SKV_ENOTSUP on
 * PostgreSQL until its DDL is written. */
int skv__mgr_store_admin_schema(skv__db *db, skv_error *err);
/* A savepoint, for a change made inside the caller's transaction. */
int skv__mgr_store_admin_savepoint(skv__db *db, skv_error *err);
int skv__mgr_store_admin_release(skv__db *db, skv_error *err);
/* Undo everything since the savepoint and drop it. */
void skv__mgr_store_admin_rollback_to(skv__db *db);
/* The database holds secret keys: make an SQLite file and its WAL
 * companions owner-only (nothing to do in memory or on PostgreSQL). */
void skv__mgr_store_admin_protect(skv__db *db);

/* ---- names ------------------------------------------------------------ */
typedef enum skv__mgr_store_admin_table {
    SKV__MGR_STORE_ADMIN_DOMAINS,
    SKV__MGR_STORE_ADMIN_PROJECTS,
    SKV__MGR_STORE_ADMIN_USERS,
    SKV__MGR_STORE_ADMIN_POLICIES,
    SKV__MGR_STORE_ADMIN_GROUPS
} skv__mgr_store_admin_table;

/* 1 when a row named `name` exists in the table. */
int skv__mgr_store_admin_exists(skv__db *db, skv__mgr_store_admin_table t,
                                const char *name, skv_error *err);
/* Every name in the table, sorted (caller frees with strv_free). */
int skv__mgr_store_admin_names(skv__db *db, skv__mgr_store_admin_table t,
                               char ***v, size_t *n, skv_error *err);
void skv__mgr_store_admin_strv_free(char **v, size_t n);
/* Split a comma list ("a,b"; "" gives none), as session_types is stored;
 * strv_free. */
int skv__mgr_store_admin_split(char ***out, size_t *n, const char *csv,
                               skv_error *err);

/* ---- domains ------------------------------------------------------------ */
/* Domains named `name` (NULL: all) with their resource groups. */
int skv__mgr_store_admin_domain_read(skv__db *db,
                                     skv_proto_admin_domain_reply *rp,
                                     const char *name, skv_error *err);
int skv__mgr_store_admin_domain_insert(skv__db *db, const char *name,
                                       const char *description,
                                       skv_error *err);
/* description NULL: unchanged. */
int skv__mgr_store_admin_domain_update(skv__db *db, const char *name,
                                       const char *description, bool active,
                                       skv_error *err);
/* Insert unless a domain of that name exists. */
int skv__mgr_store_admin_domain_ensure(skv__db *db, const char *name,
                                       const char *description,
                                       skv_error *err);
/* The domain and its resource-group list. */
int skv__mgr_store_admin_domain_delete(skv__db *db, const char *name,
                                       skv_error *err);
/* Replace the domain's resource-group list (duplicates collapse). */
int skv__mgr_store_admin_domain_set_groups(skv__db *db, const char *name,
                                           char *const *groups, size_t n,
                                           skv_error *err);
/* Add one group to the list unless there. */
int skv__mgr_store_admin_domain_add_group(skv__db *db, const char *domain,
                                          const char *group, skv_error *err);
/* The first user / project (by name) in the domain, into buf. */
int skv__mgr_store_admin_domain_user(skv__db *db, const char *domain,
                                     char *buf, size_t bufsz, skv_error *err);
int skv__mgr_store_admin_domain_project(skv__db *db, const char *domain,
                                        char *buf, size_t bufsz,
                                        skv_error *err);
int skv__mgr_store_admin_domain_active(skv__db *db, const char *name,
                                       bool *active, skv_error *err);
/* 1 when group is on the domain's list. */
int skv__mgr_store_admin_domain_has_group(skv__db *db, const char *domain,
                                          const char *group, skv_error *err);

/* ---- projects ----------------------------------------------------------- */
/* Projects matching name and domain (NULL: any). */
int skv__mgr_store_admin_project_read(skv__db *db,
                                      skv_proto_admin_project_reply *rp,
                                      const char *name, const char *domain,
                                      skv_error *err);
/* domain NULL: "default"; resource_policy NULL or "": none. */
int skv__mgr_store_admin_project_insert(skv__db *db,
                                        const skv_proto_project *p,
                                        skv_error *err);
/* NULL strings: unchanged; resource_policy "": none. */
int skv__mgr_store_admin_project_update(skv__db *db,
                                        const skv_proto_project *p,
                                        skv_error *err);
int skv__mgr_store_admin_project_ensure(skv__db *db, const char *name,
                                        const char *domain,
                                        const char *description,
                                        skv_error *err);
int skv__mgr_store_admin_project_delete(skv__db *db, const char *name,
                                        skv_error *err);
/* The first member (by name) of the project, into buf. */
int skv__mgr_store_admin_project_member(skv__db *db, const char *project,
                                        char *buf, size_t bufsz,
                                        skv_error *err);
/* 1 when a member of the project belongs to a domain other than domain. */
int skv__mgr_store_admin_project_outsiders(skv__db *db, const char *project,
                                           const char *domain,
                                           skv_error *err);
int skv__mgr_store_admin_project_domain(skv__db *db, const char *name,
                                        char *buf, size_t bufsz,
                                        skv_error *err);
/* 1 with the policy name when the project names one. */
int skv__mgr_store_admin_project_policy(skv__db *db, const char *name,
                                        char *buf, size_t bufsz,
                                        skv_error *err);
int skv__mgr_store_admin_project_active(skv__db *db, const char *name,
                                        bool *active, skv_error *err);

/* ---- users -------------------------------------------------------------- */
/* Users matching name and domain (NULL: any), with their projects. */
int skv__mgr_store_admin_user_read(skv__db *db,
                                   skv_proto_admin_user_reply *rp,
                                   const char *name, const char *domain,
                                   skv_error *err);
/* role NULL: "user"; domain NULL: "default"; resource_policy "": none. */
int skv__mgr_store_admin_user_insert(skv__db *db, const skv_proto_user *u,
                                     skv_error *err);
/* NULL strings: unchanged; resource_policy "": none. */
int skv__mgr_store_admin_user_update(skv__db *db, const skv_proto_user *u,
                                     skv_error *err);
/* A user in domain "default" (bootstrap: the admin and agents). */
int skv__mgr_store_admin_user_add(skv__db *db, const char *name,
                                  const char *role, const char *description,
                                  skv_error *err);
/* The user, its key pairs and its project memberships. */
int skv__mgr_store_admin_user_delete(skv__db *db, const char *name,
                                     skv_error *err);
/* Replace the user's project list (duplicates collapse). */
int skv__mgr_store_admin_user_set_projects(skv__db *db, const char *name,
                                           char *const *projects, size_t n,
                                           skv_error *err);
typedef struct skv__mgr_store_admin_user_row {
    char domain[SKV__MGR_STORE_ADMIN_NAME_MAX];
    char role[16];
    bool active;
} skv__mgr_store_admin_user_row;
int skv__mgr_store_admin_user_get(skv__db *db, const char *name,
                                  skv__mgr_store_admin_user_row *out,
                                  skv_error *err);
/* 1 when some user has the admin role. */
int skv__mgr_store_admin_user_any_admin(skv__db *db, skv_error *err);
/* The first project (by name) of the user outside domain, into buf. */
int skv__mgr_store_admin_user_project_outside(skv__db *db, const char *user,
                                              const char *domain, char *buf,
                                              size_t bufsz, skv_error *err);
/* 1 when the user is a member of the project. */
int skv__mgr_store_admin_user_member(skv__db *db, const char *user,
                                     const char *project, skv_error *err);
/* 1 with the policy name when the user names one itself. */
int skv__mgr_store_admin_user_policy(skv__db *db, const char *user,
                                     char *buf, size_t bufsz,
                                     skv_error *err);

/* ---- key pairs ---------------------------------------------------------- */
/* policy NULL or "": none. */
int skv__mgr_store_admin_key_insert(skv__db *db, const char *access_key,
                                    const char *secret_key, const char *user,
                                    const char *policy, int64_t now_ms,
                                    skv_error *err);
/* policy NULL: unchanged, "": none. */
int skv__mgr_store_admin_key_update(skv__db *db, const char *access_key,
                                    const char *policy, bool active,
                                    skv_error *err);
int skv__mgr_store_admin_key_delete(skv__db *db, const char *access_key,
                                    skv_error *err);
/* Key pairs matching access_key and user (NULL: any), oldest first per
 * user; never the secret. */
int skv__mgr_store_admin_key_read(skv__db *db,
                                  skv_proto_admin_keypair_reply *rp,
                                  const char *access_key, const char *user,
                                  skv_error *err);
/* 1 with the key's user into buf. */
int skv__mgr_store_admin_key_owner(skv__db *db, const char *access_key,
                                   char *buf, size_t bufsz, skv_error *err);
/* 1 when the user has an active key other than access_key. */
int skv__mgr_store_admin_key_other_active(skv__db *db, const char *user,
                                          const char *access_key,
                                          skv_error *err);
/* The user's access keys, sorted (strv_free). */
int skv__mgr_store_admin_key_list(skv__db *db, const char *user, char ***v,
                                  size_t *n, skv_error *err);
/* Every user owning a key pair, sorted (strv_free). */
int skv__mgr_store_admin_key_users(skv__db *db, char ***v, size_t *n,
                                   skv_error *err);
/* 1 with the policy of the user's oldest active key pair naming one. */
int skv__mgr_store_admin_key_policy(skv__db *db, const char *user,
                                    char *buf, size_t bufsz, skv_error *err);
/* 1 with the user's oldest active key pair. */
int skv__mgr_store_admin_key_first(skv__db *db, const char *user, char *ak,
                                   size_t aksz, char *sk, size_t sksz,
                                   skv_error *err);
/* A key pair as the verifier needs it; usable: the key and its user are
 * both active. Strings live until the callback returns. */
typedef struct skv__mgr_store_admin_key {
    const char *access_key, *secret_key, *user, *role;
    bool usable;
} skv__mgr_store_admin_key;
typedef int (*skv__mgr_store_admin_key_fn)(void *arg,
                                           const skv__mgr_store_admin_key *k,
                                           skv_error *err);
/* Call fn for each key pair of user; stops at its first error. */
int skv__mgr_store_admin_key_each(skv__db *db, const char *user,
                                  skv__mgr_store_admin_key_fn fn, void *arg,
                                  skv_error *err);

/* ---- resource policies -------------------------------------------------- */
int skv__mgr_store_admin_policy_read(skv__db *db,
                                     skv_proto_admin_resource_policy_reply *rp,
                                     const char *name, skv_error *err);
/* max_slots stored as its msgpack encoding (NULL when empty). */
int skv__mgr_store_admin_policy_insert(skv__db *db,
                                       const skv_proto_resource_policy *p,
                                       skv_error *err);
int skv__mgr_store_admin_policy_update(skv__db *db,
                                       const skv_proto_resource_policy *p,
                                       skv_error *err);
int skv__mgr_store_admin_policy_delete(skv__db *db, const char *name,
                                       skv_error *err);
typedef struct skv__mgr_store_admin_limits {
    skv_slots *max_slots;               /* NULL: none; caller frees */
    uint32_t max_concurrent_sessions;
    uint32_t max_pending_sessions;
    uint32_t max_cluster_size;
    uint64_t max_session_lifetime_ms;
    uint64_t idle_timeout_ms;
} skv__mgr_store_admin_limits;
int skv__mgr_store_admin_policy_get(skv__db *db, const char *name,
                                    skv__mgr_store_admin_limits *out,
                                    skv_error *err);
/* 1 when a user, project or key pair names the policy: *what says which
 * ("user", "project", "key pair") and buf its name. */
int skv__mgr_store_admin_policy_user_of(skv__db *db, const char *name,
                                        const char **what, char *buf,
                                        size_t bufsz, skv_error *err);

/* ---- resource groups ---------------------------------------------------- */
typedef struct skv__mgr_store_admin_group {
    const char *name, *description;     /* description NULL: unchanged */
    const char *scheduler, *selector;
    const char *lost_batch_policy;      /* NULL: "requeue" / unchanged */
    uint64_t pending_timeout_ms;        /* at most INT64_MAX */
    const char *session_types;          /* "a,b"; NULL: "" / unchanged */
    bool active;                        /* update only */
} skv__mgr_store_admin_group;
int skv__mgr_store_admin_group_insert(skv__db *db,
                                      const skv__mgr_store_admin_group *g,
                                      skv_error *err);
int skv__mgr_store_admin_group_update(skv__db *db,
                                      const skv__mgr_store_admin_group *g,
                                      skv_error *err);
/* The group and its place on every domain's list. */
int skv__mgr_store_admin_group_delete(skv__db *db, const char *name,
                                      skv_error *err);
int skv__mgr_store_admin_group_read(skv__db *db,
                                    skv_proto_admin_resource_group_reply *rp,
                                    const char *name, skv_error *err);
/* 1 with the group's scheduler and selector. */
int skv__mgr_store_admin_group_sched(skv__db *db, const char *name,
                                     char *sched, size_t schedsz, char *sel,
                                     size_t selsz, skv_error *err);
typedef int (*skv__mgr_store_admin_group_fn)(void *arg, const char *name,
                                             const char *scheduler,
                                             const char *selector,
                                             skv_error *err);
/* Call fn for every group (by name); stops at its first error. */
int skv__mgr_store_admin_group_each(skv__db *db,
                                    skv__mgr_store_admin_group_fn fn,
                                    void *arg, skv_error *err);
/* 1 with whether the group is active and its session types ("" all). */
int skv__mgr_store_admin_group_admits(skv__db *db, const char *name,
                                      bool *active, char *types,
                                      size_t typesz, skv_error *err);
/* A group's preemption settings. For _set, on < 0 / min_runtime_ms < 0 /
 * mode "" leave that column unchanged. */
typedef struct skv__mgr_store_preempt {
    int on;                     /* 1 preemption on, 0 off */
    int64_t min_runtime_ms;     /* a victim must have run this long */
    char mode[16];              /* "requeue" or "terminate" */
    char order[24];             /* "lowest-priority" or "newest" */
} skv__mgr_store_preempt;
int skv__mgr_store_admin_group_preempt_set(skv__db *db, const char *name,
                                           const skv__mgr_store_preempt *p,
                                           skv_error *err);
/* 1 with the settings (defaults when the row has none), 0: no group. */
int skv__mgr_store_admin_group_preempt(skv__db *db, const char *name,
                                       skv__mgr_store_preempt *out,
                                       skv_error *err);
/* A group's idle and lifetime limits (admin_limits.c); for _set a
 * negative value leaves that column unchanged. 1 with them, 0: no group. */
typedef struct skv__mgr_store_glimits {
    int64_t idle_timeout_ms;    /* 0: never idle-terminated */
    int64_t max_lifetime_ms;    /* 0: no limit */
} skv__mgr_store_glimits;
int skv__mgr_store_admin_group_limits_set(skv__db *db, const char *name,
                                          const skv__mgr_store_glimits *l,
                                          skv_error *err);
int skv__mgr_store_admin_group_limits(skv__db *db, const char *name,
                                      skv__mgr_store_glimits *out,
                                      skv_error *err);
/* 1 with the group's lost-batch policy and pending timeout. */
int skv__mgr_store_admin_group_info(skv__db *db, const char *name,
                                    char *lost, size_t lostsz,
                                    uint64_t *pending_timeout_ms,
                                    skv_error *err);

/* ---- quotas per resource group (admin_quotas.c) ------------------------- */

/* Quotas matching scope, owner and group (NULL: any), by group, scope,
 * owner. */
int skv__mgr_store_admin_quota_read(skv__db *db,
                                    skv_proto_admin_quota_reply *rp,
                                    const char *scope, const char *owner,
                                    const char *group, skv_error *err);
/* Write all three vectors as given (NULL or empty: none); insert a new row
 * or update the existing one. */
int skv__mgr_store_admin_quota_put(skv__db *db, const skv_proto_quota *q,
                                   bool insert, skv_error *err);
int skv__mgr_store_admin_quota_delete(skv__db *db, const char *scope,
                                      const char *owner, const char *group,
                                      skv_error *err);
/* 1 with the first group (by name) where the owner has a quota. */
int skv__mgr_store_admin_quota_of(skv__db *db, const char *scope,
                                  const char *owner, char *buf, size_t bufsz,
                                  skv_error *err);
/* 1 with the first owner holding a quota in the group. */
int skv__mgr_store_admin_quota_in_group(skv__db *db, const char *group,
                                        char *buf, size_t bufsz,
                                        skv_error *err);

#endif
