/* daemons/common: the metrics side of a daemon's event loop. When
 * metrics_listen is set, the daemon keeps one registry on its loop thread,
 * serves it with metrics_http.h, and once a second (and at start) asks the
 * library to update it (skv_manager_metrics_collect /
 * skv_agent_metrics_collect), renders it and publishes the text.
 *
 * Lifecycle, mirroring the rest of daemons/common: _init() with the loop
 * (before anything can fail), _start() once the library object exists,
 * _close() from the daemon's stop (closes the timer handle), and
 * _release() after the loop drained (stops the HTTP thread, frees the
 * registry). All on the loop thread.
 *
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKVD_METRICS_LOOP_H
#define SKVD_METRICS_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "metrics_http.h"

/* Update reg from the library object obj at now_ms. */
typedef int (*skvd_collect_fn)(void *obj, skv_metrics *reg, int64_t now_ms,
                               skv_error *err);

typedef struct skvd_metrics {
    uv_timer_t timer;
    skv_metrics *reg;
    skvd_metrics_http *http;
    skvd_collect_fn collect;
    void *obj;
    bool warned;             /* a failed collect was logged */
} skvd_metrics;

#define SKVD_METRICS_PERIOD_MS 1000

void skvd_metrics_init(skvd_metrics *x, uv_loop_t *loop);
/* listen NULL: nothing (metrics off). Else start the endpoint, publish a
 * first snapshot and arm the timer; logs and returns -1 on failure. */
int skvd_metrics_start(skvd_metrics *x, const char *listen,
                       skvd_collect_fn collect, void *obj);
/* Update and publish now (e.g. after events); no-op when off. */
void skvd_metrics_refresh(skvd_metrics *x);
void skvd_metrics_close(skvd_metrics *x);
void skvd_metrics_release(skvd_metrics *x);

#endif /* SKVD_METRICS_LOOP_H */
