/* The logger hook: the library never prints, it hands lines to the host.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "skv_internal.h"

static skv_log_fn log_fn;
static void *log_payload;
static skv_log_level log_min = SKV_LOG_INFO;

void skv_set_logger(skv_log_fn fn, skv_log_level min_level, void *payload)
{
    log_fn = fn;
    log_payload = payload;
    log_min = min_level;
}

const char *skv_log_level_name(skv_log_level level)
{
    switch (level) {
    case SKV_LOG_TRACE: return "trace";
    case SKV_LOG_DEBUG: return "debug";
    case SKV_LOG_INFO: return "info";
    case SKV_LOG_WARN: return "warn";
    case SKV_LOG_ERROR: return "error";
    }
    return "unknown";
}

bool skv__log_enabled(skv_log_level level)
{
    return log_fn != NULL && level >= log_min;
}

void skv__log(skv_log_level level, const char *module, const char *fmt, ...)
{
    if (!skv__log_enabled(level))
        return;
    /* Format on the stack: logging must work when allocation does not. */
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    log_fn(level, module, line, log_payload);
}
