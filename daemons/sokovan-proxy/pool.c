/* Upstream connections: one h2o socket pool per (session, user, target
 * host:port), so a service that keeps connections open (Jupyter, most HTTP
 * servers) is not reconnected for every request, and a pooled connection
 * never carries one user's or one session's request after another's (an
 * ended session's host port may soon be another session's). Idle pooled
 * connections close after POOL_IDLE_MS; a pool unused for twice that, with
 * no connection lent out, is disposed by the sweep. At most POOLS pools:
 * past that, requests connect on their own (no pool, nothing kept).
 *
 * Connect ahead: when a request has taken the pool's last idle connection
 * (or found none), one new connection is opened in the background and
 * parked in the pool for the next request. A service that closes every
 * connection after its answer (busybox httpd) then costs the next request
 * no TCP handshake, and a service that forks per connection has the next
 * process ready. (Opening it only once the response has been sent was
 * tried and measured slower: the fork then lands on the next request's
 * path; bench/RESULTS.md, "h/proxy17b".) At most one such connect per pool
 * is in flight, so a pool holds at most one connection nobody asked for.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy.h"
#include <h2o/version.h>

#define POOLS 256
#ifndef POOL_IDLE_MS   /* tests/test_proxy_pool.c sets a short one */
#define POOL_IDLE_MS 2000
#endif
#define POOL_KEY 512   /* session id, user (< 256), host:port (< 72) */

typedef struct pool {
    struct pool *next;
    char key[POOL_KEY];         /* "SESSION\nUSER\nHOST:PORT" */
    h2o_socketpool_t sp;
    uint64_t used_ms;
    h2o_socketpool_connect_request_t *warming;   /* a connect ahead */
    bool disposed;              /* freed by the next sweep */
} pool;

static pool *g_pools;
static size_t g_n;              /* live pools on the list */
static uv_timer_t g_sweep;
static bool g_sweeping;

/* Connections lent out (to a request, or a connect in flight): those the
 * pool counts less those idle on its list. */
static size_t lent(h2o_socketpool_t *sp)
{
    size_t idle = 0;
    for (h2o_linklist_t *l = sp->_shared.sockets.next;
         l != &sp->_shared.sockets; l = l->next)
        idle++;
    return sp->_shared.count - idle;
}

/* An idle pooled connection as h2o 2.2 keeps it (lib/common/socketpool.c,
 * struct pool_entry_t; the library does not export it). */
#if H2O_VERSION_MAJOR != 2 || H2O_VERSION_MINOR != 2
#error "pool.c mirrors h2o 2.2's idle-connection entry: check prune()"
#endif
typedef struct idle_entry {
    h2o_socket_export_t sockinfo;
    h2o_linklist_t link;
    uint64_t added_at;
} idle_entry;

/* Close the idle connections the service has closed, before a request
 * looks in the pool. h2o 2.2 drops such a connection too when a request
 * meets it, but without counting it off the pool (_shared.count stays one
 * too high for good): lent() would never reach 0 and the pool would never
 * be swept. A parked connection is the one most likely to be found dead
 * (the service dropped it, or the session ended). */
static void prune(h2o_socketpool_t *sp)
{
    for (h2o_linklist_t *l = sp->_shared.sockets.next;
         l != &sp->_shared.sockets;) {
        idle_entry *e = H2O_STRUCT_FROM_MEMBER(idle_entry, link, l);
        l = l->next;
        char c;
        ssize_t n = recv(e->sockinfo.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            continue;   /* alive and quiet: reusable */
        h2o_linklist_unlink(&e->link);
        h2o_socket_dispose_export(&e->sockinfo);
        free(e);
        __sync_sub_and_fetch(&sp->_shared.count, 1);
    }
}

/* h2o_socketpool_dispose closes the pool's interval timer, and libuv ends a
 * close in a later loop iteration: the memory goes one sweep after. */
static void on_sweep(uv_timer_t *t)
{
    uint64_t now = uv_now(t->loop);
    for (pool **pp = &g_pools; *pp;) {
        pool *x = *pp;
        if (x->disposed) {
            *pp = x->next;
            free(x);
            continue;
        }
        if (!x->warming && now - x->used_ms > 2 * POOL_IDLE_MS &&
            !lent(&x->sp)) {
            h2o_socketpool_dispose(&x->sp);
            x->disposed = true;
            g_n--;
        }
        pp = &x->next;
    }
}

static void sweep_start(uv_loop_t *loop)
{
    if (g_sweeping)
        return;
    uv_timer_init(loop, &g_sweep);
    uv_timer_start(&g_sweep, on_sweep, POOL_IDLE_MS, POOL_IDLE_MS);
    uv_unref((uv_handle_t *)&g_sweep);   /* never keeps the loop alive */
    g_sweeping = true;
}

static pool *pool_new(proxy *p, const char *key, const proxy_target *t)
{
    if (g_n == POOLS)
        return NULL;
    pool *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    snprintf(x->key, sizeof x->key, "%s", key);
    h2o_socketpool_init_by_hostport(&x->sp, h2o_iovec_init(t->host,
                                                           strlen(t->host)),
                                    t->port, 0, SIZE_MAX);
    h2o_socketpool_set_timeout(&x->sp, &p->loop, POOL_IDLE_MS);
    x->next = g_pools;
    g_pools = x;
    g_n++;
    return x;
}

static pool *pool_find(proxy *p, h2o_iovec_t sid, const proxy_target *t)
{
    char key[POOL_KEY];
    int n = snprintf(key, sizeof key, "%.*s\n%s\n%s:%u", (int)sid.len,
                     sid.base, t->user, t->host, t->port);
    if (n < 0 || (size_t)n >= sizeof key)
        return NULL;   /* cannot key it: connect per request */
    sweep_start(&p->loop);
    for (pool *x = g_pools; x; x = x->next)
        if (!x->disposed && !strcmp(x->key, key))
            return x;
    return pool_new(p, key, t);
}

h2o_socketpool_t *proxy_pool_for(proxy *p, h2o_iovec_t sid,
                                 const proxy_target *t, void **ref)
{
    pool *x = pool_find(p, sid, t);
    *ref = x;
    if (!x)
        return NULL;
    x->used_ms = uv_now(&p->loop);
    prune(&x->sp);
    return &x->sp;
}

/* The parked connection: no Nagle delay on what the proxy writes (a
 * request's head and body go in separate writes). */
static void on_warm(h2o_socket_t *sock, const char *err, void *data)
{
    pool *x = data;
    x->warming = NULL;
    if (err || !sock)
        return;   /* the next request connects itself and reports it */
    int one = 1;
    setsockopt(h2o_socket_get_fd(sock), IPPROTO_TCP, TCP_NODELAY, &one,
               sizeof one);
    h2o_socketpool_return(&x->sp, sock);
}

void proxy_pool_warm(proxy *p, void *ref)
{
    pool *x = ref;
    if (!x || x->warming || x->disposed ||
        !h2o_linklist_is_empty(&x->sp._shared.sockets))
        return;
    h2o_socketpool_connect(&x->warming, &x->sp, &p->loop,
                           &p->ctx.receivers.hostinfo_getaddr, on_warm, x);
}

/* The proxy stops: idle connections closed, a connect ahead cancelled, the
 * pools freed after one loop turn (their timers' closes). A pool with a
 * connection still lent out (a request the stop cut short) stays on the
 * list: that connection's close would count down in it. */
void proxy_pool_stop(proxy *p)
{
    for (pool *x = g_pools; x; x = x->next) {
        if (x->warming)
            h2o_socketpool_cancel_connect(x->warming);
        x->warming = NULL;
        if (!x->disposed)
            h2o_socketpool_dispose(&x->sp);
        x->disposed = true;
    }
    g_n = 0;
    if (g_sweeping)
        uv_close((uv_handle_t *)&g_sweep, NULL);
    g_sweeping = false;
    uv_run(&p->loop, UV_RUN_NOWAIT);
    for (pool **pp = &g_pools; *pp;) {
        pool *x = *pp;
        if (x->sp._shared.count) {
            pp = &x->next;
            continue;
        }
        *pp = x->next;
        free(x);
    }
}
