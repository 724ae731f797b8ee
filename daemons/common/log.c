/* The daemons' logger: library lines and the daemon's own, one per line on
 * stderr with a UTC timestamp, so journald or a redirect keeps them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "skvd.h"

static const char *g_prog = "sokovan";
static skv_log_level g_level = SKV_LOG_INFO;

int64_t skvd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void log_line(skv_log_level level, const char *module, const char *msg)
{
    struct timespec ts;
    struct tm tm;
    char stamp[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    /* One fprintf per line: stderr is unbuffered, lines stay whole. */
    fprintf(stderr, "%s.%03ldZ %s %s: %s\n", stamp, ts.tv_nsec / 1000000,
            skv_log_level_name(level), module, msg);
}

static void lib_logger(skv_log_level level, const char *module,
                       const char *msg, void *payload)
{
    (void)payload;
    log_line(level, module, msg);
}

void skvd_log_init(const char *prog, skv_log_level level)
{
    g_prog = prog;
    g_level = level;
    skv_set_logger(lib_logger, level, NULL);
}

void skvd_log(skv_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    if (level < g_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_line(level, g_prog, msg);
}

int skvd_log_level_parse(skv_log_level *out, const char *text)
{
    static const struct { const char *name; skv_log_level level; } t[] = {
        {"trace", SKV_LOG_TRACE}, {"debug", SKV_LOG_DEBUG},
        {"info", SKV_LOG_INFO},   {"warn", SKV_LOG_WARN},
        {"warning", SKV_LOG_WARN}, {"error", SKV_LOG_ERROR},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (strcasecmp(text, t[i].name) == 0) {
            *out = t[i].level;
            return 0;
        }
    }
    return -1;
}
