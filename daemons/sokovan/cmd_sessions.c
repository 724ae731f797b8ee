/* sokovan ps / logs / terminate.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const all_statuses[] = {
    "PENDING", "SCHEDULED", "PREPARING", "RUNNING", "TERMINATING",
    "TERMINATED", "CANCELLED", "ERROR", NULL};

/* "running,pending" -> upper-case known statuses appended to list. */
static int take_statuses(cli *c, cli_strv *list, char *val)
{
    for (char *tok = strtok(val, ","); tok; tok = strtok(NULL, ",")) {
        for (char *p = tok; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        if (cli_parse_word(c, "--status", tok, all_statuses))
            return CLI_USAGE;
        if (cli_strv_push(list, tok))
            return CLI_FAIL;
    }
    if (list->n == 0)
        return cli_usage(c, "--status needs a value");
    return 0;
}

/* A pending session's reason in a few words: "resources (cuda.device)". */
static const char *reason_word(char *buf, size_t n,
                               const skv_proto_session_info *s)
{
    buf[0] = '\0';
    if (!s->n_pending || !s->pending[0].predicate)
        return buf;
    const skv_proto_pending_reason *p = &s->pending[0];
    if (p->slot && p->slot[0])
        snprintf(buf, n, "%s (%s)", p->predicate, p->slot);
    else
        snprintf(buf, n, "%s", p->predicate);
    return buf;
}

static void ps_table(const skv_proto_session_list_reply *r)
{
    static const char *const hdr[] = {"SESSION", "NAME", "OWNER", "STATUS",
                                      "TYPE", "IMAGE", "SLOTS", "AGE", "EXIT",
                                      "REASON"};
    cli_table t;
    cli_table_init(&t, 10, hdr);
    for (size_t i = 0; i < r->n_sessions; i++) {
        const skv_proto_session_info *s = &r->sessions[i];
        char slots[512], age[32], code[16] = "", why[160];
        if (s->status && strcmp(s->status, "TERMINATED") == 0)
            snprintf(code, sizeof code, "%d", (int)s->exit_code);
        const char *row[] = {s->session_id, s->name, s->owner, s->status,
                             s->session_type, s->image,
                             cli_fmt_slots(slots, sizeof slots, s->slots),
                             cli_fmt_age(age, sizeof age, s->created_ms), code,
                             reason_word(why, sizeof why, s)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static void ps_json(const skv_proto_session_list_reply *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_obj(&j);
    cli_json_key(&j, "total");
    cli_json_uint(&j, r->total);
    cli_json_key(&j, "sessions");
    cli_json_arr(&j);
    for (size_t i = 0; i < r->n_sessions; i++)
        cli_json_session(&j, &r->sessions[i]);
    cli_json_arr_end(&j);
    cli_json_obj_end(&j);
    cli_json_end(&j);
}

enum { P_ALL = 1, P_STATUS, P_RG, P_OWNER, P_LIMIT };

static const char ps_help[] =
    "usage: sokovan ps [--all] [--status S[,S...]] [--rg G] [--owner U] "
    "[--limit N] [--json]\n"
    "List sessions: active ones by default, every one with --all, or those\n"
    "in the given statuses. --owner (admins) lists another user's sessions.\n";

int cli_cmd_ps(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"all", 0, P_ALL}, {"status", 1, P_STATUS},
        {"rg", 1, P_RG}, {"owner", 1, P_OWNER}, {"limit", 1, P_LIMIT},
        {NULL, 0, 0}};
    skv_proto_session_list req;
    memset(&req, 0, sizeof req);
    cli_strv st = {0};
    int all = 0, rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val;
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(ps_help, stdout);
            cli_strv_free(&st);
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = cli_usage(c, "unexpected argument '%s'", val);
        else if (id == P_ALL)
            all = 1;
        else if (id == P_STATUS)
            rc = take_statuses(c, &st, (char *)val);
        else if (id == P_RG)
            req.resource_group = (char *)val;
        else if (id == P_OWNER)
            req.owner = (char *)val;
        else
            rc = cli_parse_u32(c, "--limit", val, 1, 10000, &req.limit);
    }
    if (!rc && all && st.n)
        rc = cli_usage(c, "--all and --status are exclusive");
    if (!rc && !all && !st.n)
        for (int i = 0; i < 5; i++)
            cli_strv_push(&st, all_statuses[i]);   /* the active ones */
    skv_proto_session_list_reply r;
    req.statuses = st.v;
    req.n_statuses = st.n;
    if (!rc)
        rc = cli_call(c, SKV_PROTO_SESSION_LIST, &req, &r);
    if (!rc) {
        if (c->json)
            ps_json(&r);
        else
            ps_table(&r);
        skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &r);
    }
    cli_strv_free(&st);
    return rc;
}

/* The one positional argument (an id) of show/logs/terminate. */
int cli_take_id(cli *c, const char **id_out, const char *val)
{
    if (*id_out)
        return cli_usage(c, "unexpected argument '%s'", val);
    if (!val[0])
        return cli_usage(c, "empty session id");
    *id_out = val;
    return 0;
}

enum { L_KERNEL = 1, L_STDERR, L_FOLLOW };

int cli_cmd_logs(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"kernel", 1, L_KERNEL},
        {"stderr", 0, L_STDERR}, {"follow", 0, L_FOLLOW}, {NULL, 0, 0}};
    const char *sid = NULL, *kernel = NULL, *val;
    int err_stream = 0, follow = 0, rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan logs ID [--kernel K] [--stderr] [--follow]\n"
                 "Print a kernel's output (the main kernel's stdout by "
                 "default);\n--follow keeps printing until the kernel ends.");
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = cli_take_id(c, &sid, val);
        else if (id == L_KERNEL && !val[0])
            rc = cli_usage(c, "--kernel needs a value");
        else if (id == L_KERNEL)
            kernel = val;
        else if (id == L_STDERR)
            err_stream = 1;
        else
            follow = 1;
    }
    if (!rc && !sid)
        rc = cli_usage(c, "missing session ID");
    if (!rc && c->json)
        rc = cli_usage(c, "--json does not apply to logs (raw output)");
    if (rc)
        return rc;
    return cli_stream_logs(c, sid, kernel, err_stream ? "stderr" : "stdout",
                           follow, stdout);
}

enum { T_FORCE = 1, T_REASON };

int cli_cmd_terminate(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"force", 0, T_FORCE},
        {"reason", 1, T_REASON}, {NULL, 0, 0}};
    const char *sid = NULL, *reason = "terminated by the user", *val;
    int force = 0, rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan terminate ID [--force] [--reason R]\n"
                 "Stop a session (--force: no grace period).");
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = cli_take_id(c, &sid, val);
        else if (id == T_FORCE)
            force = 1;
        else
            reason = val;
    }
    if (!rc && !sid)
        rc = cli_usage(c, "missing session ID");
    if (rc)
        return rc;
    skv_proto_session_terminate req = {(char *)sid, (char *)reason,
                                       (uint8_t)force};
    skv_proto_session_ref r;
    rc = cli_call(c, SKV_PROTO_SESSION_TERMINATE, &req, &r);
    if (rc)
        return rc;
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "session_id");
        cli_json_str(&j, r.session_id);
        cli_json_key(&j, "status");
        cli_json_str(&j, r.status);
        cli_json_obj_end(&j);
        cli_json_end(&j);
    } else {
        cli_line(stdout, "%s %s", r.session_id, r.status ? r.status : "");
    }
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &r);
    return CLI_OK;
}
