/* Command-line parsing: "--name value", "--name=value", "--" and the
 * global options every command accepts; strict value parsers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { G_ENDPOINT = 1000, G_KEYFILE, G_JSON, G_TIMEOUT, G_TLS_CA,
       G_TLS_PIN };

static const cli_opt global_opts[] = {
    {"endpoint", 1, G_ENDPOINT}, {"key-file", 1, G_KEYFILE},
    {"json", 0, G_JSON},         {"timeout", 1, G_TIMEOUT},
    {"tls-ca", 1, G_TLS_CA},     {"tls-pin", 1, G_TLS_PIN},
    {NULL, 0, 0}};

void cli_parser_init(cli_parser *p, cli *c, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
}

static const cli_opt *find_opt(const cli_opt *opts, const char *name,
                               size_t len)
{
    for (const cli_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static int apply_global(cli_parser *p, int id, const char *val)
{
    cli *c = p->c;
    uint32_t ms;
    switch (id) {
    case G_ENDPOINT:
        if (!val[0])
            return cli_usage(c, "--endpoint needs a value");
        c->endpoint = val;
        c->endpoint_from = "--endpoint";
        return 0;
    case G_KEYFILE:
        if (!val[0])
            return cli_usage(c, "--key-file needs a value");
        c->key_file = val;
        return 0;
    case G_JSON:
        c->json = 1;
        return 0;
    case G_TLS_CA:
        if (!val[0])
            return cli_usage(c, "--tls-ca needs a value");
        c->tls_ca = val;
        return 0;
    case G_TLS_PIN:
        if (!val[0])
            return cli_usage(c, "--tls-pin needs a value");
        c->tls_pin = val;
        return 0;
    default:
        if (cli_parse_u32(c, "--timeout", val, 1, 86400000, &ms))
            return CLI_USAGE;
        c->timeout_ms = (int)ms;
        return 0;
    }
}

/* An argument starting with "--" (not "--" itself). */
static int long_opt(cli_parser *p, const cli_opt *opts, const char **val)
{
    const char *arg = p->argv[p->i++] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len == 4 && strncmp(arg, "help", 4) == 0)
        return CLI_OPT_HELP;
    const cli_opt *o = find_opt(opts, arg, len);
    int global = 0;
    if (!o) {
        o = find_opt(global_opts, arg, len);
        global = 1;
    }
    if (!o) {
        cli_usage(p->c, "unknown option '--%.*s'", (int)len, arg);
        return CLI_OPT_ERR;
    }
    *val = NULL;
    if (o->has_arg && eq) {
        *val = eq + 1;
    } else if (o->has_arg) {
        if (p->i >= p->argc) {
            cli_usage(p->c, "option '--%s' needs a value", o->name);
            return CLI_OPT_ERR;
        }
        *val = p->argv[p->i++];
    } else if (eq) {
        cli_usage(p->c, "option '--%s' takes no value", o->name);
        return CLI_OPT_ERR;
    }
    if (!global)
        return o->id;
    return apply_global(p, o->id, *val) ? CLI_OPT_ERR : 0;
}

int cli_next(cli_parser *p, const cli_opt *opts, const char **val)
{
    for (;;) {
        if (p->i >= p->argc)
            return CLI_OPT_END;
        const char *arg = p->argv[p->i];
        if (p->rest || arg[0] != '-' || strcmp(arg, "-") == 0) {
            *val = arg;
            p->i++;
            return CLI_OPT_POS;
        }
        if (strcmp(arg, "--") == 0) {
            p->rest = 1;
            p->saw_dashdash = 1;
            p->i++;
            continue;
        }
        if (strcmp(arg, "-h") == 0) {
            p->i++;
            return CLI_OPT_HELP;
        }
        if (arg[1] != '-' && arg[2] == 0)
            for (const cli_opt *o = opts; o && o->name; o++)
                if (o->short_name == arg[1]) {
                    p->i++;
                    if (o->has_arg && p->i >= p->argc) {
                        cli_usage(p->c, "option '%s' needs a value", arg);
                        return CLI_OPT_ERR;
                    }
                    *val = o->has_arg ? p->argv[p->i++] : NULL;
                    return o->id;
                }
        if (arg[1] != '-') {
            cli_usage(p->c, "unknown option '%s' (options are --long)", arg);
            return CLI_OPT_ERR;
        }
        int id = long_opt(p, opts, val);
        if (id != 0)
            return id;          /* 0: a global option, already applied */
    }
}

int cli_parse_u32(const cli *c, const char *opt, const char *text,
                  uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end || errno || v < min ||
        v > max)
        return cli_usage(c, "%s: '%s' is not a whole number in %u..%u", opt,
                         text, min, max);
    *out = (uint32_t)v;
    return 0;
}

int cli_parse_i32(const cli *c, const char *opt, const char *text,
                  int32_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!text[0] || isspace((unsigned char)text[0]) || *end || errno ||
        v < INT32_MIN || v > INT32_MAX)
        return cli_usage(c, "%s: '%s' is not an integer", opt, text);
    *out = (int32_t)v;
    return 0;
}

int cli_parse_qty(const cli *c, const char *opt, const char *text,
                  skv_slot_kind kind, skv_qty *out)
{
    skv_error e = SKV_ERROR_INIT;
    skv_qty q;
    if (skv_qty_parse(&q, text, kind, &e))
        return cli_usage(c, "%s: %s", opt, e.message);
    if (q <= 0 || q == SKV_QTY_UNLIMITED)
        return cli_usage(c, "%s: '%s' must be a positive amount", opt, text);
    *out = q;
    return 0;
}

int cli_parse_duration(const cli *c, const char *opt, const char *text,
                       uint64_t *out)
{
    static const struct { const char *suffix; uint64_t mul; } units[] = {
        {"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000},
        {"d", 86400000}};
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (isdigit((unsigned char)text[0]) && !errno) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(end, units[i].suffix) == 0 &&
                v <= UINT64_MAX / units[i].mul) {
                *out = v * units[i].mul;
                return 0;
            }
        }
    }
    return cli_usage(c, "%s: '%s' is not a duration (e.g. 1500, 30s, 5m, 2h, "
                     "1d)", opt, text);
}

int cli_parse_word(const cli *c, const char *opt, const char *text,
                   const char *const *words)
{
    char list[256] = "";
    for (const char *const *w = words; *w; w++) {
        if (strcmp(*w, text) == 0)
            return 0;
        strncat(list, *w, sizeof list - strlen(list) - 1);
        if (w[1])
            strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return cli_usage(c, "%s: '%s' is not one of %s", opt, text, list);
}

int cli_strv_push(cli_strv *s, const char *str)
{
    char **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v)
        return cli_fail("out of memory");
    v[s->n++] = (char *)str;
    s->v = v;
    return 0;
}

void cli_strv_free(cli_strv *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
