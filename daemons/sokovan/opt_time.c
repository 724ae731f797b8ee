/* Points in time on the command line (--not-before): relative to now
 * ("+30m"), Unix seconds ("@1795000000") or a calendar time
 * ("2026-11-26T18:00", seconds optional; "Z" at the end for UTC, else the
 * local time zone). Parsed with strptime/timegm/mktime, not by hand.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int epoch(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || errno || *end ||
        v > INT64_MAX / 1000)
        return -1;
    *out = (int64_t)v * 1000;
    return 0;
}

/* The calendar forms; "T" or a space between date and time. */
static int calendar(const char *text, int64_t *out)
{
    static const char *const forms[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M",
                                        "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct tm tm = {0};
        const char *end = strptime(text, forms[i], &tm);
        if (!end || (*end && strcmp(end, "Z") != 0))
            continue;
        tm.tm_isdst = -1;
        time_t t = *end ? timegm(&tm) : mktime(&tm);
        if (t == (time_t)-1)
            return -1;
        *out = (int64_t)t * 1000;
        return 0;
    }
    return -1;
}

int cli_parse_time(const cli *c, const char *opt, const char *text,
                   int64_t *out)
{
    uint64_t d;
    if (text[0] == '+') {
        if (cli_parse_duration(c, opt, text + 1, &d))
            return CLI_USAGE;
        if (d > (uint64_t)(INT64_MAX - cli_now_ms()))
            return cli_usage(c, "%s: '%s' is too far away", opt, text);
        *out = cli_now_ms() + (int64_t)d;
        return 0;
    }
    if (text[0] == '@' ? epoch(text + 1, out) == 0 : calendar(text, out) == 0)
        return *out > 0 ? 0 : cli_usage(c, "%s: '%s' is before 1970", opt,
                                        text);
    return cli_usage(c, "%s: '%s' is not a time (e.g. +30m, "
                     "2026-11-26T18:00, 2026-11-26T18:00:00Z, @1795000000)",
                     opt, text);
}
