/* Reading the INI configuration file with libinih. A line reader wrapped
 * around fgets counts lines, so every problem is reported as
 * "file:line: key: reason", and sees section headers, so an unknown (even
 * empty) section is refused too.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <string.h>

#include "skvd.h"

typedef struct load_ctx {
    skvd_config *c;
    const char *path;
    FILE *f;
    int line;
    int errors;
    bool midline;   /* the last chunk fgets gave did not end a line */
} load_ctx;

static bool known_section(const char *name, size_t n)
{
    return (n == 7 && strncmp(name, "manager", 7) == 0) ||
           (n == 5 && strncmp(name, "agent", 5) == 0);
}

static void check_header(load_ctx *x, const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s != '[')
        return;
    const char *end = strchr(s, ']');
    if (!end)
        return; /* inih reports the malformed line */
    s++;
    while (s < end && isspace((unsigned char)*s))
        s++;
    size_t n = (size_t)(end - s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!known_section(s, n)) {
        fprintf(stderr, "%s:%d: [%.*s]: unknown section (known: manager, "
                "agent)\n", x->path, x->line, (int)n, s);
        x->errors++;
    }
}

static char *reader(char *str, int num, void *stream)
{
    load_ctx *x = stream;
    char *r = fgets(str, num, x->f);
    if (r) {
        /* inih reads at most its line limit per call: count real lines. */
        if (!x->midline) {
            x->line++;
            check_header(x, r);
        }
        size_t n = strlen(r);
        x->midline = n > 0 && r[n - 1] != '\n';
    }
    return r;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    load_ctx *x = user;
    char why[320];
    if (!section[0]) {
        fprintf(stderr, "%s:%d: %s: key outside a section ([manager] or "
                "[agent])\n", x->path, x->line, name);
        x->errors++;
        return 1;
    }
    if (!known_section(section, strlen(section)))
        return 1; /* already reported at its header */
    const skvd_key *k = skvd_config_find(section, name);
    if (!k) {
        fprintf(stderr, "%s:%d: %s: unknown key in [%s]\n", x->path, x->line,
                name, section);
        x->errors++;
    } else if (skvd_config_is_switch(k)) {
        fprintf(stderr, "%s:%d: %s: a command-line switch (--%s), not a "
                "config key\n", x->path, x->line, name, name);
        x->errors++;
    } else if (skvd_config_set(x->c, k, value, why, sizeof(why))) {
        fprintf(stderr, "%s:%d: %s: %s\n", x->path, x->line, name, why);
        x->errors++;
    }
    return 1; /* keep going: report every problem of the file at once */
}

int skvd_config_load(skvd_config *c, const char *path)
{
    load_ctx x = {c, path, NULL, 0, 0, false};
    if (!(x.f = fopen(path, "r"))) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = ini_parse_stream(reader, &x, handler, &x);
    fclose(x.f);
    if (rc > 0) {
        /* The handler never fails: inih found a syntax error. */
        fprintf(stderr, "%s:%d: syntax error (expected [section], "
                "key = value or a comment; lines up to 200 bytes)\n",
                path, rc);
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "%s: cannot parse (error %d)\n", path, rc);
        return -1;
    }
    return x.errors ? -1 : 0;
}
