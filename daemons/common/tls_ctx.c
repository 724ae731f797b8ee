/* TLS contexts of the daemons: the manager's server side (its certificate)
 * and the agent's client side (verifying the manager by a CA file, the
 * host name or IP checked, or by a pinned SHA-256 fingerprint).
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

struct skvd_tls_ctx {
    SSL_CTX *ssl;
    bool server;
    bool pinned;                /* verify by pin instead of the CA */
    unsigned char pin[32];
};

int skvd_tls_pin_parse(unsigned char pin[32], const char *text)
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

static int base_ctx(skvd_tls_ctx **out, bool server, char *why, size_t wl)
{
    skvd_tls_ctx *t = calloc(1, sizeof(*t));
    if (!t)
        return WHY("out of memory");
    t->server = server;
    t->ssl = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!t->ssl) {
        free(t);
        return WHY("TLS: %s", skvd_tls_errstr());
    }
    SSL_CTX_set_min_proto_version(t->ssl, TLS1_2_VERSION);
    /* A peer vanishing without close_notify is a closed connection, as
     * it is without TLS; frames carry their own lengths. */
    SSL_CTX_set_options(t->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_app_data(t->ssl, t);
    *out = t;
    return 0;
}

int skvd_tls_server_ctx(skvd_tls_ctx **out, const char *cert,
                        const char *key, char *why, size_t wl)
{
    skvd_tls_ctx *t;
    char fp[SKVD_TLS_FP_LEN];
    if (base_ctx(&t, true, why, wl))
        return -1;
    SSL_CTX_set_num_tickets(t->ssl, 0); /* no resumption: one less secret */
    if (SSL_CTX_use_certificate_chain_file(t->ssl, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(t->ssl, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(t->ssl) != 1) {
        snprintf(why, wl, "TLS certificate %s / key %s: %s", cert, key,
                 skvd_tls_errstr());
        skvd_tls_ctx_free(t);
        return -1;
    }
    skvd_tls_fingerprint(fp, SSL_CTX_get0_certificate(t->ssl));
    skvd_log(SKV_LOG_INFO, "TLS certificate %s, SHA-256 fingerprint %s",
             cert, fp);
    *out = t;
    return 0;
}

/* Pinned: the chain does not matter, the leaf's digest does. */
static int verify_cb(int ok, X509_STORE_CTX *st)
{
    SSL *ssl = X509_STORE_CTX_get_ex_data(
        st, SSL_get_ex_data_X509_STORE_CTX_idx());
    skvd_tls_ctx *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    if (!t->pinned)
        return ok;
    if (X509_STORE_CTX_get_error_depth(st) > 0)
        return 1;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    X509 *leaf = X509_STORE_CTX_get_current_cert(st);
    if (leaf && X509_digest(leaf, EVP_sha256(), md, &n) && n == 32 &&
        memcmp(md, t->pin, 32) == 0) {
        X509_STORE_CTX_set_error(st, X509_V_OK);
        return 1;
    }
    X509_STORE_CTX_set_error(st, X509_V_ERR_CERT_REJECTED);
    return 0;
}

int skvd_tls_client_ctx(skvd_tls_ctx **out, const char *ca_file,
                        const char *pin, char *why, size_t wl)
{
    skvd_tls_ctx *t;
    if (base_ctx(&t, false, why, wl))
        return -1;
    if (pin && skvd_tls_pin_parse(t->pin, pin)) {
        skvd_tls_ctx_free(t);
        return WHY("tls_pin '%s' is not a SHA-256 fingerprint (64 hex "
                   "digits, ':' allowed)", pin);
    }
    t->pinned = pin != NULL;
    if (ca_file && SSL_CTX_load_verify_locations(t->ssl, ca_file, NULL) != 1) {
        snprintf(why, wl, "tls_ca %s: %s", ca_file, skvd_tls_errstr());
        skvd_tls_ctx_free(t);
        return -1;
    }
    SSL_CTX_set_verify(t->ssl, SSL_VERIFY_PEER, verify_cb);
    *out = t;
    return 0;
}

void skvd_tls_ctx_free(skvd_tls_ctx *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ssl);
    free(t);
}

/* A new SSL for one connection; host: the name or IP the client dialled
 * (checked against the certificate when verifying by CA). */
SSL *skvd_tls_ssl_new(skvd_tls_ctx *t, const char *host)
{
    SSL *s = SSL_new(t->ssl);
    if (!s)
        return NULL;
    if (t->server) {
        SSL_set_accept_state(s);
        return s;
    }
    SSL_set_connect_state(s);
    if (host && !t->pinned && SSL_set1_host(s, host) != 1) {
        SSL_free(s);
        return NULL;
    }
    if (host && !strpbrk(host, ":") && strspn(host, "0123456789.") !=
        strlen(host))
        SSL_set_tlsext_host_name(s, host);
    return s;
}
