/* daemons/common: the Prometheus endpoint of sokovan-manager and
 * sokovan-agent.
 *
 * A small HTTP server (libmicrohttpd, its own internal polling thread)
 * answers GET/HEAD /metrics with the text exposition format
 * (Content-Type "text/plain; version=0.0.4; charset=utf-8"), 404 for any
 * other path, 405 for other methods on /metrics and 503 until the first
 * snapshot is published.
 *
 * Threading choice: the registry (sokovan/metrics.h) belongs to the daemon's
 * event-loop thread and is never touched by the HTTP thread. The loop
 * thread renders it and publishes the finished text with
 * skvd_metrics_http_publish() (periodically, e.g. from a 1 s timer, and
 * after events that change the numbers); the text is swapped in under a
 * mutex, and each request copies the current text under the same mutex. A
 * scrape therefore sees the state of the last publish, never a half-updated
 * registry, and the loop never waits for a slow client.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKVD_METRICS_HTTP_H
#define SKVD_METRICS_HTTP_H

#include <stdint.h>

#include "sokovan/common.h"
#include "sokovan/metrics.h"

typedef struct skvd_metrics_http skvd_metrics_http;

/* Listen on "HOST:PORT" or "[V6ADDR]:PORT" (HOST may be a name; "*" means
 * every IPv4 address; PORT 0 picks a free port, see _port()). Starts the
 * server thread. SKV_EINVAL for a bad address, SKV_ESYS/SKV_EIO when the
 * server cannot start (port in use, ...). Call from the loop thread. */
int skvd_metrics_http_start(skvd_metrics_http **out, const char *listen,
                            skv_error *err);

/* The TCP port actually bound. */
uint16_t skvd_metrics_http_port(const skvd_metrics_http *h);

/* Render reg (on the calling thread, which must own reg) and make the text
 * what /metrics serves from now on. On failure the previous text stays. */
int skvd_metrics_http_publish(skvd_metrics_http *h, const skv_metrics *reg,
                              skv_error *err);

/* Stop the server (waits for the HTTP thread) and free everything.
 * Accepts NULL. */
void skvd_metrics_http_stop(skvd_metrics_http *h);

#endif /* SKVD_METRICS_HTTP_H */
