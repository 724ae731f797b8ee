/* sokovan admin KIND OP [NAME] [flags]: one generic driver; the kinds
 * differ only in their flags and output (admin_kinds.c, admin_out.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"

static const char admin_help[] =
    "usage: sokovan admin KIND OP [NAME] [options]\n"
    "       sokovan admin backup NAME   (see 'sokovan admin backup --help')\n"
    "       sokovan admin quota tree|list   (see 'sokovan admin quota "
    "--help')\n"
    "       sokovan admin agent cordon|drain|uncordon ID\n"
    "  KIND: user, keypair, project, domain, policy, group\n"
    "  OP:   create NAME, update NAME, delete NAME, list [NAME]\n"
    "        (for keypairs NAME is the access key; create takes --user)\n"
    "Run 'sokovan admin KIND --help' for a kind's options.\n";

static int parse_op(cli *c, const char *word, uint32_t *op)
{
    static const char *const ops[] = {"create", "update", "delete", "list",
                                      NULL};
    for (int i = 0; ops[i]; i++)
        if (strcmp(word, ops[i]) == 0) {
            *op = (uint32_t)(i + 1);
            return 0;
        }
    return cli_usage(c, "unknown operation '%s' (create, update, delete, "
                     "list)", word);
}

/* Flags and the NAME positional. */
static int parse_admin(cli *c, const admin_kind *k, admin_req *r,
                       const char **name, int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val;
    int id, rc = 0;
    while (!rc && (id = cli_next(&p, k->opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(k->help, stdout);
            return -1;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS && *name)
            rc = cli_usage(c, "unexpected argument '%s'", val);
        else if (id == CLI_OPT_POS && !val[0])
            rc = cli_usage(c, "empty name");
        else if (id == CLI_OPT_POS)
            *name = val;
        else if (!k->quota_scope ||
                 (rc = cli_admin_quota_take(c, &r->quota, id, val)) == 1) {
            r->n_obj_flags++;
            rc = k->take(c, r, id, val);
        }
    }
    int is_keypair = strcmp(k->name, "keypair") == 0;
    if (!rc && is_keypair && r->op == SKV_PROTO_ADMIN_CREATE) {
        if (!*name && !r->u.keypair.keypair.user)
            rc = cli_usage(c, "keypair create needs --user USER");
    } else if (!rc && !*name && r->op != SKV_PROTO_ADMIN_LIST) {
        rc = cli_usage(c, "missing the %s's %s", k->name,
                       is_keypair ? "access key" : "name");
    }
    return rc;
}

/* A fresh keypair into a key file the owner alone may read. */
static int write_keyfile(const char *path, const skv_proto_keypair *kp)
{
    if (!kp->access_key || !kp->secret_key)
        return cli_fail("the reply carries no secret key to write");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return cli_fail("--out %s: %m", path);
    char buf[256];
    int n = snprintf(buf, sizeof buf, "access_key=%s\nsecret_key=%s\n",
                     kp->access_key, kp->secret_key);
    int ok = n > 0 && (size_t)n < sizeof buf && write(fd, buf, (size_t)n) == n;
    skv_auth_wipe(buf, sizeof buf);
    if (close(fd) != 0 || !ok) {
        unlink(path);
        return cli_fail("--out %s: writing failed", path);
    }
    return CLI_OK;
}

static int run_admin(cli *c, const admin_kind *k, admin_req *r,
                     const char *name)
{
    k->finish(r, name);
    admin_reply reply;
    int rc = cli_call(c, k->type, &r->u, &reply);
    if (rc)
        return rc;
    if (r->op == SKV_PROTO_ADMIN_DELETE) {
        if (c->json) {
            cli_json j;
            cli_json_init(&j, stdout);
            cli_json_obj(&j);
            cli_json_key(&j, "deleted");
            cli_json_str(&j, name);
            cli_json_key(&j, "kind");
            cli_json_str(&j, k->name);
            cli_json_obj_end(&j);
            cli_json_end(&j);
        } else
            cli_line(stdout, "deleted %s %s", k->name, name);
    } else {
        k->print(c, &reply);
    }
    if (r->out_file && reply.keypair.n_keypairs)
        rc = write_keyfile(r->out_file, &reply.keypair.keypairs[0]);
    skv_proto_body_free(skv_proto_type_reply(k->type), &reply);
    return rc;
}

int cli_cmd_admin(cli *c, int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        fputs(admin_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (strcmp(argv[1], "backup") == 0)
        return cli_cmd_admin_backup(c, argc - 1, argv + 1);
    if (strcmp(argv[1], "quota") == 0)
        return cli_cmd_admin_quota(c, argc - 1, argv + 1);
    if (strcmp(argv[1], "agent") == 0)
        return cli_cmd_admin_agent(c, argc - 1, argv + 1);
    const admin_kind *k = NULL;
    for (size_t i = 0; i < cli_admin_n_kinds; i++)
        if (strcmp(argv[1], cli_admin_kinds[i].name) == 0)
            k = &cli_admin_kinds[i];
    if (!k)
        return cli_usage(c, "unknown kind '%s' (user, keypair, project, "
                         "domain, policy, group)", argv[1]);
    static char cmd[32];
    snprintf(cmd, sizeof cmd, "admin %s", k->name);
    c->cmd = cmd;
    if (argc >= 3 && (strcmp(argv[2], "--help") == 0 ||
                      strcmp(argv[2], "-h") == 0)) {
        fputs(k->help, stdout);
        return CLI_OK;
    }
    if (argc < 3)
        return cli_usage(c, "missing operation (create, update, delete, "
                         "list)");
    admin_req r;
    memset(&r, 0, sizeof r);
    int rc = parse_op(c, argv[2], &r.op);
    const char *name = NULL;
    if (!rc)
        rc = parse_admin(c, k, &r, &name, argc - 2, argv + 2);
    if (!rc && r.out_file && !(r.op == SKV_PROTO_ADMIN_CREATE &&
                               strcmp(k->name, "keypair") == 0))
        rc = cli_usage(c, "--out applies to 'admin keypair create' only");
    /* Refuse before the key is created, not after. */
    if (!rc && r.out_file && access(r.out_file, F_OK) == 0)
        rc = cli_fail("--out %s: the file exists (never overwritten)",
                      r.out_file);
    int quota = r.quota.set || r.quota.clear || r.quota.group;
    if (!rc && quota && (r.op != SKV_PROTO_ADMIN_UPDATE || r.n_obj_flags))
        rc = cli_usage(c, "the quota flags go with 'update NAME' alone (no "
                       "other %s flags)", k->name);
    if (!rc && quota && !r.quota.set && !r.quota.clear)
        rc = cli_usage(c, "--quota-rg needs --guaranteed, --limit, "
                       "--borrow-limit or --no-quota");
    if (!rc && quota)
        rc = cli_admin_quota_send(c, k->quota_scope, name, &r.quota);
    else if (!rc)
        rc = run_admin(c, k, &r, name);
    cli_admin_quota_free(&r.quota);
    cli_strv_free(&r.list);
    skv_slots_free(r.slots);
    return rc == -1 ? CLI_OK : rc;
}
