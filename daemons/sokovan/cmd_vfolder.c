/* sokovan vfolder: virtual folders (create, list, info, rename, delete,
 * purge, clone, share, accept, revoke) and their files (vfolder_files.c,
 * vfolder_xfer.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfolder.h"

static const char vf_help[] =
    "usage: sokovan vfolder SUBCOMMAND [options] [args]\n"
    "\n"
    "Virtual folders: persistent data on the manager's storage hosts,\n"
    "mounted into sessions with `sokovan run --mount NAME`.\n"
    "  create NAME [--host H] [--quota 10g] [--project P]\n"
    "  list [--trash]                  folders you own, share or see\n"
    "  info NAME                       usage, quota, owner, shares\n"
    "  rename NAME NEW\n"
    "  delete NAME                     to the trash (refused while mounted)\n"
    "  purge [NAME]                    destroy trashed folders (all: no NAME)\n"
    "  clone NAME NEW                  a copy you own\n"
    "  share NAME USER [--perm ro|rw]  invite USER (default ro)\n"
    "  accept NAME                     accept an invitation\n"
    "  revoke NAME [USER]              end a share (yours: no USER)\n"
    "  ls NAME [PATH]                  list a directory\n"
    "  mkdir NAME PATH\n"
    "  rm NAME PATH [-r]\n"
    "  mv NAME FROM TO\n"
    "  upload NAME LOCAL [PATH] [--resume] [--sha256]\n"
    "                                  atomic: the old file or the new one\n"
    "  download NAME PATH [LOCAL] [--resume] [--sha256]\n"
    "Transfers show progress on a terminal; with --sha256 they also check\n"
    "the whole file's sha256 end to end.\n";

enum { V_HOST = 1, V_QUOTA, V_PROJECT, V_PERM, V_TRASH, V_RESUME, V_SHA,
       V_RECURSIVE };

/* "10g", "512m", "1048576": bytes (binary units). */
static int parse_size(cli *c, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 't': shift = 40; break;
    case 0: break;
    default: shift = -1;
    }
    if (errno || end == text || shift < 0 || (*end && end[1]) ||
        v > (UINT64_MAX >> shift))
        return cli_usage(c, "--quota: '%s' is not a size (e.g. 10g)", text);
    *out = (uint64_t)v << shift;
    return 0;
}

static int take_opt(cli *c, cli_vf_args *a, int id, const char *val)
{
    switch (id) {
    case V_HOST: a->host = val; return 0;
    case V_QUOTA: return parse_size(c, val, &a->quota);
    case V_PROJECT: a->project = val; return 0;
    case V_PERM:
        a->perm = val;
        return strcmp(val, "ro") && strcmp(val, "rw")
                   ? cli_usage(c, "--perm: 'ro' or 'rw', not '%s'", val) : 0;
    case V_TRASH: a->trash = 1; return 0;
    case V_RESUME: a->resume = 1; return 0;
    case V_SHA: a->sha256 = 1; return 0;
    default: a->recursive = 1; return 0;
    }
}

int cli_vf_parse(cli *c, int argc, char **argv, int min, int max,
                 const char *help, cli_vf_args *a)
{
    static const cli_opt opts[] = {
        {"host", 1, V_HOST, 0}, {"quota", 1, V_QUOTA, 0},
        {"project", 1, V_PROJECT, 0}, {"perm", 1, V_PERM, 0},
        {"trash", 0, V_TRASH, 0}, {"resume", 0, V_RESUME, 0},
        {"sha256", 0, V_SHA, 0}, {"recursive", 0, V_RECURSIVE, 'r'},
        {NULL, 0, 0, 0}};
    cli_parser p;
    const char *val;
    int id, rc = 0;
    memset(a, 0, sizeof *a);
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(help, stdout);
            return -1;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = a->n == max ? cli_usage(c, "unexpected argument '%s'", val)
                             : (a->pos[a->n++] = val, 0);
        else
            rc = take_opt(c, a, id, val);
    }
    if (!rc && a->n < min)
        rc = cli_usage(c, "%s needs %d argument%s (see vfolder --help)",
                       argv[0], min, min == 1 ? "" : "s");
    return rc;
}

static void info_table(const skv_proto_vfolder_reply *r)
{
    static const char *const hdr[] = {"NAME", "ID", "HOST", "OWNER",
                                      "PROJECT", "PERM", "USAGE", "QUOTA",
                                      "SHARES"};
    cli_table t;
    cli_table_init(&t, 9, hdr);
    for (size_t i = 0; i < r->n_folders; i++) {
        const skv_proto_vfolder_info *f = &r->folders[i];
        char use[32], quota[32], shares[512] = "";
        for (size_t s = 0; s < f->n_shares; s++) {
            size_t l = strlen(shares);
            snprintf(shares + l, sizeof shares - l, "%s%s:%s%s", s ? "," : "",
                     f->shares[s].user, f->shares[s].perm,
                     f->shares[s].accepted ? "" : "(invited)");
        }
        cli_fmt_bytes(use, sizeof use, f->usage_bytes);
        if (f->quota_bytes)
            cli_fmt_bytes(quota, sizeof quota, f->quota_bytes);
        else
            snprintf(quota, sizeof quota, "-");
        const char *row[] = {f->name, f->id, f->host, f->owner, f->project,
                             f->perm, use, quota, shares};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static void info_json(const skv_proto_vfolder_reply *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_obj(&j);
    cli_json_key(&j, "message");
    cli_json_str(&j, r->message);
    cli_json_key(&j, "folders");
    cli_json_arr(&j);
    for (size_t i = 0; i < r->n_folders; i++) {
        const skv_proto_vfolder_info *f = &r->folders[i];
        const char *k[] = {"name", "id", "host", "owner", "project", "status",
                           "perm"};
        const char *v[] = {f->name, f->id, f->host, f->owner, f->project,
                           f->status, f->perm};
        cli_json_obj(&j);
        for (size_t x = 0; x < 7; x++) {
            cli_json_key(&j, k[x]);
            cli_json_str(&j, v[x]);
        }
        cli_json_key(&j, "usage_bytes");
        cli_json_uint(&j, f->usage_bytes);
        cli_json_key(&j, "quota_bytes");
        cli_json_uint(&j, f->quota_bytes);
        cli_json_key(&j, "shares");
        cli_json_arr(&j);
        for (size_t s = 0; s < f->n_shares; s++) {
            cli_json_obj(&j);
            cli_json_key(&j, "user");
            cli_json_str(&j, f->shares[s].user);
            cli_json_key(&j, "perm");
            cli_json_str(&j, f->shares[s].perm);
            cli_json_key(&j, "accepted");
            cli_json_bool(&j, f->shares[s].accepted);
            cli_json_obj_end(&j);
        }
        cli_json_arr_end(&j);
        cli_json_obj_end(&j);
    }
    cli_json_arr_end(&j);
    cli_json_obj_end(&j);
    cli_json_end(&j);
}

/* One "vfolder" request and its reply printed. */
static int folder_call(cli *c, skv_proto_vfolder *q)
{
    skv_proto_vfolder_reply r;
    int rc = cli_connect(c);
    if (!rc)
        rc = cli_call(c, SKV_PROTO_VFOLDER, q, &r);
    if (rc)
        return rc;
    if (c->json)
        info_json(&r);
    else if (r.n_folders || !strcmp(q->op, "list"))
        info_table(&r);
    if (!c->json && r.message && r.n_folders == 0)
        cli_line(stdout, "%s", r.message);
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    return CLI_OK;
}

typedef struct folder_sub {
    const char *name;
    int min, max;
} folder_sub;

static const folder_sub folder_subs[] = {
    {"create", 1, 1}, {"list", 0, 0},   {"info", 1, 1},   {"rename", 2, 2},
    {"delete", 1, 1}, {"purge", 0, 1},  {"clone", 2, 2},  {"share", 2, 2},
    {"accept", 1, 1}, {"revoke", 1, 2},
};

static int folder_cmd(cli *c, const folder_sub *s, int argc, char **argv)
{
    cli_vf_args a;
    int rc = cli_vf_parse(c, argc, argv, s->min, s->max, vf_help, &a);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    skv_proto_vfolder q;
    memset(&q, 0, sizeof q);
    q.op = (char *)s->name;
    q.name = (char *)a.pos[0];
    if (!strcmp(s->name, "rename") || !strcmp(s->name, "clone"))
        q.new_name = (char *)a.pos[1];
    if (!strcmp(s->name, "share") || !strcmp(s->name, "revoke"))
        q.user = (char *)a.pos[1];
    q.host = (char *)a.host;
    q.project = (char *)a.project;
    q.quota_bytes = a.quota;
    q.perm = (char *)a.perm;
    q.trash = (uint8_t)a.trash;
    return folder_call(c, &q);
}

static int file_cmd(cli *c, const char *sub, int argc, char **argv)
{
    static const struct { const char *name; int min, max; } subs[] = {
        {"ls", 1, 2}, {"mkdir", 2, 2}, {"rm", 2, 2}, {"mv", 3, 3},
        {"upload", 2, 3}, {"download", 2, 3}};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(sub, subs[i].name))
            continue;
        cli_vf_args a;
        int rc = cli_vf_parse(c, argc, argv, subs[i].min, subs[i].max,
                              vf_help, &a);
        if (rc)
            return rc < 0 ? CLI_OK : rc;
        if ((rc = cli_connect(c)))
            return rc;
        if (!strcmp(sub, "upload"))
            return cli_vf_upload(c, &a);
        if (!strcmp(sub, "download"))
            return cli_vf_download(c, &a);
        return cli_vf_files(c, sub, &a);
    }
    return -1;
}

int cli_cmd_vfolder(cli *c, int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(vf_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    for (size_t i = 0; i < sizeof folder_subs / sizeof folder_subs[0]; i++)
        if (!strcmp(argv[1], folder_subs[i].name))
            return folder_cmd(c, &folder_subs[i], argc - 1, argv + 1);
    int rc = file_cmd(c, argv[1], argc - 1, argv + 1);
    return rc == -1 ? cli_usage(c, "vfolder: unknown subcommand '%s'",
                                argv[1]) : rc;
}
