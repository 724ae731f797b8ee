/* What both daemons do the same way around their library object: tick it
 * from a timer armed to the object's own next deadline and once after each
 * loop iteration that handled frames, and shut the loop's handles down on
 * SIGINT/SIGTERM.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKVD_DRIVER_H
#define SKVD_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics_loop.h"
#include "skvd.h"

/* skv_manager_tick / skv_agent_tick and their next_tick_ms, adapted. */
typedef int (*skvd_tick_fn)(void *obj, int64_t now_ms, skv_error *err);
typedef int64_t (*skvd_next_fn)(const void *obj, int64_t now_ms);

typedef struct skvd_driver {
    skvd_net net;
    skvd_metrics metrics;
    uv_timer_t timer;
    uv_check_t check;     /* ticks after an iteration that had frames */
    bool dirty;
    int64_t max_ms;       /* longest wait between two ticks */
    skvd_tick_fn tick;
    skvd_next_fn next;
    void *obj;            /* NULL until the library object is open */
} skvd_driver;

/* Sets up the connections (callbacks cbs with ctx), timer, check, metrics
 * and the signal handlers (a signal calls skvd_driver_stop). -1 when the
 * signal handlers cannot be installed; undo with skvd_driver_stop either
 * way. */
int skvd_driver_init(skvd_driver *d, uv_loop_t *loop, const skvd_net_cbs *cbs,
                     void *ctx, size_t max_frame, size_t max_queue,
                     int64_t max_ms);
/* The object to tick from now on; ticks once and arms the timer. */
void skvd_driver_bind(skvd_driver *d, skvd_tick_fn tick, skvd_next_fn next,
                      void *obj);
/* Frames were handled: tick after this loop iteration. */
static inline void skvd_driver_poke(skvd_driver *d) { d->dirty = true; }
/* Stop accepting and connecting, close the timer, check, metrics and
 * signal handles (idempotent); the loop then drains. */
void skvd_driver_stop(void *driver);

#endif
