/* Key generation and syntax checks, role names, wiping.
 * All randomness comes from libsodium's CSPRNG: keys and nonces must be
 * unpredictable, so they are the one place where no seed is taken.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/auth.h"

#define ACCESS_KEY_RANDOM_BYTES 10 /* 20 hex digits */
#define SECRET_RANDOM_BYTES 32

/* libsodium must be initialised once; sodium_init() is itself idempotent
 * and thread-safe, so calling it before every use is fine. */
static int ensure_sodium(skv_error *err)
{
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "libsodium failed to initialise");
    return 0;
}

void skv_auth_wipe(void *buf, size_t len)
{
    if (buf && len)
        sodium_memzero(buf, len);
}

int skv_auth_nonce_generate(uint8_t nonce[SKV_AUTH_NONCE_BYTES], skv_error *err)
{
    if (!nonce)
        return skv__err(err, SKV_EINVAL, "nonce_generate: NULL buffer");
    int rc = ensure_sodium(err);
    if (!rc)
        randombytes_buf(nonce, SKV_AUTH_NONCE_BYTES);
    return rc;
}

int skv_auth_keypair_generate(char *access_key, char *secret_key,
                              skv_error *err)
{
    unsigned char raw[SECRET_RANDOM_BYTES];
    if (!access_key || !secret_key)
        return skv__err(err, SKV_EINVAL, "keypair_generate: NULL buffer");
    int rc = ensure_sodium(err);
    if (rc)
        return rc;
    randombytes_buf(raw, ACCESS_KEY_RANDOM_BYTES);
    access_key[0] = 'A';
    access_key[1] = 'K';
    sodium_bin2hex(access_key + 2, SKV_AUTH_ACCESS_KEY_MAX - 2, raw,
                   ACCESS_KEY_RANDOM_BYTES);
    for (char *c = access_key + 2; *c; c++)
        if (*c >= 'a' && *c <= 'f')
            *c = (char)(*c - 'a' + 'A');
    randombytes_buf(raw, sizeof raw);
    sodium_bin2base64(secret_key, SKV_AUTH_SECRET_KEY_MAX, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
    return 0;
}

int skv_auth_access_key_check(const char *ak, skv_error *err)
{
    if (!ak || !*ak)
        return skv__err(err, SKV_EINVAL, "access key is empty");
    size_t n = strnlen(ak, SKV_AUTH_ACCESS_KEY_MAX);
    if (n >= SKV_AUTH_ACCESS_KEY_MAX)
        return skv__err(err, SKV_EINVAL, "access key longer than %d characters",
                        SKV_AUTH_ACCESS_KEY_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        char c = ak[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok)
            return skv__err(err, SKV_EINVAL,
                            "access key: invalid character at offset %zu", i);
    }
    return 0;
}

/* Messages about secrets never quote the secret itself. */
int skv_auth_secret_key_check(const char *sk, skv_error *err)
{
    if (!sk)
        return skv__err(err, SKV_EINVAL, "secret key is NULL");
    size_t n = strnlen(sk, SKV_AUTH_SECRET_KEY_MAX);
    if (n >= SKV_AUTH_SECRET_KEY_MAX || n < SKV_AUTH_SECRET_KEY_MIN)
        return skv__err(err, SKV_EINVAL,
                        "secret key must be %d..%d characters long",
                        SKV_AUTH_SECRET_KEY_MIN, SKV_AUTH_SECRET_KEY_MAX - 1);
    for (size_t i = 0; i < n; i++)
        if (sk[i] < 0x21 || sk[i] > 0x7e)
            return skv__err(err, SKV_EINVAL,
                            "secret key: non-printable character at offset %zu",
                            i);
    return 0;
}

const char *skv_auth_role_name(skv_auth_role role)
{
    switch (role) {
    case SKV_AUTH_ROLE_USER: return "user";
    case SKV_AUTH_ROLE_ADMIN: return "admin";
    case SKV_AUTH_ROLE_AGENT: return "agent";
    }
    return "?";
}

int skv_auth_role_parse(skv_auth_role *out, const char *name, skv_error *err)
{
    static const skv_auth_role roles[] = {SKV_AUTH_ROLE_USER, SKV_AUTH_ROLE_ADMIN,
                                          SKV_AUTH_ROLE_AGENT};
    if (!out || !name)
        return skv__err(err, SKV_EINVAL, "role_parse: NULL argument");
    for (size_t i = 0; i < SKV__ARRAY_LEN(roles); i++) {
        if (strcmp(name, skv_auth_role_name(roles[i])) == 0) {
            *out = roles[i];
            return 0;
        }
    }
    return skv__err(err, SKV_EINVAL,
                    "unknown role '%.64s' (expected user, admin or agent)", name);
}
