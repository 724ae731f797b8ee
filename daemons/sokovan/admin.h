/* sokovan admin: the object kinds (admin_kinds.c) and their output
 * (admin_out.c) behind one generic command (cmd_admin.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_CLI_ADMIN_H
#define SOKOVAN_CLI_ADMIN_H

#include "cli.h"

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
} admin_kind;

extern const admin_kind cli_admin_kinds[];
extern const size_t cli_admin_n_kinds;

void cli_admin_print_user(const cli *c, const admin_reply *r);
void cli_admin_print_keypair(const cli *c, const admin_reply *r);
void cli_admin_print_project(const cli *c, const admin_reply *r);
void cli_admin_print_domain(const cli *c, const admin_reply *r);
void cli_admin_print_policy(const cli *c, const admin_reply *r);
void cli_admin_print_group(const cli *c, const admin_reply *r);

/* sokovan admin backup NAME (cmd_backup.c); argv[0] is "backup". */
int cli_cmd_admin_backup(cli *c, int argc, char **argv);
/* sokovan admin agent cordon|drain|uncordon ID (cmd_agent_ops.c). */
int cli_cmd_admin_agent(cli *c, int argc, char **argv);

#endif
