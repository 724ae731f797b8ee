/* Loop plumbing: stop signals, timers, draining the loop at exit.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>

#include "skvd.h"

static uv_signal_t g_sigint, g_sigterm;
static void (*g_stop)(void *ctx);
static void *g_stop_ctx;
static bool g_started;

static void on_signal(uv_signal_t *s, int signum)
{
    (void)s;
    skvd_log(SKV_LOG_INFO, "%s: stopping", signum == SIGINT ? "SIGINT"
                                                             : "SIGTERM");
    if (g_stop) {
        void (*stop)(void *) = g_stop;
        g_stop = NULL; /* once; a second signal finds the loop stopping */
        stop(g_stop_ctx);
    }
}

int skvd_signals_start(uv_loop_t *loop, void (*stop)(void *ctx), void *ctx)
{
    /* A peer closing its socket must be a write error, not our death. */
    signal(SIGPIPE, SIG_IGN);
    g_stop = stop;
    g_stop_ctx = ctx;
    if (uv_signal_init(loop, &g_sigint) || uv_signal_init(loop, &g_sigterm))
        return -1;
    g_started = true;
    if (uv_signal_start(&g_sigint, on_signal, SIGINT) ||
        uv_signal_start(&g_sigterm, on_signal, SIGTERM))
        return -1;
    return 0;
}

void skvd_signals_close(void)
{
    if (!g_started)
        return;
    g_started = false;
    uv_close((uv_handle_t *)&g_sigint, NULL);
    uv_close((uv_handle_t *)&g_sigterm, NULL);
}

void skvd_timer_arm(uv_timer_t *t, uv_timer_cb cb, int64_t delay_ms,
                    int64_t max_ms)
{
    if (delay_ms < 0)
        delay_ms = 0;
    if (delay_ms > max_ms)
        delay_ms = max_ms;
    uv_timer_start(t, cb, (uint64_t)delay_ms, 0);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

void skvd_loop_drain(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    /* Anything still open is a handle nobody owns any more. */
    uv_walk(loop, close_any, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
}
