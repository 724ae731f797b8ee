/* sokovan: command dispatch, global options, usage and error messages.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: sokovan [global options] COMMAND [options] [args]\n"
    "\n"
    "Commands:\n"
    "  run [options] IMAGE [--] [CMD...]   submit a session (see run --help)\n"
    "  ps [--all] [--status S] [--rg G] [--owner U] [--limit N]\n"
    "                                      list sessions\n"
    "  show ID                             a session: kernels, status history,\n"
    "                                      and why it is still pending\n"
    "  logs ID [--kernel K] [--stderr] [--follow]\n"
    "                                      a kernel's output (main by default)\n"
    "  terminate ID [--force] [--reason R] stop a session\n"
    "  agents [--rg G] [--all]             list agents\n"
    "  images [--arch A]                   list images\n"
    "  app-token ID SERVICE [--ttl D]      the URL (with a token) of a service\n"
    "                                      through the app proxy\n"
    "  app ID SERVICE [--bind ADDR:PORT]   a local TCP tunnel to a service\n"
    "                                      through the app proxy\n"
    "  ssh ID [-- CMD...]                  ssh into the session's ssh service\n"
    "                                      through the app proxy\n"
    "  admin user|keypair|project|domain|policy|group\n"
    "        create|update|delete|list ... manage the cluster (admin --help)\n"
    "  vfolder create|list|info|rename|delete|purge|clone|share|accept|\n"
    "          revoke|ls|mkdir|rm|mv|upload|download ...\n"
    "                                      persistent folders (vfolder --help)\n"
    "  exec ID [--kernel K] [-i] [-t] -- CMD...\n"
    "                                      run a command in a running kernel\n"
    "  shell ID [--kernel K]               an interactive shell in a kernel\n"
    "  help [COMMAND]                      this text, or a command's --help\n"
    "  version                             the CLI's and library's versions\n"
    "\n"
    "Global options (before or after the command):\n"
    "  --endpoint E    manager address: unix:/path, tcp:host:port or host:port;\n"
    "                  a comma-separated list names a leader and its standbys\n"
    "                  (default $SOKOVAN_ENDPOINT, else " CLI_DEFAULT_ENDPOINT ")\n"
    "  --key-file F    credentials file (access_key=/secret_key= lines; default\n"
    "                  $SOKOVAN_KEY_FILE, else ~/.config/sokovan/key, else\n"
    "                  " CLI_ADMIN_KEY " when readable);\n"
    "                  $SOKOVAN_ACCESS_KEY and $SOKOVAN_SECRET_KEY also work\n"
    "  --json          one JSON document instead of tables\n"
    "  --timeout MS    per-request timeout (default 30000)\n"
    "  --tls-ca F      TLS to a host:port manager, verified by this PEM file\n"
    "                  (a CA or the manager's tls/cert.pem; $SOKOVAN_TLS_CA)\n"
    "  --tls-pin FP    TLS, accepting only the manager certificate with this\n"
    "                  SHA-256 fingerprint ($SOKOVAN_TLS_PIN); endpoint\n"
    "                  tls:host:port without either uses\n"
    "                  " CLI_MANAGER_CERT " when readable\n"
    "  -h, --help      this text\n"
    "  --version       the CLI's and library's versions\n"
    "\n"
    "Exit codes: 0 ok, 1 request failed, 2 usage error; run --wait exits with\n"
    "the session's exit code. Under --json an error is a JSON document on\n"
    "stdout too: {\"error\": {\"kind\", \"command\", \"code\", \"message\"}}.\n";

/* Set before any parsing (see main): a script asking for --json reads
 * errors from the same stream and in the same form as results. */
static int json_errors;

/* Under --json the first error is the document's message and later lines
 * (hints that follow it) its details; main() writes it once at exit, so a
 * script parses exactly one document. */
typedef struct json_error {
    const char *kind, *code, *command;
    char *message;
    char *details[8];
    size_t n_details;
} json_error;
static json_error jerr;

static void keep_json(const cli *c, const char *kind, const char *code,
                      const char *msg)
{
    if (!jerr.message) {
        jerr.kind = kind;
        jerr.code = code;
        jerr.command = c && c->cmd ? c->cmd : NULL;
        jerr.message = strdup(msg);
    } else if (jerr.n_details < sizeof jerr.details / sizeof jerr.details[0]) {
        jerr.details[jerr.n_details++] = strdup(msg);
    }
}

static void write_json_error(void)
{
    if (!jerr.message)
        return;
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_obj(&j);
    cli_json_key(&j, "error");
    cli_json_obj(&j);
    cli_json_key(&j, "kind");
    cli_json_str(&j, jerr.kind);
    cli_json_key(&j, "command");
    cli_json_str(&j, jerr.command);
    cli_json_key(&j, "code");
    cli_json_str(&j, jerr.code);
    cli_json_key(&j, "message");
    cli_json_str(&j, jerr.message);
    cli_json_key(&j, "details");
    cli_json_strs(&j, jerr.details, jerr.n_details);
    cli_json_obj_end(&j);
    cli_json_obj_end(&j);
    cli_json_end(&j);
    free(jerr.message);
    for (size_t i = 0; i < jerr.n_details; i++)
        free(jerr.details[i]);
    memset(&jerr, 0, sizeof jerr);
}

/* One error in the form the caller asked for: a line on stderr, or under
 * --json kept for the one error document (kind "usage" or "failed"; code
 * the SKV_E* name when a library call failed). */
static void report(const cli *c, const char *kind, const char *code,
                   const char *fmt, va_list ap)
{
    if (c && c->where && !json_errors)
        fprintf(stderr, "%s: ", c->where);
    if (!json_errors) {
        cli_vprint_clean(stderr, fmt, ap);  /* it may echo what was typed */
        return;
    }
    char msg[2048];
    int at = c && c->where ? snprintf(msg, sizeof msg, "%s: ", c->where) : 0;
    vsnprintf(msg + at, sizeof msg - (size_t)at, fmt, ap);
    keep_json(c, kind, code, msg);
}

int cli_usage(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!json_errors)
        fprintf(stderr, "sokovan: %s%s", c && c->cmd ? c->cmd : "",
                c && c->cmd ? ": " : "");
    report(c, "usage", NULL, fmt, ap);
    va_end(ap);
    if (!json_errors)
        fprintf(stderr, "\nTry 'sokovan %s%s--help'.\n",
                c && c->cmd ? c->cmd : "", c && c->cmd ? " " : "");
    return CLI_USAGE;
}

static const cli *current;   /* the command running, for report() */

static int fail_code(const char *code, const char *fmt, va_list ap)
{
    if (!json_errors)
        fputs("sokovan: ", stderr);
    report(current, "failed", code, fmt, ap);  /* names, manager's words */
    if (!json_errors)
        fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_code(NULL, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

static int fail_with(const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_code(code, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

int cli_fail_err(const char *what, int rc, const skv_error *e)
{
    return fail_with(skv_err_name(rc), "%s: %s (%s)", what,
                     e && e->message[0] ? e->message : skv_strerror(rc),
                     skv_err_name(rc));
}

typedef struct cli_command {
    const char *name;
    int (*fn)(cli *c, int argc, char **argv);
} cli_command;

static int cmd_help(cli *c, int argc, char **argv);

static int cmd_version(cli *c, int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return cli_usage(c, "takes no arguments");
    printf("sokovan %s (libsokovan %s)\n", SKV_VERSION_STRING,
           skv_version_string());
    return CLI_OK;
}

static const cli_command commands[] = {
    {"run", cli_cmd_run},         {"ps", cli_cmd_ps},
    {"show", cli_cmd_show},       {"logs", cli_cmd_logs},
    {"terminate", cli_cmd_terminate}, {"agents", cli_cmd_agents},
    {"images", cli_cmd_images},   {"admin", cli_cmd_admin},
    {"help", cmd_help},           {"version", cmd_version},
    {"vfolder", cli_cmd_vfolder},
    {"app-token", cli_cmd_app_token}, {"app", cli_cmd_app},
    {"ssh", cli_cmd_ssh},
    {"exec", cli_cmd_exec},       {"shell", cli_cmd_shell},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* help COMMAND is COMMAND --help, so each command keeps one usage text. */
static int cmd_help(cli *c, int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stdout);
        return CLI_OK;
    }
    if (argc > 2)
        return cli_usage(c, "takes one command name");
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0 &&
            commands[i].fn != cmd_help) {
            char *sub[] = {argv[1], (char *)"--help", NULL};
            c->cmd = commands[i].name;
            return commands[i].fn(c, 2, sub);
        }
    return cli_usage(c, "unknown command '%s'", argv[1]);
}

/* --json may come anywhere before "--"; errors in parsing it already
 * answer in JSON. */
static int wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            return 1;
    return 0;
}

/* Global options before the command; returns the command's index in argv,
 * or an exit code as a negative number. */
static int parse_globals(cli *c, int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    static const cli_opt none[] = {{NULL, 0, 0}};
    for (;;) {
        const char *val;
        int id = cli_next(&p, none, &val);
        if (id == CLI_OPT_HELP) {
            fputs(usage_text, stdout);
            return -CLI_OK - 100;
        }
        if (id == CLI_OPT_ERR)
            return -CLI_USAGE;
        if (id == CLI_OPT_END)
            return argc;
        if (id == CLI_OPT_POS)
            return p.i - 1;     /* the command word just taken */
    }
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    cli_tls_from_env(&c);
    const char *env = getenv("SOKOVAN_ENDPOINT");
    c.endpoint = env && env[0] ? env : CLI_DEFAULT_ENDPOINT;
    c.endpoint_from = env && env[0] ? "$SOKOVAN_ENDPOINT" : "the default";
    json_errors = wants_json(argc, argv);
    current = &c;
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return cmd_version(&c, 1, argv);
    int at = parse_globals(&c, argc, argv);
    if (at == -CLI_OK - 100)
        return CLI_OK;
    if (at < 0) {
        write_json_error();
        return -at;
    }
    if (at >= argc) {
        fputs(usage_text, stderr);
        return CLI_USAGE;
    }
    const char *name = argv[at];
    int rc = -1;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            c.cmd = commands[i].name;
            rc = commands[i].fn(&c, argc - at, argv + at);
            break;
        }
    }
    if (rc == -1)
        rc = cli_usage(&c, "unknown command '%s'", name);
    write_json_error();
    skv_client_free(c.client);
    skv_auth_wipe(c.secret_key, sizeof c.secret_key);
    if (fflush(stdout) != 0 && rc == CLI_OK)
        rc = cli_fail("writing the output failed");
    return rc;
}
