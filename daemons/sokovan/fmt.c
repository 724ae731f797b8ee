/* Human formatting of quantities, slot vectors, times and sizes, and the
 * clock helpers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cli.h"

skv_slot_kind cli_slot_kind(const char *slot)
{
    size_t n = slot ? strlen(slot) : 0;
    if ((n == 3 && strcmp(slot, "mem") == 0) ||
        (n > 4 && strcmp(slot + n - 4, ".mem") == 0))
        return SKV_SLOT_BYTES;
    return SKV_SLOT_COUNT;
}

const char *cli_fmt_qty(char *buf, size_t n, const char *slot, skv_qty q)
{
    if (skv_qty_format(buf, n, q, cli_slot_kind(slot)) < 0)
        snprintf(buf, n, "%" PRId64, q);
    return buf;
}

const char *cli_fmt_slots(char *buf, size_t n, const skv_slots *s)
{
    char *text = NULL;
    if (!s || skv_slots_count(s) == 0 || skv_slots_format(&text, s, NULL)) {
        snprintf(buf, n, "-");
        return buf;
    }
    snprintf(buf, n, "%s", text);
    skv_free(text);
    return buf;
}

const char *cli_fmt_time(char *buf, size_t n, int64_t ms)
{
    if (ms <= 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", base, (int)(ms % 1000));
    return buf;
}

const char *cli_fmt_span(char *buf, size_t n, int64_t span_ms)
{
    int64_t s = span_ms / 1000;
    if (s < 0)
        s = 0;
    if (s < 120)
        snprintf(buf, n, "%" PRId64 "s", s);
    else if (s < 7200)
        snprintf(buf, n, "%" PRId64 "m", s / 60);
    else if (s < 172800)
        snprintf(buf, n, "%" PRId64 "h", s / 3600);
    else
        snprintf(buf, n, "%" PRId64 "d", s / 86400);
    return buf;
}

const char *cli_fmt_age(char *buf, size_t n, int64_t ms)
{
    if (ms <= 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    return cli_fmt_span(buf, n, cli_now_ms() - ms);
}

const char *cli_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    static const char units[] = "BKMGTPE";
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 "B", bytes);
    else
        snprintf(buf, n, "%.1f%ciB", v, units[u]);
    return buf;
}

int64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
