/* sokovan admin: the object kinds (admin_kinds.c) and their output
 * (admin_out.c) behind one generic command (cmd_admin.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_CLI_ADMIN_H
#define SOKOVAN_CLI_ADMIN_H

#include "cli.h"

/* Quota flags of domain, project and user (admin_quota.c); ids above the
 * kinds' own. */
enum { F_QUOTA_RG = 100, F_GUARANTEED, F_LIMIT, F_BORROW, F_NO_QUOTA };
#define QUOTA_FLAGS {"quota-rg", 1, F_QUOTA_RG}, \
    {"guaranteed", 1, F_GUARANTEED}, {"limit", 1, F_LIMIT}, \
    {"borrow-limit", 1, F_BORROW}, {"no-quota", 0, F_NO_QUOTA}
#define QUOTA_HELP \
    "  quota in a resource group (update NAME with these flags only):\n" \
    "  --quota-rg GROUP (default: default)  --guaranteed SLOTS  --limit " \
    "SLOTS\n  --borrow-limit SLOTS (SLOTS e.g. cuda.device=8,cpu=32; none " \
    "clears)\n  --no-quota (remove it)   see 'sokovan admin quota --help'\n"

typedef struct admin_quota_req {
    skv_proto_admin_quota rq;
    skv_slots *v[3];                 /* guaranteed, limit, borrow_limit */
    const char *group;               /* --quota-rg */
    int set, clear;
} admin_quota_req;

typedef struct admin_req {
    uint32_t op;                     /* skv_proto_admin_op */
    union {
        skv_proto_admin_user user;
        skv_proto_admin_keypair keypair;
        skv_proto_admin_project project;
        skv_proto_admin_domain domain;
        skv_proto_admin_resource_policy policy;
        skv_proto_admin_resource_group group;
    } u;
    cli_strv list;                   /* projects, groups, session types */
    skv_slots *slots;                /* policy max_slots */
    const char *out_file;            /* keypair create --out */
    int inactive;                    /* --inactive */
    admin_quota_req quota;           /* quota flags (admin_quota.c) */
    int n_obj_flags;                 /* flags of the object itself */
} admin_req;

typedef union admin_reply {
    skv_proto_admin_user_reply user;
    skv_proto_admin_keypair_reply keypair;
    skv_proto_admin_project_reply project;
    skv_proto_admin_domain_reply domain;
    skv_proto_admin_resource_policy_reply policy;
    skv_proto_admin_resource_group_reply group;
} admin_reply;

typedef struct admin_kind {
    const char *name;                /* "user" */
    const char *plural;              /* JSON key: "users" */
    skv_proto_type type;
    const cli_opt *opts;
    const char *help;
    /* One flag of this kind into r; 0 or an exit code. */
    int (*take)(cli *c, admin_req *r, int id, const char *val);
    /* Set the identifying name, point arrays at r->list, set op. */
    void (*finish)(admin_req *r, const char *name);
    void (*print)(const cli *c, const admin_reply *reply);
    const char *quota_scope;         /* takes the quota flags: "domain",
                                        "project", "user"; else NULL */
} admin_kind;

extern const admin_kind cli_admin_kinds[];
extern const size_t cli_admin_n_kinds;

void cli_admin_print_user(const cli *c, const admin_reply *r);
void cli_admin_print_keypair(const cli *c, const admin_reply *r);
void cli_admin_print_project(const cli *c, const admin_reply *r);
void cli_admin_print_domain(const cli *c, const admin_reply *r);
void cli_admin_print_policy(const cli *c, const admin_reply *r);
void cli_admin_print_group(const cli *c, const admin_reply *r);

/* One quota flag into q: 0, an exit code, or 1 when id is not one. */
int cli_admin_quota_take(cli *c, admin_quota_req *q, int id,
                         const char *val);
/* admin.quota UPDATE (or DELETE for --no-quota) of scope NAME. */
int cli_admin_quota_send(cli *c, const char *scope, const char *name,
                         admin_quota_req *q);
void cli_admin_quota_free(admin_quota_req *q);
/* sokovan admin quota list|tree (admin_quota.c); argv[0] is "quota". */
int cli_cmd_admin_quota(cli *c, int argc, char **argv);

/* sokovan admin backup NAME (cmd_backup.c); argv[0] is "backup". */
int cli_cmd_admin_backup(cli *c, int argc, char **argv);
/* sokovan admin agent cordon|drain|uncordon ID (cmd_agent_ops.c). */
int cli_cmd_admin_agent(cli *c, int argc, char **argv);

#endif
