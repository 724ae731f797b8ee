/* sokovan admin backup NAME: the manager writes an online backup of its
 * database (one consistent snapshot) to NAME in its backup_dir, on its
 * own host; the reply names the file. Restoring is an operator's step
 * with the manager stopped (docs/architecture.md).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin.h"

static const char backup_help[] =
    "usage: sokovan admin backup NAME\n"
    "  The manager copies its database (SQLite online backup: one\n"
    "  consistent snapshot, taken while it keeps running) to the new file\n"
    "  NAME in its backup_dir (default <data_dir>/backups) on the\n"
    "  manager's host, and prints the file's path and size. NAME: letters,\n"
    "  digits, '_', '.' and '-'; an existing file is never overwritten.\n"
    "  Restore: stop the manager, copy the file to <data_dir>/manager.db\n"
    "  (removing manager.db-wal and manager.db-shm), start it.\n";

static void print_reply(const cli *c, const skv_proto_admin_backup_reply *r)
{
    if (!c->json) {
        printf("backup %s (%llu bytes)\n", r->path,
               (unsigned long long)r->bytes);
        return;
    }
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_obj(&j);
    cli_json_key(&j, "path");
    cli_json_str(&j, r->path);
    cli_json_key(&j, "bytes");
    cli_json_uint(&j, r->bytes);
    cli_json_obj_end(&j);
    cli_json_end(&j);
}

int cli_cmd_admin_backup(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{NULL, 0, 0}};
    c->cmd = "admin backup";
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val, *name = NULL;
    int id;
    while ((id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(backup_help, stdout);
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (name)
            return cli_usage(c, "unexpected argument '%s'", val);
        name = val;
    }
    if (!name || !name[0])
        return cli_usage(c, "missing the backup file NAME");
    skv_proto_admin_backup rq = {(char *)name};
    skv_proto_admin_backup_reply rep;
    memset(&rep, 0, sizeof rep);
    int rc = cli_call(c, SKV_PROTO_ADMIN_BACKUP, &rq, &rep);
    if (rc)
        return rc;
    print_reply(c, &rep);
    skv_proto_body_free(SKV_PROTO_ADMIN_BACKUP_REPLY, &rep);
    return CLI_OK;
}
