/* App tokens (service apps through the app proxy): "EXPIRES.MAC.USER",
 * where MAC is libsodium's crypto_auth (HMAC-SHA-512-256) over the
 * session, the service, the user and the expiry, keyed by a subkey
 * derived (crypto_kdf) from the session's stored secret seed. So a token
 * is bound to one session, one service and one user; it survives manager
 * restarts and fail-over (the seed is in the store) and dies with the
 * session's rows. No crypto of our own: derivation, MAC and the
 * constant-time comparison are libsodium's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "mgr_app.h"
#include "sokovan/sshkey.h"

#define KDF_CTX "skvapp01"   /* crypto_kdf_CONTEXTBYTES = 8 */

static int app_key(skv_manager *m, const char *sid,
                   uint8_t key[crypto_auth_KEYBYTES], skv_error *err)
{
    uint8_t seed[SKV_SSHKEY_SEED_BYTES];
    _Static_assert(SKV_SSHKEY_SEED_BYTES == crypto_kdf_KEYBYTES,
                   "the session seed is a KDF master key");
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "libsodium failed to initialise");
    int rc = skv__mgr_net_seed(m, sid, seed, err);
    if (!rc)
        crypto_kdf_derive_from_key(key, crypto_auth_KEYBYTES, 1, KDF_CTX,
                                   seed);
    sodium_memzero(seed, sizeof seed);
    return rc;
}

/* The MAC'd message: NUL-separated, so no field can run into another. */
static int mac_of(skv_manager *m, const char *sid, const char *svc,
                  const char *user, int64_t exp,
                  uint8_t mac[crypto_auth_BYTES], skv_error *err)
{
    uint8_t key[crypto_auth_KEYBYTES];
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    size_t ls = strlen(sid) + 1, lv = strlen(svc) + 1, lu = strlen(user) + 1;
    size_t n = ls + lv + lu + strlen(e);
    uint8_t *msg = skv__malloc(n);
    if (!msg)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    memcpy(msg, sid, ls);
    memcpy(msg + ls, svc, lv);
    memcpy(msg + ls + lv, user, lu);
    memcpy(msg + ls + lv + lu, e, strlen(e));
    int rc = app_key(m, sid, key, err);
    if (!rc)
        crypto_auth(mac, msg, n, key);
    sodium_memzero(key, sizeof key);
    skv__free(msg);
    return rc;
}

char *skv__mgr_app_token_make(skv_manager *m, const char *sid,
                              const char *svc, const char *user, int64_t exp,
                              skv_error *err)
{
    uint8_t mac[crypto_auth_BYTES];
    char hex[2 * crypto_auth_BYTES + 1];
    if (mac_of(m, sid, svc, user, exp, mac, err))
        return NULL;
    sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
    char *t = skv__asprintf("%" PRId64 ".%s.%s", exp, hex, user);
    if (!t)
        skv__err(err, SKV_ENOMEM, "out of memory");
    return t;
}

/* "EXPIRES.MAC.USER" into its parts (user points into token). */
static int split(const char *token, int64_t *exp,
                 uint8_t mac[crypto_auth_BYTES], const char **user)
{
    char *end = NULL;
    long long e = strtoll(token, &end, 10);
    if (end == token || *end != '.' || e <= 0)
        return -1;
    const char *h = end + 1;
    const char *dot = strchr(h, '.');
    size_t got = 0;
    if (!dot || (size_t)(dot - h) != 2 * crypto_auth_BYTES ||
        sodium_hex2bin(mac, crypto_auth_BYTES, h, (size_t)(dot - h), NULL,
                       &got, NULL) != 0 || got != crypto_auth_BYTES ||
        !dot[1])
        return -1;
    *exp = e;
    *user = dot + 1;
    return 0;
}

int skv__mgr_app_token_check(skv_manager *m, const char *sid, const char *svc,
                             const char *token, int64_t now_ms,
                             char *user, size_t ucap, int64_t *exp,
                             skv_error *err)
{
    uint8_t got[crypto_auth_BYTES], want[crypto_auth_BYTES];
    const char *u = NULL;
    if (split(token, exp, got, &u) || strlen(u) >= ucap)
        return skv__err(err, SKV_EPERM, "app token: malformed");
    int rc = mac_of(m, sid, svc, u, *exp, want, err);
    if (rc)
        return rc;
    if (sodium_memcmp(got, want, sizeof want) != 0)
        return skv__err(err, SKV_EPERM, "app token: not valid for session "
                        "%s, service %s", sid, svc);
    if (*exp <= now_ms)
        return skv__err(err, SKV_EPERM, "app token: expired");
    strcpy(user, u);
    return 0;
}
