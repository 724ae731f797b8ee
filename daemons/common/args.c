/* Command-line flags. Every configuration key of a program's section is
 * also a flag (key data_dir <-> --data-dir); flags override the file given
 * with --config whatever their order on the line.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skvd.h"

typedef struct flag_ctx {
    skvd_role role;
    const char *prog;
    const char *config;
    bool help, version;
} flag_ctx;

static void usage(FILE *f, const flag_ctx *x, const char *summary)
{
    fprintf(f, "usage: %s [--config FILE] [OPTIONS]\n%s\n\n"
            "  %-34s %s\n", x->prog, summary, "--config FILE",
            "INI file with [manager] and/or [agent] sections "
            "(see docs/config.md)");
    skvd_config_print_flags(f, x->role);
    fprintf(f, "  %-34s %s\n  %-34s %s\n"
            "Flags override the config file. Exit codes: 0 ok, 1 failure, "
            "2 bad usage or configuration.\n",
            "--help", "this text", "--version", "print the version");
}

/* Splits "--flag=value" / "--flag value" into name and value; *i
 * advances past a separate value. Returns 0, or -1 after printing what is
 * wrong (an unknown flag is named before a missing value is). */
static int flag_value(const char **name, const char **value, char *namebuf,
                      size_t nb, int *i, int argc, char **argv,
                      const flag_ctx *x)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    *name = arg;
    if (eq && strncmp(arg, "--", 2) == 0) {
        snprintf(namebuf, nb, "%.*s", (int)(eq - arg), arg);
        *name = namebuf;
    }
    if (strcmp(*name, "--config") != 0 &&
        !skvd_config_find_flag(*name, x->role)) {
        fprintf(stderr, "%s: unknown option '%s' (try --help)\n", x->prog,
                *name);
        return -1;
    }
    if (*name == namebuf) {
        *value = eq + 1;
        return 0;
    }
    if (skvd_config_is_switch(skvd_config_find_flag(*name, x->role))) {
        *value = "1";
        return 0;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", x->prog, arg);
        return -1;
    }
    *value = argv[++*i];
    return 0;
}

/* One pass over argv. apply=false: syntax, --config, --help, --version;
 * apply=true: store the values into c. */
static int scan(skvd_config *c, flag_ctx *x, bool apply, int argc,
                char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *name, *value;
        char namebuf[128], why[320];
        /* `help` and `version` as a first word too, like the CLI's. */
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 ||
            (i == 1 && strcmp(arg, "help") == 0)) {
            x->help = true;
            continue;
        }
        if (strcmp(arg, "--version") == 0 ||
            (i == 1 && strcmp(arg, "version") == 0)) {
            x->version = true;
            continue;
        }
        if (flag_value(&name, &value, namebuf, sizeof(namebuf), &i, argc,
                       argv, x))
            return -1;
        if (strcmp(name, "--config") == 0) {
            if (!value[0]) {
                fprintf(stderr, "%s: --config: empty file name\n", x->prog);
                return -1;
            }
            x->config = value;
            continue;
        }
        const skvd_key *k = skvd_config_find_flag(name, x->role);
        if (apply && skvd_config_set(c, k, value, why, sizeof(why))) {
            fprintf(stderr, "%s: %s: %s\n", x->prog, name, why);
            return -1;
        }
    }
    return 0;
}

int skvd_args_parse(skvd_config *c, skvd_role role, const char *prog,
                    const char *summary, int argc, char **argv)
{
    flag_ctx x = {role, prog, NULL, false, false};
    char why[320];
    if (scan(c, &x, false, argc, argv))
        return SKVD_EXIT_USAGE;
    if (x.help) {
        usage(stdout, &x, summary);
        return SKVD_EXIT_OK;
    }
    if (x.version) {
        printf("%s %s (libsokovan %s)\n", prog, SKVD_VERSION,
               skv_version_string());
        return SKVD_EXIT_OK;
    }
    if (x.config && skvd_config_load(c, x.config))
        return SKVD_EXIT_USAGE;
    if (scan(c, &x, true, argc, argv))
        return SKVD_EXIT_USAGE;
    if (skvd_config_finish(c, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", prog, why);
        return SKVD_EXIT_USAGE;
    }
    return -1;
}
