/* sokovan exec SESSION [--kernel K] [-i] [-t] -- CMD... and sokovan shell
 * SESSION: the command line; the stream is exec_loop.c's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "exec.h"

enum { X_KERNEL = 1, X_INTERACTIVE, X_TTY };

static const char exec_usage[] =
    "usage: sokovan exec SESSION [--kernel K] [-i] [-t] [--] CMD [ARG...]\n"
    "Run CMD inside a running kernel of SESSION (the main kernel unless\n"
    "--kernel), with the kernel's namespaces, cgroup, seccomp filter,\n"
    "capabilities, user and environment.\n"
    "  -i, --interactive  forward stdin (otherwise the command's stdin is\n"
    "                     closed)\n"
    "  -t, --tty          a pseudo-terminal; the local terminal is put in\n"
    "                     raw mode and its size changes follow\n"
    "  -it                both\n"
    "sokovan exits with the command's exit code (128 + N when signal N\n"
    "ended it).";

static const char shell_usage[] =
    "usage: sokovan shell SESSION [--kernel K]\n"
    "An interactive shell in SESSION's kernel: exec -it of the image's shell\n"
    "($SHELL of the kernel's environment, else /bin/bash, else /bin/sh).";

static const cli_opt exec_opts[] = {
    {"kernel", 1, X_KERNEL, 0},
    {"interactive", 0, X_INTERACTIVE, 'i'},
    {"tty", 0, X_TTY, 't'},
    {NULL, 0, 0, 0}};

/* "-it" / "-ti": both flags in one word. */
static int combined(cli_parser *p, cli_exec *x)
{
    const char *a = p->i < p->argc && !p->rest ? p->argv[p->i] : "";
    if (strcmp(a, "-it") != 0 && strcmp(a, "-ti") != 0)
        return 0;
    x->interactive = x->tty = 1;
    p->i++;
    return 1;
}

/* A positional word: the session, then the command (everything after
 * it is the command's, options included). */
static int positional(cli *c, cli_parser *p, cli_exec *x, cli_strv *cmd,
                      const char *val)
{
    if (!x->session_id) {
        if (!val[0])
            return cli_usage(c, "the session ID is empty");
        x->session_id = val;
        return 0;
    }
    p->rest = 1;
    return cli_strv_push(cmd, val) ? CLI_FAIL : 0;
}

static int parse(cli *c, int argc, char **argv, cli_exec *x, cli_strv *cmd,
                 const char *usage)
{
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    int rc = 0, id;
    const char *val;
    while (!rc && !combined(&p, x) &&
           (id = cli_next(&p, exec_opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts(usage);
            return -1;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = positional(c, &p, x, cmd, val);
        else if (id == X_KERNEL && !val[0])
            rc = cli_usage(c, "--kernel needs a value");
        else if (id == X_KERNEL)
            x->kernel_id = val;
        else if (id == X_INTERACTIVE)
            x->interactive = 1;
        else if (id == X_TTY)
            x->tty = 1;
    }
    if (!rc && !x->session_id)
        rc = cli_usage(c, "missing SESSION");
    return rc;
}

int cli_cmd_exec(cli *c, int argc, char **argv)
{
    cli_exec x;
    memset(&x, 0, sizeof x);
    cli_strv cmd = {0};
    int rc = parse(c, argc, argv, &x, &cmd, exec_usage);
    if (!rc && cmd.n == 0)
        rc = cli_usage(c, "missing the command to run (sokovan exec %s -- "
                       "CMD...)", x.session_id);
    if (!rc) {
        x.argv = cmd.v;
        x.argc = cmd.n;
        rc = cli_exec_run(c, &x);
    }
    cli_strv_free(&cmd);
    return rc < 0 ? CLI_OK : rc;
}

/* The image's shell: the kernel's $SHELL when it runs, else bash, else
 * sh (every image sokovan runs has /bin/sh). */
static char *const shell_argv[] = {
    "/bin/sh", "-c",
    "for s in \"$SHELL\" /bin/bash; do "
    "if [ -n \"$s\" ] && [ -x \"$s\" ]; then exec \"$s\" -i; fi; done; "
    "exec /bin/sh -i",
    NULL};

int cli_cmd_shell(cli *c, int argc, char **argv)
{
    cli_exec x;
    memset(&x, 0, sizeof x);
    cli_strv cmd = {0};
    int rc = parse(c, argc, argv, &x, &cmd, shell_usage);
    if (!rc && cmd.n)
        rc = cli_usage(c, "takes no command (use sokovan exec -it SESSION "
                       "-- CMD)");
    if (!rc) {
        x.argv = (char **)shell_argv;
        x.argc = 3;
        x.interactive = x.tty = 1;
        rc = cli_exec_run(c, &x);
    }
    cli_strv_free(&cmd);
    return rc < 0 ? CLI_OK : rc;
}
