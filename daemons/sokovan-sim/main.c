/* sokovan-sim: replay traces against a simulated cluster through the real
 * libsokovan scheduler. See docs/simulator.md.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: sokovan-sim openb --nodes NODES.csv --pods PODS.csv [--pods ...]\n"
        "                         [--policy NAME|all] [--seeds 42-51] [--jobs N]\n"
        "                         [--config K=V;...] [--vary [NAME:]SPEC ...]\n"
        "                         [--vary-seed N] [--json]\n"
        "       sokovan-sim openb-gen --nodes NODES.csv --pods PODS.csv --vary SPEC\n"
        "                         [--seed N] --out FILE\n"
        "       sokovan-sim trace --jobs FILE (--cluster \"N nodes like X.xml\" |\n"
        "                         --nodes NODES.csv) [--policy NAME] [--sequencer NAME]\n"
        "                         [--seed N] [--limit N] [--cpu-per-gpu C]\n"
        "                         [--mem-per-gpu BYTES] [--reservations N]\n"
        "                         [--strict-fifo] [--full-walk] [--json]\n"
        "       sokovan-sim policies\n");
}

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sim_json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int parse_u64(uint64_t *out, const char *s, char **end)
{
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    *out = strtoull(s, end, 10);
    return errno ? -1 : 0;
}

int sim_parse_seeds(uint64_t **out, size_t *n, const char *text)
{
    uint64_t a, b;
    char *e;
    *out = NULL;
    *n = 0;
    if (parse_u64(&a, text, &e) < 0)
        return -1;
    if (*e == '-') {
        if (parse_u64(&b, e + 1, &e) < 0 || *e || b < a || b - a > 100000)
            return -1;
        *out = calloc(b - a + 1, sizeof(**out));
        for (uint64_t s = a; *out && s <= b; s++)
            (*out)[(*n)++] = s;
        return *out ? 0 : -1;
    }
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    *out = calloc(cap, sizeof(**out));
    if (!*out)
        return -1;
    for (const char *p = text;;) {
        if (parse_u64(&a, p, &e) < 0 || (*e && *e != ',')) {
            free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[(*n)++] = a;
        if (!*e)
            return 0;
        p = e + 1;
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--version") == 0 ||
                      strcmp(argv[1], "version") == 0)) {
        printf("sokovan-sim %s (libsokovan %s)\n", SKV_VERSION_STRING,
               skv_version_string());
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* `sokovan-sim COMMAND --help` is the usage too (docs/cli.md: every
     * program answers --help on stdout with exit 0); the commands' own
     * parsers took it for an option without its value. */
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
    if (strcmp(argv[1], "openb") == 0)
        return sim_openb_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "openb-gen") == 0)
        return sim_openb_gen_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "trace") == 0)
        return sim_trace_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "policies") == 0) {
        for (size_t i = 0; i < skv_sim_policy_count(); i++)
            printf("%s\n", skv_sim_policy_name(i));
        printf("concentrated\ndispersed\nroundrobin\n");
        return 0;
    }
    fprintf(stderr, "sokovan-sim: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
