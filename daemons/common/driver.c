/* The tick/stop plumbing shared by sokovan-manager and sokovan-agent.
 * SPDX-License-Identifier: Apache-2.0 */
#include "driver.h"

static void timer_cb(uv_timer_t *t);

static void tick(skvd_driver *d)
{
    skv_error e = SKV_ERROR_INIT;
    d->dirty = false;
    if (d->net.stopping || !d->obj)
        return;
    if (d->tick(d->obj, skvd_now_ms(), &e))
        skvd_log(SKV_LOG_WARN, "tick: %s", e.message);
    skvd_timer_arm(&d->timer, timer_cb, d->next(d->obj, skvd_now_ms()),
                   d->max_ms);
}

static void timer_cb(uv_timer_t *t)
{
    tick(t->data);
}

static void check_cb(uv_check_t *h)
{
    skvd_driver *d = h->data;
    if (d->dirty)
        tick(d);
}

int skvd_driver_init(skvd_driver *d, uv_loop_t *loop, const skvd_net_cbs *cbs,
                     void *ctx, size_t max_frame, size_t max_queue,
                     int64_t max_ms)
{
    skvd_net_init(&d->net, loop, cbs, ctx, max_frame, max_queue);
    uv_timer_init(loop, &d->timer);
    uv_check_init(loop, &d->check);
    skvd_metrics_init(&d->metrics, loop);
    d->timer.data = d->check.data = d;
    d->max_ms = max_ms;
    uv_check_start(&d->check, check_cb);
    if (skvd_signals_start(loop, skvd_driver_stop, d)) {
        skvd_log(SKV_LOG_ERROR, "cannot install signal handlers");
        return -1;
    }
    return 0;
}

void skvd_driver_bind(skvd_driver *d, skvd_tick_fn tick_fn,
                      skvd_next_fn next, void *obj)
{
    d->tick = tick_fn;
    d->next = next;
    d->obj = obj;
    tick(d);
}

void skvd_driver_stop(void *driver)
{
    skvd_driver *d = driver;
    if (d->net.stopping)
        return;
    skvd_net_stop(&d->net);
    uv_close((uv_handle_t *)&d->timer, NULL);
    uv_close((uv_handle_t *)&d->check, NULL);
    skvd_metrics_close(&d->metrics);
    skvd_signals_close();
}
