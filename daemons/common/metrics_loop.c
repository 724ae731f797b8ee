/* The daemons' metrics loop: a 1 s timer that collects, renders and
 * publishes (see metrics_loop.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "metrics_loop.h"
#include "skvd.h"

void skvd_metrics_init(skvd_metrics *x, uv_loop_t *loop)
{
    memset(x, 0, sizeof(*x));
    uv_timer_init(loop, &x->timer);
    x->timer.data = x;
}

void skvd_metrics_refresh(skvd_metrics *x)
{
    skv_error e = SKV_ERROR_INIT;
    if (!x->http)
        return;
    int rc = x->collect(x->obj, x->reg, skvd_now_ms(), &e);
    if (rc == 0)
        rc = skvd_metrics_http_publish(x->http, x->reg, &e);
    /* Scrapers keep the last good snapshot; say so once, not every second. */
    if (rc && !x->warned)
        skvd_log(SKV_LOG_WARN, "metrics not updated: %s", e.message);
    x->warned = rc != 0;
}

static void timer_cb(uv_timer_t *t)
{
    skvd_metrics_refresh(t->data);
}

int skvd_metrics_start(skvd_metrics *x, const char *listen,
                       skvd_collect_fn collect, void *obj)
{
    skv_error e = SKV_ERROR_INIT;
    if (!listen)
        return 0;
    x->collect = collect;
    x->obj = obj;
    if (skv_metrics_new(&x->reg, &e) ||
        skvd_metrics_http_start(&x->http, listen, &e)) {
        skvd_log(SKV_LOG_ERROR, "metrics_listen %s: %s", listen, e.message);
        return -1;
    }
    /* The first snapshot before the port is announced: whoever reads the
     * log line finds /metrics ready (not 503 "no metrics yet"). */
    skvd_metrics_refresh(x);
    skvd_log(SKV_LOG_INFO, "serving metrics on %s (port %u) at /metrics",
             listen, (unsigned)skvd_metrics_http_port(x->http));
    uv_timer_start(&x->timer, timer_cb, SKVD_METRICS_PERIOD_MS,
                   SKVD_METRICS_PERIOD_MS);
    return 0;
}

void skvd_metrics_close(skvd_metrics *x)
{
    if (!uv_is_closing((uv_handle_t *)&x->timer))
        uv_close((uv_handle_t *)&x->timer, NULL);
}

void skvd_metrics_release(skvd_metrics *x)
{
    skvd_metrics_http_stop(x->http);   /* no scrape reads after this */
    x->http = NULL;
    skv_metrics_free(x->reg);
    x->reg = NULL;
}
