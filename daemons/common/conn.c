/* One connection: a frame reader fed from a shared read buffer, and a
 * write queue of two growing buffers (the one being written, the one
 * filling up) so a burst of replies becomes few writes and no per-frame
 * allocation. A queue beyond max_queue means the peer does not read: the
 * connection is closed rather than letting memory grow.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "sokovan/proto.h"
#include "skvd.h"

/* libuv calls read_cb right after alloc_cb on the one loop thread, so
 * one buffer serves every connection. */
static char g_rbuf[256 * 1024];

/* Buffers above this are released once drained. */
#define KEEP_CAP (1u << 20)

skvd_conn *skvd_conn_alloc(skvd_net *n, bool outbound)
{
    skvd_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->net = n;
    c->outbound = outbound;
    c->id = ++n->next_id;
    c->h.handle.data = c;
    snprintf(c->peer, sizeof(c->peer), "?");
    return c;
}

static void close_cb(uv_handle_t *h)
{
    skvd_conn *c = h->data;
    skvd_net *n = c->net;
    if (c->prev)
        c->prev->next = c->next;
    else if (n->conns == c)
        n->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->opened && n->cbs.on_close)
        n->cbs.on_close(c, n->ctx);
    if (c->outbound)
        skvd_connect_lost(n, c);
    skvd_limits_release(c);
    skv_proto_reader_free(c->reader);
    free(c->out);
    free(c->pend);
    skvd_tls_free(c->tls);
    free(c);
}

/* Closing starts now: no more sends; on_close follows from close_cb, out
 * of any library call that may be on the stack. */
static void really_close(skvd_conn *c)
{
    c->closing = true;
    skvd_table_remove(c->net, c);
    if (!uv_is_closing(&c->h.handle))
        uv_close(&c->h.handle, close_cb);
}

void skvd_conn_close(skvd_conn *c, bool flush)
{
    if (uv_is_closing(&c->h.handle))
        return;
    if (uv_is_active(&c->h.handle))
        uv_read_stop(&c->h.stream);
    if (flush)
        skvd_tls_shutdown(c);   /* close_notify goes out with the rest */
    c->closing = true;
    if (flush && (c->writing || c->pend_len)) {
        c->close_after_flush = true;
        return;
    }
    really_close(c);
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *b = realloc(*buf, n);
    if (!b)
        return -1;
    *buf = b;
    *cap = n;
    return 0;
}

static void write_cb(uv_write_t *req, int status);

static void start_write(skvd_conn *c)
{
    uv_buf_t b = uv_buf_init(c->out, (unsigned)c->out_len);
    c->writing = true;
    if (uv_write(&c->wreq, &c->h.stream, &b, 1, write_cb) != 0) {
        c->writing = false;
        really_close(c);
    }
}

static void write_cb(uv_write_t *req, int status)
{
    skvd_conn *c = req->data;
    c->writing = false;
    c->out_len = 0;
    if (uv_is_closing(&c->h.handle))
        return;
    if (status < 0) {
        skvd_log(SKV_LOG_DEBUG, "conn %llu (%s): write: %s",
                 (unsigned long long)c->id, c->peer, uv_strerror(status));
        really_close(c);
        return;
    }
    if (c->out_cap > KEEP_CAP) {
        free(c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
    if (c->pend_len) {
        char *t = c->out;
        size_t tc = c->out_cap;
        c->out = c->pend;
        c->out_cap = c->pend_cap;
        c->out_len = c->pend_len;
        c->pend = t;
        c->pend_cap = tc;
        c->pend_len = 0;
        start_write(c);
    } else if (c->close_after_flush) {
        really_close(c);
    }
}

/* Nothing queued: try the socket directly, queue only what it refused. */
static int send_now(skvd_conn *c, const char *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int w = uv_try_write(&c->h.stream, &b, 1);
    if (w == (int)len)
        return 0;
    if (w < 0 && w != UV_EAGAIN) {
        really_close(c);
        return -1;
    }
    size_t done = w > 0 ? (size_t)w : 0;
    if (grow(&c->out, &c->out_cap, len - done)) {
        really_close(c);
        return -1;
    }
    memcpy(c->out, buf + done, len - done);
    c->out_len = len - done;
    start_write(c);
    return 0;
}

int skvd_conn_send(skvd_conn *c, const void *buf, size_t len)
{
    if (c->tls && !c->closing && len)
        return skvd_tls_send(c, buf, len);
    return skvd_conn_send_raw(c, buf, len);
}

int skvd_conn_send_raw(skvd_conn *c, const void *buf, size_t len)
{
    if (c->closing || len == 0 || len > UINT32_MAX)
        return c->closing || len ? -1 : 0;
    if (c->out_len + c->pend_len + len > c->net->max_queue) {
        skvd_log(SKV_LOG_WARN, "conn %llu (%s): more than %zu bytes unsent: "
                 "closing it", (unsigned long long)c->id, c->peer,
                 c->net->max_queue);
        really_close(c);
        return -1;
    }
    if (!c->writing)
        return send_now(c, buf, len);
    if (grow(&c->pend, &c->pend_cap, c->pend_len + len)) {
        really_close(c);
        return -1;
    }
    memcpy(c->pend + c->pend_len, buf, len);
    c->pend_len += len;
    return 0;
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)h;
    (void)hint;
    *buf = uv_buf_init(g_rbuf, sizeof(g_rbuf));
}

/* The stream is unusable (oversized or empty frame): tell the peer why,
 * then close once that is written. */
static void stream_error(skvd_conn *c, const skv_error *e)
{
    void *frame = NULL;
    size_t len = 0;
    skvd_log(skvd_limits_counted(c) ? SKV_LOG_DEBUG : SKV_LOG_WARN,
             "conn %llu (%s): %s: closing it", (unsigned long long)c->id,
             c->peer, e->message);
    if (skv_proto_error_encode(&frame, &len, 0, e->code, e->message, NULL,
                               skvd_now_ms(), NULL, NULL) == 0)
        skvd_conn_send(c, frame, len);
    skv_free(frame);
    skvd_conn_close(c, true);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    skvd_conn *c = s->data;
    skvd_net *n = c->net;
    skv_error e = SKV_ERROR_INIT;
    const void *p;
    size_t len;
    bool took = false;
    int r;
    if (nread < 0) {
        if (nread != UV_EOF)
            skvd_log(SKV_LOG_DEBUG, "conn %llu (%s): read: %s",
                     (unsigned long long)c->id, c->peer, uv_strerror(nread));
        skvd_conn_close(c, nread == UV_EOF);
        return;
    }
    if (nread == 0 || c->closing || !skvd_limits_read(c, (size_t)nread))
        return;
    if (skv_proto_reader_feed(c->reader, buf->base, (size_t)nread, &e)) {
        stream_error(c, &e);
        return;
    }
    while (!c->closing && (r = skv_proto_reader_next(c->reader, &p, &len,
                                                     &e)) == 1) {
        took = true;
        if (n->cbs.on_frame(c, p, len, n->ctx) < 0)
            skvd_conn_close(c, true);
    }
    if (!c->closing && r < 0)
        stream_error(c, &e);
    skvd_limits_held(c, took);
    if (n->cbs.on_batch)
        n->cbs.on_batch(n->ctx);
}

static void set_peer(skvd_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    char ip[64];
    if (c->h.handle.type != UV_TCP) {
        snprintf(c->peer, sizeof(c->peer), "unix");
        return;
    }
    uv_tcp_nodelay(&c->h.tcp, 1); /* request/response: no Nagle delay */
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) != 0)
        return;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        uv_ip6_name(a, ip, sizeof(ip));
        snprintf(c->peer, sizeof(c->peer), "[%s]:%u", ip, ntohs(a->sin6_port));
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        uv_ip4_name(a, ip, sizeof(ip));
        snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, ntohs(a->sin_port));
    }
}

int skvd_conn_start(skvd_conn *c)
{
    skvd_net *n = c->net;
    skv_error e = SKV_ERROR_INIT;
    c->wreq.data = c;
    c->next = n->conns;
    if (n->conns)
        n->conns->prev = c;
    n->conns = c;
    set_peer(c);
    if (skv_proto_reader_new(&c->reader, skvd_limits_frame_max(c), &e) ||
        skvd_table_add(n, c)) {
        skvd_log(SKV_LOG_ERROR, "conn %llu: %s", (unsigned long long)c->id,
                 e.message[0] ? e.message : "out of memory");
        really_close(c);
        return -1;
    }
    if (n->cbs.on_open && n->cbs.on_open(c, n->ctx) < 0) {
        skvd_conn_close(c, true);
        return -1;
    }
    c->opened = true;
    if (!c->closing && c->tls && skvd_tls_start(c))
        return -1;
    if (!c->closing && uv_read_start(&c->h.stream, alloc_cb,
                                     c->tls ? skvd_tls_read_cb : read_cb)) {
        really_close(c);
        return -1;
    }
    return 0;
}

/* TLS connections read through tls_conn.c, which hands the plaintext on
 * here as if the socket had delivered it. */
void skvd_conn_read_plain(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    read_cb(s, nread, buf);
}
