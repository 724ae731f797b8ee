/* See exec_watch.h. The agent tells which events of which descriptor it
 * needs; a descriptor it stops watching is closed by it right after, so
 * its poll handle stops at once (libuv removes it from epoll in
 * uv_poll_stop) and closes; a new descriptor reusing the number gets a
 * new handle.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "exec_watch.h"
#include "skvd.h"

typedef struct exec_poll {
    uv_poll_t h;
    int fd;
    exec_watch *w;
} exec_poll;

static void on_poll(uv_poll_t *h, int status, int events)
{
    exec_poll *p = h->data;
    exec_watch *w = p->w;
    unsigned ev = (events & UV_WRITABLE) ? SKV_AGENT_IO_WRITE : 0;
    if (status < 0 || (events & (UV_READABLE | UV_DISCONNECT)))
        ev |= SKV_AGENT_IO_READ;
    skv_error e = SKV_ERROR_INIT;
    if (skv_agent_io(w->a, p->fd, ev, skvd_now_ms(), &e) < 0)
        skvd_log(SKV_LOG_WARN, "exec descriptor %d: %s", p->fd, e.message);
    w->poke(w->ctx);
}

static void free_poll(uv_handle_t *h)
{
    free(h->data);
}

static size_t find(const exec_watch *w, int fd)
{
    size_t i = 0;
    while (i < w->n && w->p[i]->fd != fd)
        i++;
    return i;
}

static void drop(exec_watch *w, size_t i)
{
    exec_poll *p = w->p[i];
    uv_poll_stop(&p->h);
    uv_close((uv_handle_t *)&p->h, free_poll);
    w->p[i] = w->p[--w->n];
}

static exec_poll *add(exec_watch *w, int fd)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        exec_poll **np = realloc(w->p, cap * sizeof(*np));
        if (!np)
            return NULL;
        w->p = np;
        w->cap = cap;
    }
    exec_poll *p = calloc(1, sizeof(*p));
    if (!p || uv_poll_init(w->loop, &p->h, fd) != 0) {
        free(p);
        return NULL;
    }
    p->fd = fd;
    p->w = w;
    p->h.data = p;
    uv_unref((uv_handle_t *)&p->h);
    w->p[w->n++] = p;
    return p;
}

static void on_watch(int fd, unsigned events, void *payload)
{
    exec_watch *w = payload;
    size_t i = find(w, fd);
    if (events == 0) {
        if (i < w->n)
            drop(w, i);
        return;
    }
    exec_poll *p = i < w->n ? w->p[i] : add(w, fd);
    int uev = ((events & SKV_AGENT_IO_READ) ? UV_READABLE | UV_DISCONNECT
                                            : 0) |
              ((events & SKV_AGENT_IO_WRITE) ? UV_WRITABLE : 0);
    /* Without a handle the exec would stall: say so (the agent ends it
     * with its kernel or connection). */
    if (!p || uv_poll_start(&p->h, uev, on_poll) != 0)
        skvd_log(SKV_LOG_ERROR, "cannot watch exec descriptor %d", fd);
}

void exec_watch_init(exec_watch *w, uv_loop_t *loop, skv_agent *a,
                     void (*poke)(void *ctx), void *ctx)
{
    w->loop = loop;
    w->a = a;
    w->poke = poke;
    w->ctx = ctx;
    w->p = NULL;
    w->n = w->cap = 0;
    skv_agent_set_watch(a, on_watch, w);
}

void exec_watch_close(exec_watch *w)
{
    if (!w->a)
        return;
    /* The connection is going away with the daemon: the agent ends every
     * exec, unwatching its descriptors. */
    skv_agent_disconnected(w->a, skvd_now_ms());
    while (w->n)
        drop(w, w->n - 1);
    skv_agent_set_watch(w->a, NULL, NULL);
    free(w->p);
    w->p = NULL;
    w->a = NULL;
}
