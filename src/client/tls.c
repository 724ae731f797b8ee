/* TLS for the blocking client (OpenSSL on the socket). The manager is
 * verified by a CA file (the chain, and the endpoint's host name or IP
 * against the certificate) or by a pinned SHA-256 fingerprint of its
 * certificate, compared after the handshake and before any request is
 * sent. The socket is non-blocking under SSL so every wait goes through
 * poll with the deadline's time left, as without TLS.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "client_internal.h"

int skv__client_pin_parse(unsigned char pin[32], const char *text)
{
    size_t n = 0;
    if (strncasecmp(text, "sha256:", 7) == 0)
        text += 7;
    for (const char *p = text; *p; p++) {
        if (*p == ':')
            continue;
        if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) ||
            n == 32)
            return -1;
        char hex[3] = {p[0], p[1], 0};
        pin[n++] = (unsigned char)strtoul(hex, NULL, 16);
        p++;
    }
    return n == 32 ? 0 : -1;
}

/* The reason of a failed TLS call: the verification result first. */
static const char *ssl_why(SSL *s, char *buf, size_t len)
{
    long v = s ? SSL_get_verify_result(s) : X509_V_OK;
    unsigned long e = ERR_get_error();
    if (v != X509_V_OK)
        snprintf(buf, len, "certificate verification failed: %s",
                 X509_verify_cert_error_string(v));
    else if (e)
        ERR_error_string_n(e, buf, len);
    else
        snprintf(buf, len, "the manager closed the connection");
    ERR_clear_error();
    return buf;
}

/* Wait for what SSL asked for; 0, or an error. */
static int ssl_wait(skv_client *c, int r, skv__client_deadline d,
                    const char *what, skv_error *err)
{
    int e = SSL_get_error(c->tls, r);
    short ev = e == SSL_ERROR_WANT_READ ? POLLIN
               : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    char why[256];
    if (!ev) {
        if (e == SSL_ERROR_ZERO_RETURN ||
            (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
            ERR_clear_error();
            return skv__err(err, SKV_EIO, "the manager closed the "
                            "connection");
        }
        return skv__err(err, SKV_EIO, "TLS %s: %s", what,
                        ssl_why(c->tls, why, sizeof why));
    }
    struct pollfd p = {c->fd, ev, 0};
    for (;;) {
        int n = poll(&p, 1, skv__client_deadline_left(d));
        if (n > 0)
            return 0;
        if (n == 0)
            return skv__err(err, SKV_ETIMEDOUT, "timed out %s", what);
        if (errno != EINTR)
            return skv__err_sys(err, errno, "poll while %s", what);
    }
}

static int pin_check(skv_client *c, const char *pin, skv_error *err)
{
    unsigned char want[32], md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    X509 *x = SSL_get1_peer_certificate(c->tls);
    int ok = x && X509_digest(x, EVP_sha256(), md, &n) && n == 32;
    X509_free(x);
    skv__client_pin_parse(want, pin);
    if (!ok || memcmp(md, want, 32) != 0) {
        char got[3 * 32 + 1] = "";
        for (unsigned i = 0; ok && i < 32; i++)
            snprintf(got + 3 * i, 4, "%02X%s", md[i], i < 31 ? ":" : "");
        return skv__err(err, SKV_EAUTH, "TLS: the manager's certificate "
                        "(SHA-256 %s) does not match the pinned fingerprint",
                        got[0] ? got : "unknown");
    }
    return 0;
}

static int ctx_new(SSL_CTX **out, const char *ca_file, skv_error *err)
{
    char why[256];
    SSL_CTX *x = SSL_CTX_new(TLS_client_method());
    if (!x)
        return skv__err(err, SKV_ENOMEM, "TLS: %s", ssl_why(NULL, why,
                                                            sizeof why));
    SSL_CTX_set_min_proto_version(x, TLS1_2_VERSION);
    SSL_CTX_set_options(x, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(x, ca_file ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    if (ca_file && SSL_CTX_load_verify_locations(x, ca_file, NULL) != 1) {
        SSL_CTX_free(x);
        return skv__err(err, SKV_EINVAL, "tls_ca_file %s: %s", ca_file,
                        ssl_why(NULL, why, sizeof why));
    }
    *out = x;
    return 0;
}

static int ssl_new(skv_client *c, SSL_CTX *x, const char *host, bool by_ca,
                   skv_error *err)
{
    int fl = fcntl(c->fd, F_GETFL);
    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return skv__err_sys(err, errno, "TLS: fcntl");
    if (!(c->tls = SSL_new(x)) || SSL_set_fd(c->tls, c->fd) != 1)
        return skv__err(err, SKV_ENOMEM, "TLS: out of memory");
    if (by_ca && SSL_set1_host(c->tls, host) != 1)
        return skv__err(err, SKV_EINVAL, "TLS: cannot check host '%s'", host);
    if (!strchr(host, ':') && strspn(host, "0123456789.") != strlen(host))
        SSL_set_tlsext_host_name(c->tls, host);
    return 0;
}

int skv__client_tls_open(skv_client *c, const char *host, const char *ca_file,
                         const char *pin, skv__client_deadline d,
                         skv_error *err)
{
    SSL_CTX *x;
    int rc = ctx_new(&x, ca_file, err);
    if (rc)
        return rc;
    rc = ssl_new(c, x, host, ca_file != NULL, err);
    SSL_CTX_free(x);            /* the SSL holds its own reference */
    while (!rc) {
        int r = SSL_connect(c->tls);
        if (r == 1)
            break;
        rc = ssl_wait(c, r, d, "handshake with the manager", err);
        if (rc == SKV_EIO && err &&
            SSL_get_verify_result(c->tls) == X509_V_OK)
            snprintf(err->message + strlen(err->message),
                     sizeof err->message - strlen(err->message),
                     " (does the manager's tcp listener speak TLS?)");
    }
    if (!rc && pin)
        rc = pin_check(c, pin, err);
    return rc;
}

int skv__client_tls_write_all(skv_client *c, const void *buf, size_t len,
                              skv__client_deadline d, skv_error *err)
{
    const char *p = buf;
    while (len > 0) {
        int n = SSL_write(c->tls, p, len > INT32_MAX ? INT32_MAX : (int)len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        int rc = ssl_wait(c, n, d, "sending the request", err);
        if (rc)
            return rc;
    }
    return 0;
}

int skv__client_tls_read_some(skv_client *c, skv__client_deadline d,
                              skv_error *err)
{
    char buf[16384];
    for (;;) {
        int n = SSL_read(c->tls, buf, sizeof buf);
        if (n > 0)
            return skv_proto_reader_feed(c->reader, buf, (size_t)n, err);
        int rc = ssl_wait(c, n, d, "waiting for the response", err);
        if (rc)
            return rc;
    }
}

void skv__client_tls_close(skv_client *c)
{
    if (!c->tls)
        return;
    SSL_free(c->tls);
    c->tls = NULL;
}
