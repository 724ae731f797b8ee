/* The manager's admin plane: users, keypairs, projects, domains, resource
 * policies and resource groups, kept in the manager's store (rows and SQL:
 * src/manager/store/admin_*.c) and mirrored into the scheduler (groups,
 * per-owner policies) and the request verifier (keys). The core (sessions,
 * agents) calls only what is declared here.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_ADMIN_H
#define SKV_MGR_ADMIN_H

#include <stdbool.h>
#include <stdint.h>

#include "sokovan/auth.h"
#include "sokovan/proto.h"
#include "sokovan/sched.h"

typedef struct skv__db skv__db;    /* store/db.h */

typedef struct skv__mgr_admin_ctx {
    skv__db *db;                    /* borrowed; the core's connection */
    skv_sched *sched;               /* borrowed */
    skv_auth_verifier *verifier;    /* borrowed */
    const char *data_dir;           /* key files are written here */
    /* Around each transaction the admin plane opens itself (not the
     * savepoints nested in the core's): after BEGIN, able to fail it, and
     * after COMMIT or ROLLBACK. The core writes its pending request nonces
     * there (store_nonces.c). NULL: none. */
    int (*tx_begin)(void *arg, skv_error *err);
    void (*tx_end)(void *arg, bool committed);
    void *tx_arg;
} skv__mgr_admin_ctx;

typedef struct skv__mgr_bootstrap {
    const char *default_group;      /* "default" */
    const char *default_scheduler;  /* sequencer, "fifo" */
    const char *default_selector;   /* "auto" */
    const char *bootstrap_agents;   /* "a1,a2" or NULL */
} skv__mgr_bootstrap;

/* First start (no admin yet): the "admin" user (role admin) with a keypair
 * written to data_dir/admin.key (0600, "access_key=...\nsecret_key=...\n"),
 * the default domain "default" and project "default", the default resource
 * group; for each bootstrap agent id a user of role agent and a keypair in
 * data_dir/agents/<id>.key. Later starts: creates only missing agent keys
 * and the default group if missing. */
int skv__mgr_admin_bootstrap(skv__mgr_admin_ctx *ctx,
                             const skv__mgr_bootstrap *b, int64_t now_ms,
                             skv_error *err);

/* Load every active keypair into the verifier and every active resource
 * group and per-owner resource policy into the scheduler (on open). */
int skv__mgr_admin_load(skv__mgr_admin_ctx *ctx, skv_error *err);

/* Handle an admin.* request (type is one of SKV_PROTO_ADMIN_*; the caller
 * has verified the signature but NOT the role). Fills reply (a zeroed
 * structure of skv_proto_type_reply(type)). Checks skv_auth_may(ADMIN),
 * validates every field, writes in one transaction, then updates the
 * scheduler and verifier; on any failure nothing is left changed. */
int skv__mgr_admin_handle(skv__mgr_admin_ctx *ctx,
                          const skv_auth_principal *p, skv_proto_type type,
                          const void *body, void *reply, int64_t now_ms,
                          skv_error *err);

/* What the core needs to accept a submission from `user`. */
typedef struct skv__mgr_user_info {
    char domain[128];
    char role[16];                  /* "user", "admin", "agent" */
    int active;
} skv__mgr_user_info;
/* SKV_ENOENT when no such user. */
int skv__mgr_admin_user(skv__mgr_admin_ctx *ctx, skv__mgr_user_info *out,
                        const char *user, skv_error *err);
/* 0 when user is a member of project (or project is the user's domain's
 * "default"), SKV_EPERM naming both otherwise. */
int skv__mgr_admin_user_in_project(skv__mgr_admin_ctx *ctx, const char *user,
                                   const char *project, skv_error *err);
/* 0 when the user's domain may use the group and the group is active and
 * allows session_type; SKV_ENOENT / SKV_EPERM with a message otherwise. */
int skv__mgr_admin_group_allows(skv__mgr_admin_ctx *ctx, const char *user,
                                const char *group, const char *session_type,
                                skv_error *err);

typedef struct skv__mgr_group_info {
    char lost_batch_policy[16];     /* "requeue" or "fail" */
    uint64_t pending_timeout_ms;    /* 0 = forever */
    char preempt_mode[16];          /* "requeue" or "terminate" */
    uint64_t idle_timeout_ms;       /* 0 = never idle-terminated */
    uint64_t max_lifetime_ms;       /* 0 = no limit */
} skv__mgr_group_info;
int skv__mgr_admin_group(skv__mgr_admin_ctx *ctx, skv__mgr_group_info *out,
                         const char *group, skv_error *err);

/* The resource-policy limits that apply to a user's submissions beyond the
 * scheduler's (cluster size, lifetime); zeros = unlimited. */
typedef struct skv__mgr_user_limits {
    uint32_t max_cluster_size;
    uint64_t max_session_lifetime_ms;
    uint64_t idle_timeout_ms;
    char policy[128];               /* the policy's name; "" none */
} skv__mgr_user_limits;
int skv__mgr_admin_user_limits(skv__mgr_admin_ctx *ctx,
                               skv__mgr_user_limits *out, const char *user,
                               skv_error *err);

#endif /* SKV_MGR_ADMIN_H */
