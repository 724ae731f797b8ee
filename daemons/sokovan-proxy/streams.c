/* Idle limits for long-lived streams: a WebSocket that h2o's reverse proxy
 * upgraded and a `sokovan app` tunnel are one request each, after which
 * h2o splices bytes (h2o_tunnel_establish) without the proxy seeing them.
 * Noting the session only when the stream opens would let a notebook typed
 * in for an hour over one WebSocket be reclaimed; noting it while the
 * stream is merely open would let a forgotten tab keep its session forever.
 * So each upgraded client connection is watched until it closes, and at
 * every activity report (activity.c) the sessions whose streams carried
 * more than stream_min_bytes since the previous report are noted.
 *
 * What is measured is the client connection, the one socket the proxy
 * owns for both kinds (the upstream of a WebSocket is h2o's, stolen from
 * its socket pool): the kernel's TCP counters (tcpbytes.c), both ways,
 * since h2o 2.2.5 counts only the bytes written (its bytes_read is the
 * last read's size).
 *
 * Lifetime, without use-after-free: an upgrade request gets a block in
 * its pool; when h2o disposes of the request (after the 101 went out, or
 * after any other answer) the connection is watched only if the answer
 * was 101. The watch wraps the socket's on_close (chaining whatever was
 * there) and is freed in it, so it never outlives the socket; at shutdown
 * the wrapped callbacks are put back.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

typedef struct watch {
    h2o_linklist_t link;
    h2o_socket_t *sock;         /* the client connection, open */
    void (*prev_cb)(void *);    /* its on_close before ours */
    void *prev_data;
    uint64_t moved;             /* its bytes at the previous sample */
    char sid[];
} watch;

struct proxy_streams {
    h2o_linklist_t watches;
    int warned;                 /* the counters could not be read */
};

/* Set on an upgrade request; read when h2o disposes of it. */
typedef struct arm {
    proxy *p;
    h2o_req_t *req;
    char sid[];
} arm;

int proxy_streams_start(proxy *p)
{
    struct proxy_streams *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    h2o_linklist_init_anchor(&s->watches);
    p->streams = s;
    return 0;
}

/* The connection's bytes so far; a failure is logged once (a kernel
 * without the counters would otherwise silently never count a stream). */
static int bytes_of(struct proxy_streams *s, h2o_socket_t *sock,
                    uint64_t *moved)
{
    int fd = h2o_socket_get_fd(sock);
    int rc = fd < 0 ? -EBADF : proxy_tcp_bytes(fd, moved);
    if (rc && !s->warned++)
        skvd_log(SKV_LOG_ERROR, "idle limits: cannot read a connection's "
                 "TCP byte counters (%s%s): open WebSockets and tunnels "
                 "count only when opened", strerror(-rc),
                 rc == -ENOSYS ? ", Linux 4.1 or later needed" : "");
    return rc;
}

static void on_sock_close(void *data)
{
    watch *w = data;
    void (*cb)(void *) = w->prev_cb;
    void *prev = w->prev_data;
    h2o_linklist_unlink(&w->link);
    free(w);
    if (cb)
        cb(prev);
}

static void watch_socket(proxy *p, h2o_socket_t *sock, const char *sid)
{
    struct proxy_streams *s = p->streams;
    size_t n = strlen(sid);
    watch *w = calloc(1, sizeof *w + n + 1);
    if (!w) {
        skvd_log(SKV_LOG_WARN, "idle limits: out of memory: session %s's "
                 "stream counts only as opened", sid);
        return;
    }
    w->sock = sock;
    memcpy(w->sid, sid, n + 1);
    if (bytes_of(s, sock, &w->moved))
        w->moved = 0;
    w->prev_cb = sock->on_close.cb;
    w->prev_data = sock->on_close.data;
    sock->on_close.cb = on_sock_close;
    sock->on_close.data = w;
    h2o_linklist_insert(&s->watches, &w->link);
}

/* The request is done: its connection became a stream only if it was
 * answered 101 (h2o's WebSocket upgrade or our tunnel); otherwise it
 * stays an HTTP connection, whose requests are noted one by one. */
static void on_req_end(void *mem)
{
    arm *a = mem;
    h2o_req_t *req = a->req;
    if (!a->p->streams || req->res.status != 101 ||
        !req->conn->callbacks->get_socket)
        return;
    h2o_socket_t *sock = req->conn->callbacks->get_socket(req->conn);
    if (sock)
        watch_socket(a->p, sock, a->sid);
}

void proxy_streams_arm(proxy *p, h2o_req_t *req, h2o_iovec_t sid)
{
    if (!p->streams || !req->upgrade.base || req->version >= 0x200)
        return;
    arm *a = h2o_mem_alloc_shared(&req->pool, sizeof *a + sid.len + 1,
                                  on_req_end);
    a->p = p;
    a->req = req;
    memcpy(a->sid, sid.base, sid.len);
    a->sid[sid.len] = '\0';
}

void proxy_streams_sample(proxy *p)
{
    struct proxy_streams *s = p->streams;
    if (!s)
        return;
    uint64_t min = p->cfg.proxy.stream_min_bytes;
    for (h2o_linklist_t *l = s->watches.next; l != &s->watches;
         l = l->next) {
        watch *w = H2O_STRUCT_FROM_MEMBER(watch, link, l);
        uint64_t now, was = w->moved;
        if (bytes_of(s, w->sock, &now))
            continue;
        /* per period, not accumulated: pings adding up over an hour
         * must not count as a period's activity */
        w->moved = now;
        if (now - was > min)
            proxy_activity_note(p, h2o_iovec_init(w->sid, strlen(w->sid)));
    }
}

void proxy_streams_stop(proxy *p)
{
    struct proxy_streams *s = p->streams;
    if (!s)
        return;
    p->streams = NULL;
    while (!h2o_linklist_is_empty(&s->watches)) {
        watch *w = H2O_STRUCT_FROM_MEMBER(watch, link, s->watches.next);
        w->sock->on_close.cb = w->prev_cb;
        w->sock->on_close.data = w->prev_data;
        h2o_linklist_unlink(&w->link);
        free(w);
    }
    free(s);
}
