/* TLS on a libuv stream: OpenSSL works on two memory BIOs; what the
 * socket delivers goes into one (skvd_tls_read_cb), the plaintext it
 * yields goes on to conn.c's ordinary read callback, and what OpenSSL
 * produces is drained from the other into the connection's write queue
 * (skvd_conn_send_raw). Plaintext sent before the handshake finished
 * waits in a buffer, so on_open may send at once (the agent's register).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "sokovan/proto.h"
#include "skvd.h"

/* One loop thread: one buffer for what a read decrypted (as conn.c's
 * g_rbuf for what it read). */
static char g_plain[256 * 1024];

struct skvd_tls {
    SSL *ssl;
    BIO *in, *out;          /* owned by ssl */
    char *early;            /* plaintext queued before the handshake */
    size_t early_len, early_cap;
    bool done;              /* handshake complete */
    bool sniffed;           /* first bytes checked for plaintext */
};

int skvd_tls_attach(skvd_conn *c, skvd_tls_ctx *ctx, const char *host)
{
    struct skvd_tls *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->ssl = skvd_tls_ssl_new(ctx, host);
    t->in = BIO_new(BIO_s_mem());
    t->out = BIO_new(BIO_s_mem());
    if (!t->ssl || !t->in || !t->out) {
        SSL_free(t->ssl);
        BIO_free(t->in);
        BIO_free(t->out);
        free(t);
        return -1;
    }
    SSL_set_bio(t->ssl, t->in, t->out);
    c->tls = t;
    return 0;
}

void skvd_tls_free(struct skvd_tls *t)
{
    if (!t)
        return;
    SSL_free(t->ssl);
    free(t->early);
    free(t);
}

/* Move what OpenSSL wrote to the socket's queue. */
static int flush_out(skvd_conn *c)
{
    char buf[16384];
    int n;
    while ((n = BIO_read(c->tls->out, buf, sizeof(buf))) > 0)
        if (skvd_conn_send_raw(c, buf, (size_t)n))
            return -1;
    return 0;
}

static void fail(skvd_conn *c, const char *what)
{
    long v = SSL_get_verify_result(c->tls->ssl);
    const char *reason = v != X509_V_OK
        ? X509_verify_cert_error_string(v) : skvd_tls_errstr();
    /* Inbound failures are the peer's business (and a flood of them must
     * not flood the log); the agent's own link failing is the operator's. */
    skvd_log(c->outbound ? SKV_LOG_WARN : SKV_LOG_DEBUG,
             "conn %llu (%s): TLS %s failed: %s: closing it",
             (unsigned long long)c->id, c->peer, what, reason);
    ERR_clear_error();
    c->tls->done = false;       /* no close_notify after a fatal error */
    flush_out(c);               /* the alert, so the peer learns why */
    skvd_conn_close(c, true);
}

static int write_plain(skvd_conn *c, const void *buf, size_t len)
{
    while (len > 0) {
        int n = SSL_write(c->tls->ssl, buf, len > INT32_MAX ? INT32_MAX
                                                            : (int)len);
        if (n <= 0) {
            fail(c, "write");
            return -1;
        }
        buf = (const char *)buf + n;
        len -= (size_t)n;
    }
    return flush_out(c);
}

int skvd_tls_send(skvd_conn *c, const void *buf, size_t len)
{
    struct skvd_tls *t = c->tls;
    if (t->done)
        return write_plain(c, buf, len);
    if (t->early_len + len > c->net->max_queue) {
        skvd_log(SKV_LOG_WARN, "conn %llu (%s): more than %zu bytes wait for "
                 "the TLS handshake: closing it", (unsigned long long)c->id,
                 c->peer, c->net->max_queue);
        skvd_conn_close(c, false);
        return -1;
    }
    if (t->early_len + len > t->early_cap) {
        size_t cap = t->early_cap ? t->early_cap : 4096;
        while (cap < t->early_len + len)
            cap *= 2;
        char *b = realloc(t->early, cap);
        if (!b) {
            skvd_conn_close(c, false);
            return -1;
        }
        t->early = b;
        t->early_cap = cap;
    }
    memcpy(t->early + t->early_len, buf, len);
    t->early_len += len;
    return 0;
}

/* Drive the handshake; 1 when done, 0 when it needs more bytes, -1 when it
 * failed (the connection is closing). */
static int handshake(skvd_conn *c)
{
    struct skvd_tls *t = c->tls;
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->done = true;
        skvd_log(SKV_LOG_DEBUG, "conn %llu (%s): TLS %s established",
                 (unsigned long long)c->id, c->peer, SSL_get_version(t->ssl));
        if (flush_out(c))
            return -1;
        int rc = t->early_len ? write_plain(c, t->early, t->early_len) : 0;
        free(t->early);
        t->early = NULL;
        t->early_len = t->early_cap = 0;
        return rc ? -1 : 1;
    }
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return flush_out(c) ? -1 : 0;
    fail(c, "handshake");
    return -1;
}

int skvd_tls_start(skvd_conn *c)
{
    return handshake(c) < 0 ? -1 : 0;
}

/* A client speaking plaintext to the TLS port: tell it so in a frame it
 * can read (a TLS record starts with 0x16, handshake). */
static bool refuse_plaintext(skvd_conn *c, const char *p, size_t n)
{
    struct skvd_tls *t = c->tls;
    if (t->sniffed || n == 0)
        return false;
    t->sniffed = true;
    if (!t->ssl || !SSL_is_server(t->ssl) || (unsigned char)p[0] == 0x16)
        return false;
    void *frame = NULL;
    size_t len = 0;
    const char *msg = "this manager port requires TLS: connect with the "
                      "manager's certificate (tls_ca) or its fingerprint "
                      "(tls_pin)";
    skvd_log(SKV_LOG_DEBUG, "conn %llu (%s): plaintext on the TLS port: "
             "closing it", (unsigned long long)c->id, c->peer);
    if (skv_proto_error_encode(&frame, &len, 0, SKV_EPERM, msg, NULL,
                               skvd_now_ms(), NULL, NULL) == 0)
        skvd_conn_send_raw(c, frame, len);
    skv_free(frame);
    skvd_conn_close(c, true);
    return true;
}

/* Hand decrypted bytes on; false when the connection closed meanwhile. */
static bool deliver(skvd_conn *c, size_t n)
{
    uv_buf_t b = uv_buf_init(g_plain, (unsigned)n);
    if (n)
        skvd_conn_read_plain(&c->h.stream, (ssize_t)n, &b);
    return !c->closing;
}

/* Everything OpenSSL can decrypt from what arrived, in buffer-sized
 * pieces; then what it has to send (alerts, key updates). */
static void decrypt(skvd_conn *c)
{
    struct skvd_tls *t = c->tls;
    size_t used = 0;
    for (;;) {
        if (used == sizeof(g_plain)) {
            if (!deliver(c, used))
                return;
            used = 0;
        }
        int r = SSL_read(t->ssl, g_plain + used, (int)(sizeof(g_plain) - used));
        if (r > 0) {
            used += (size_t)r;
            continue;
        }
        int e = SSL_get_error(t->ssl, r);
        if (!deliver(c, used))
            return;
        if (e == SSL_ERROR_ZERO_RETURN) {
            skvd_conn_close(c, true);
            return;
        }
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            fail(c, "read");
            return;
        }
        break;
    }
    flush_out(c);
}

void skvd_tls_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    skvd_conn *c = s->data;
    struct skvd_tls *t = c->tls;
    if (nread < 0) {
        skvd_conn_read_plain(s, nread, buf);
        return;
    }
    if (nread == 0 || c->closing || refuse_plaintext(c, buf->base,
                                                     (size_t)nread))
        return;
    if (BIO_write(t->in, buf->base, (int)nread) != (int)nread) {
        fail(c, "read");
        return;
    }
    if (!t->done && handshake(c) <= 0)
        return;
    decrypt(c);
}

void skvd_tls_shutdown(skvd_conn *c)
{
    if (c->tls && c->tls->done && !c->closing) {
        SSL_shutdown(c->tls->ssl);
        flush_out(c);
    }
}
