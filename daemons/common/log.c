/* The daemons' logger: library lines and the daemon's own, one per line on
 * stderr with a UTC timestamp, so journald or a redirect keeps them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "skvd.h"

static const char *g_prog = "sokovan";
static skv_log_level g_level = SKV_LOG_INFO;

int64_t skvd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "YYYY-MM-DDTHH:MM:SS" of the second in `sec`, formatted once per
 * second: the manager logs several lines per session, thousands a
 * second, and gmtime_r + strftime per line showed in its profile. Per
 * thread: the agent's creator threads log too. */
static const char *stamp_of(time_t sec)
{
    static _Thread_local time_t cached = (time_t)-1;
    static _Thread_local char stamp[32];
    if (sec != cached) {
        struct tm tm;
        gmtime_r(&sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        cached = sec;
    }
    return stamp;
}

static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n > cap - at)
        n = cap - at;
    memcpy(buf + at, s, n);
    return at + n;
}

static void write_all(const char *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = write(STDERR_FILENO, p + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;    /* nowhere to log that logging failed */
        off += (size_t)w;
    }
}

/* The line is assembled by copying its parts (the message is formatted
 * already) and written with one write(2): stderr is unbuffered and one
 * write keeps lines whole when several processes share the file. */
static void log_line(skv_log_level level, const char *module, const char *msg)
{
    struct timespec ts;
    char line[1200];
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t n = put(line, 0, sizeof(line) - 1, stamp_of(ts.tv_sec));
    int ms = (int)(ts.tv_nsec / 1000000);
    char frac[7] = {'.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10),
                    (char)('0' + ms % 10), 'Z', ' ', 0};
    n = put(line, n, sizeof(line) - 1, frac);
    n = put(line, n, sizeof(line) - 1, skv_log_level_name(level));
    n = put(line, n, sizeof(line) - 1, " ");
    n = put(line, n, sizeof(line) - 1, module);
    n = put(line, n, sizeof(line) - 1, ": ");
    n = put(line, n, sizeof(line) - 1, msg);
    line[n++] = '\n';
    write_all(line, n);
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
