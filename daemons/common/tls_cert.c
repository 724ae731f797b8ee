/* The manager's TLS certificate: loaded from tls_cert/tls_key, or on first
 * start generated (EC P-256, self-signed, 10 years) into
 * <data_dir>/tls/cert.pem and key.pem (mode 0600) so a cluster gets
 * encryption without a CA; clients and agents pin its SHA-256 fingerprint
 * or use the certificate itself as their CA file. All crypto is OpenSSL's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)
#define VALID_DAYS 3650

/* The last OpenSSL error as text, for messages. */
const char *skvd_tls_errstr(void)
{
    static char buf[256];
    unsigned long e = ERR_get_error();
    if (!e)
        return "unknown TLS error";
    ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return buf;
}

void skvd_tls_fingerprint(char out[SKVD_TLS_FP_LEN], const X509 *x)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    out[0] = 0;
    if (!X509_digest(x, EVP_sha256(), md, &n))
        return;
    for (unsigned i = 0; i < n && i < 32; i++)
        snprintf(out + 3 * i, 4, "%02X%s", md[i], i + 1 < n ? ":" : "");
}

static int add_ext(X509 *x, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

/* Names a client may dial: localhost, this host's name, loopback and the
 * listen address when it is a specific one. */
static void alt_names(char *out, size_t len, const char *listen_host)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(out, len, "DNS:localhost,IP:127.0.0.1,IP:::1");
    if (host[0] && strcmp(host, "localhost") != 0)
        snprintf(out + strlen(out), len - strlen(out), ",DNS:%s", host);
    if (listen_host && listen_host[0] && strcmp(listen_host, "0.0.0.0") &&
        strcmp(listen_host, "::") && strcmp(listen_host, "127.0.0.1") &&
        strcmp(listen_host, "localhost")) {
        unsigned char a[16];
        bool ip = inet_pton(AF_INET, listen_host, a) == 1 ||
                  inet_pton(AF_INET6, listen_host, a) == 1;
        snprintf(out + strlen(out), len - strlen(out), ",%s:%s",
                 ip ? "IP" : "DNS", listen_host);
    }
}

static int fill_cert(X509 *x, EVP_PKEY *pk, const char *listen_host)
{
    char san[1024];
    BIGNUM *bn = BN_new();
    int rc = -1;
    if (!bn || !BN_rand(bn, 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
        !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
        goto out;
    X509_NAME *name = X509_get_subject_name(x);
    if (!X509_set_version(x, 2) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
        !X509_time_adj_ex(X509_getm_notAfter(x), VALID_DAYS, 0, NULL) ||
        !X509_set_pubkey(x, pk) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                    (const unsigned char *)"sokovan-manager",
                                    -1, -1, 0) ||
        !X509_set_issuer_name(x, name))
        goto out;
    alt_names(san, sizeof(san), listen_host);
    if (add_ext(x, NID_basic_constraints, "critical,CA:TRUE") ||
        add_ext(x, NID_key_usage, "critical,digitalSignature,keyCertSign") ||
        add_ext(x, NID_ext_key_usage, "serverAuth") ||
        add_ext(x, NID_subject_alt_name, san) ||
        !X509_sign(x, pk, EVP_sha256()))
        goto out;
    rc = 0;
out:
    BN_free(bn);
    return rc;
}

/* Write via a temporary file renamed into place, so a crash never leaves
 * half a key; the key is 0600 from its creation. */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *pk, X509 *x,
                     char *why, size_t wl)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return WHY("%s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return WHY("%s: %s", tmp, strerror(errno));
    }
    int ok = pk ? PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL)
                : PEM_write_X509(f, x);
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return WHY("cannot write %s", path);
    }
    return 0;
}

static int generate(const char *cert, const char *key,
                    const char *listen_host, char *why, size_t wl)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    int rc = -1;
    if (!pk || !x || fill_cert(x, pk, listen_host)) {
        snprintf(why, wl, "cannot generate a TLS certificate: %s",
                 skvd_tls_errstr());
    } else if (skvd_mkdirs_parent(key, why, wl) == 0 &&
               write_pem(key, 0600, pk, NULL, why, wl) == 0 &&
               write_pem(cert, 0644, NULL, x, why, wl) == 0) {
        skvd_log(SKV_LOG_INFO, "generated TLS certificate %s (key %s)", cert,
                 key);
        rc = 0;
    }
    EVP_PKEY_free(pk);
    X509_free(x);
    return rc;
}

int skvd_tls_cert_ensure(const char *cert, const char *key,
                         const char *listen_host, char *why, size_t wl)
{
    bool have_cert = access(cert, F_OK) == 0;
    bool have_key = access(key, F_OK) == 0;
    if (have_cert && have_key)
        return 0;
    if (have_cert != have_key)
        return WHY("%s exists but %s does not: remove it to have a new "
                   "pair generated, or configure tls_cert and tls_key",
                   have_cert ? cert : key, have_cert ? key : cert);
    return generate(cert, key, listen_host, why, wl);
}
