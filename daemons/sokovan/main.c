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
    "  admin user|keypair|project|domain|policy|group\n"
    "        create|update|delete|list ... manage the cluster (admin --help)\n"
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
    "\n"
    "Exit codes: 0 ok, 1 request failed, 2 usage error; run --wait exits with\n"
    "the session's exit code.\n";

int cli_usage(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sokovan: %s%s", c && c->cmd ? c->cmd : "",
            c && c->cmd ? ": " : "");
    cli_vprint_clean(stderr, fmt, ap);  /* it may echo what was typed */
    va_end(ap);
    fprintf(stderr, "\nTry 'sokovan %s%s--help'.\n", c && c->cmd ? c->cmd : "",
            c && c->cmd ? " " : "");
    return CLI_USAGE;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sokovan: ", stderr);
    cli_vprint_clean(stderr, fmt, ap);  /* names, the manager's words */
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_fail_err(const char *what, int rc, const skv_error *e)
{
    return cli_fail("%s: %s (%s)", what,
                    e && e->message[0] ? e->message : skv_strerror(rc),
                    skv_err_name(rc));
}

typedef struct cli_command {
    const char *name;
    int (*fn)(cli *c, int argc, char **argv);
} cli_command;

static const cli_command commands[] = {
    {"run", cli_cmd_run},         {"ps", cli_cmd_ps},
    {"show", cli_cmd_show},       {"logs", cli_cmd_logs},
    {"terminate", cli_cmd_terminate}, {"agents", cli_cmd_agents},
    {"images", cli_cmd_images},   {"admin", cli_cmd_admin},
};

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
    int at = parse_globals(&c, argc, argv);
    if (at == -CLI_OK - 100)
        return CLI_OK;
    if (at < 0)
        return -at;
    if (at >= argc) {
        fputs(usage_text, stderr);
        return CLI_USAGE;
    }
    const char *name = argv[at];
    int rc = -1;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            c.cmd = commands[i].name;
            rc = commands[i].fn(&c, argc - at, argv + at);
            break;
        }
    }
    if (rc == -1)
        rc = cli_usage(&c, "unknown command '%s'", name);
    skv_client_free(c.client);
    skv_auth_wipe(c.secret_key, sizeof c.secret_key);
    if (fflush(stdout) != 0 && rc == CLI_OK)
        rc = cli_fail("writing the output failed");
    return rc;
}
