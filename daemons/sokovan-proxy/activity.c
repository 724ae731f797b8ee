/* Idle limits: the sessions this proxy served are reported to the manager
 * in one app.activity message per activity_report_ms (at most
 * SKV_PROTO_APP_ACTIVITY_MAX ids a message), never per request: a busy
 * app costs the manager one small message per period. The set is
 * collected on the loop and handed whole to a libuv worker thread, which
 * sends it over the shared manager connection (resolve.c). A report the
 * manager does not get is not retried: the next period's carries the
 * sessions still in use.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

/* Ids kept between two reports; beyond, a session is reported the next
 * period (a proxy serving this many sessions in one period is far past
 * what one manager connection is for). */
#define KEEP_MAX (16 * SKV_PROTO_APP_ACTIVITY_MAX)

struct proxy_activity {
    proxy *p;
    uv_timer_t timer;
    char **ids;
    size_t n, cap;
    int sending;              /* a report is on a worker thread */
    int warned;
    int closed;               /* stopped: the last one out frees it */
};

typedef struct report {
    uv_work_t w;
    struct proxy_activity *a;
    char **ids;
    size_t n;
    int rc;
    skv_error e;
} report;

static void ids_free(char **ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}

void proxy_activity_note(proxy *p, h2o_iovec_t sid)
{
    struct proxy_activity *a = p->activity;
    if (!a || !sid.len)
        return;
    for (size_t i = 0; i < a->n; i++)
        if (strlen(a->ids[i]) == sid.len && !memcmp(a->ids[i], sid.base,
                                                    sid.len))
            return;
    if (a->n == KEEP_MAX) {
        if (!a->warned++)
            skvd_log(SKV_LOG_WARN, "app.activity: more than %d sessions "
                     "served in one period; the rest are reported later",
                     KEEP_MAX);
        return;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        char **v = realloc(a->ids, cap * sizeof *v);
        if (!v)
            return;
        a->ids = v;
        a->cap = cap;
    }
    char *id = strndup(sid.base, sid.len);
    if (id)
        a->ids[a->n++] = id;
}

static void work(uv_work_t *w)
{
    report *r = w->data;
    for (size_t off = 0; !r->rc && off < r->n;
         off += SKV_PROTO_APP_ACTIVITY_MAX) {
        size_t k = r->n - off;
        skv_proto_app_activity q = {r->ids + off,
            k < SKV_PROTO_APP_ACTIVITY_MAX ? k : SKV_PROTO_APP_ACTIVITY_MAX};
        skv_proto_ack ack;
        r->rc = proxy_manager_call(r->a->p, SKV_PROTO_APP_ACTIVITY, &q, &ack,
                                   &r->e);
        if (!r->rc)
            skv_proto_body_free(SKV_PROTO_ACK, &ack);
    }
}

static void after(uv_work_t *w, int status)
{
    report *r = w->data;
    if (status == 0 && r->rc)
        skvd_log(SKV_LOG_WARN, "app.activity (%zu sessions): %s", r->n,
                 r->e.message);
    struct proxy_activity *a = r->a;
    a->sending = 0;
    ids_free(r->ids, r->n);
    free(r);
    if (a->closed == 2) {     /* the timer closed while this ran */
        ids_free(a->ids, a->n);
        free(a);
    }
}

static void on_timer(uv_timer_t *t)
{
    struct proxy_activity *a = t->data;
    if (!a->n || a->sending)
        return;
    report *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->a = a;
    r->w.data = r;
    r->ids = a->ids;
    r->n = a->n;
    if (uv_queue_work(&a->p->loop, &r->w, work, after)) {
        free(r);
        return;
    }
    a->ids = NULL;
    a->n = a->cap = 0;
    a->warned = 0;
    a->sending = 1;
}

int proxy_activity_start(proxy *p)
{
    struct proxy_activity *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    a->p = p;
    uv_timer_init(&p->loop, &a->timer);
    a->timer.data = a;
    uint64_t ms = p->cfg.proxy.activity_report_ms;
    if (uv_timer_start(&a->timer, on_timer, ms, ms)) {
        free(a);
        return -1;
    }
    uv_unref((uv_handle_t *)&a->timer);
    p->activity = a;
    return 0;
}

static void closed(uv_handle_t *h)
{
    struct proxy_activity *a = h->data;
    if (a->sending) {
        a->closed = 2;        /* after() frees it */
        return;
    }
    ids_free(a->ids, a->n);
    free(a);
}

void proxy_activity_stop(proxy *p)
{
    struct proxy_activity *a = p->activity;
    if (!a)
        return;
    p->activity = NULL;
    uv_timer_stop(&a->timer);
    uv_close((uv_handle_t *)&a->timer, closed);
}
