/* Upstream connections: one h2o socket pool per (session, user, target
 * host:port), so a service that keeps connections open (Jupyter, most HTTP
 * servers) is not reconnected for every request, and a pooled connection
 * never carries one user's or one session's request after another's (an
 * ended session's host port may soon be another session's). Idle pooled
 * connections close after POOL_IDLE_MS; a pool unused for twice that, with
 * no connection lent out, is disposed by the sweep.
 *
 * Connect ahead: when a request has taken the pool's last idle connection
 * (or found none), one new connection is opened in the background and
 * parked in the pool for the next request. A service that closes every
 * connection after its answer (busybox httpd) then costs the next request
 * no TCP handshake; that handshake was most of the proxy's added latency
 * (bench/RESULTS.md, "Connect ahead"). At most one such connect per pool is
 * in flight, so a pool holds at most one connection nobody asked for.
 * SPDX-License-Identifier: Apache-2.0 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>

#include "proxy.h"

#define POOLS 256
#define POOL_IDLE_MS 2000
#define POOL_KEY 512   /* session id, user (< 256), host:port (< 72) */

typedef struct pool {
    struct pool *next;
    char key[POOL_KEY];         /* "SESSION\nUSER\nHOST:PORT" */
    h2o_socketpool_t sp;
    uint64_t used_ms;
    bool warming;               /* a connect ahead is in flight */
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
    return &x->sp;
}

/* The parked connection: no Nagle delay on what the proxy writes (a
 * request's head and body go in separate writes). */
static void on_warm(h2o_socket_t *sock, const char *err, void *data)
{
    pool *x = data;
    x->warming = false;
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
    x->warming = true;
    h2o_socketpool_connect(NULL, &x->sp, &p->loop,
                           &p->ctx.receivers.hostinfo_getaddr, on_warm, x);
}
