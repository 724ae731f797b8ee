/* The agent's side: one outbound connection to the manager, kept up. A
 * failed attempt or a lost connection schedules the next attempt after a
 * delay that doubles up to a maximum, back to the minimum once connected.
 * The address may be a list "a,b,c" (a leader and its standbys): each
 * failed attempt or lost connection moves to the next one in turn, so the
 * agent finds whichever manager leads now.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

struct skvd_connector {
    skvd_net *net;
    char addr[300];         /* the one tried now */
    char list[1024];        /* all of them, comma-separated */
    size_t at;              /* offset of addr in list */
    uv_timer_t timer;
    skvd_conn *conn;        /* attempt in progress or live connection */
    bool live;
    uint64_t delay, min, max;
    unsigned failures;      /* consecutive: only the first is a warning */
};

/* TCP with a TLS context: the host of the address is what the manager's
 * certificate must name (when verified by CA). */
static int with_tls(skvd_conn *c, const struct skvd_connector *k)
{
    char host[256], why[128];
    int port;
    if (!k->net->tls_connect || c->h.handle.type != UV_TCP)
        return 0;
    if (skvd_hostport_split(host, sizeof(host), &port, k->addr, why,
                            sizeof(why)))
        return -1;
    return skvd_tls_attach(c, k->net->tls_connect, host);
}

static void on_connect(uv_connect_t *req, int status)
{
    skvd_conn *c = req->data;
    struct skvd_connector *k = c->net->connector;
    if (!k || uv_is_closing(&c->h.handle)) /* stopping */
        return;
    if (status < 0 || k->net->stopping) {
        if (status < 0)
            skvd_log(k->failures++ ? SKV_LOG_DEBUG : SKV_LOG_WARN,
                     "cannot connect to %s: %s (retrying)", k->addr,
                     uv_strerror(status));
        skvd_conn_close(c, false);
        return;
    }
    if (with_tls(c, k)) {
        skvd_log(SKV_LOG_ERROR, "connect to %s: TLS: out of memory", k->addr);
        skvd_conn_close(c, false);
        return;
    }
    skvd_log(SKV_LOG_INFO, "connected to %s%s", k->addr,
             c->tls ? " (TLS)" : "");
    k->failures = 0;
    k->delay = k->min;
    k->live = true;
    skvd_conn_start(c);
}

static void attempt(uv_timer_t *t)
{
    struct skvd_connector *k = t->data;
    char why[256];
    skvd_conn *c = skvd_conn_alloc(k->net, true);
    if (!c) {
        uv_timer_start(&k->timer, attempt, k->delay, 0);
        return;
    }
    k->conn = c;
    k->live = false;
    c->creq.data = c;
    if (strncmp(k->addr, "unix:", 5) == 0) {
        uv_pipe_init(k->net->loop, &c->h.pipe, 0);
        c->h.handle.data = c;
        uv_pipe_connect(&c->creq, &c->h.pipe, k->addr + 5, on_connect);
        return;
    }
    struct sockaddr_storage ss;
    uv_tcp_init(k->net->loop, &c->h.tcp);
    c->h.handle.data = c;
    int rc = skvd_hostport_resolve(&ss, k->addr, why, sizeof(why)) ? UV_EINVAL
             : uv_tcp_connect(&c->creq, &c->h.tcp, (struct sockaddr *)&ss,
                              on_connect);
    if (rc != 0) {
        skvd_log(k->failures++ ? SKV_LOG_DEBUG : SKV_LOG_WARN,
                 "cannot connect to %s: %s (retrying)", k->addr,
                 rc == UV_EINVAL ? why : uv_strerror(rc));
        skvd_conn_close(c, false);
    }
}

/* Move to the next address of the list (wrapping); one address stays. */
static void next_addr(struct skvd_connector *k)
{
    size_t n = strcspn(k->list + k->at, ",");
    k->at = k->list[k->at + n] ? k->at + n + 1 : 0;
    n = strcspn(k->list + k->at, ",");
    snprintf(k->addr, sizeof(k->addr), "%.*s", (int)n, k->list + k->at);
}

void skvd_connect_lost(skvd_net *n, skvd_conn *c)
{
    struct skvd_connector *k = n->connector;
    if (!k || k->conn != c)
        return;
    if (k->live)
        skvd_log(SKV_LOG_WARN, "connection to %s lost", k->addr);
    k->conn = NULL;
    k->live = false;
    if (n->stopping)
        return;
    next_addr(k);
    uint64_t d = k->delay;
    k->delay = d * 2 > k->max ? k->max : d * 2;
    uv_timer_start(&k->timer, attempt, d, 0);
}

int skvd_connect_start(skvd_net *n, const char *addr, uint64_t min_ms,
                       uint64_t max_ms, char *why, size_t wl)
{
    struct skvd_connector *k = calloc(1, sizeof(*k));
    if (!k)
        return WHY("out of memory");
    if (strlen(addr) >= sizeof(k->list)) {
        free(k);
        return WHY("address too long");
    }
    snprintf(k->list, sizeof(k->list), "%s", addr);
    snprintf(k->addr, sizeof(k->addr), "%.*s", (int)strcspn(addr, ","),
             addr);
    k->net = n;
    k->min = k->delay = min_ms ? min_ms : 1;
    k->max = max_ms < k->min ? k->min : max_ms;
    uv_timer_init(n->loop, &k->timer);
    k->timer.data = k;
    n->connector = k;
    uv_timer_start(&k->timer, attempt, 0, 0);
    return 0;
}

skvd_conn *skvd_connect_conn(const skvd_net *n)
{
    struct skvd_connector *k = n->connector;
    return k && k->live && k->conn && !k->conn->closing ? k->conn : NULL;
}

static void timer_free_cb(uv_handle_t *h)
{
    free(h->data);
}

void skvd_connect_stop(skvd_net *n)
{
    struct skvd_connector *k = n->connector;
    if (!k)
        return;
    n->connector = NULL;
    /* With connector NULL, closing the attempt schedules nothing; a live
     * connection is closed with the others. */
    if (k->conn && !k->live)
        skvd_conn_close(k->conn, false);
    uv_close((uv_handle_t *)&k->timer, timer_free_cb);
}
