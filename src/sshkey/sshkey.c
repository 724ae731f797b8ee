/* Per-session Ed25519 key pairs: creation, getters, wiping.
 * The cryptography is libsodium's (crypto_sign_*); this file only checks
 * arguments and owns the object.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "skv_internal.h"
#include "sshkey_internal.h"

static int check_comment(const char *comment, skv_error *err)
{
    if (!comment)
        return 0;
    size_t n = strnlen(comment, SKV_SSHKEY_COMMENT_MAX + 1);
    if (n > SKV_SSHKEY_COMMENT_MAX)
        return skv__err(err, SKV_EINVAL,
                        "sshkey: comment longer than %d characters",
                        SKV_SSHKEY_COMMENT_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)comment[i];
        if (c < 0x20 || c > 0x7e)
            return skv__err(err, SKV_EINVAL,
                            "sshkey: comment has a non-printable character "
                            "(0x%02x) at offset %zu", c, i);
    }
    return 0;
}

/* Shared tail of both constructors: seed -> key pair -> encoded files. */
static int build(skv_sshkey **out, const uint8_t *seed, const char *comment,
                 skv_error *err)
{
    skv_sshkey *k = skv__calloc(1, sizeof *k);
    if (!k)
        return skv__err(err, SKV_ENOMEM, "sshkey: out of memory");
    if (crypto_sign_seed_keypair(k->pk, k->sk, seed) != 0) {
        skv_sshkey_free(k);
        return skv__err(err, SKV_EINVAL, "sshkey: key derivation failed");
    }
    int rc = skv__sshkey_encode(k, comment ? comment : "", err);
    if (rc) {
        skv_sshkey_free(k);
        return rc;
    }
    *out = k;
    return 0;
}

static int check_args(skv_sshkey **out, const char *comment, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "sshkey: NULL out pointer");
    int rc = check_comment(comment, err);
    if (rc)
        return rc;
    /* sodium_init() is idempotent and thread-safe. */
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "sshkey: libsodium failed to initialise");
    return 0;
}

int skv_sshkey_seed_generate(uint8_t seed[SKV_SSHKEY_SEED_BYTES], skv_error *err)
{
    if (!seed)
        return skv__err(err, SKV_EINVAL, "sshkey: NULL seed");
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "sshkey: libsodium failed to initialise");
    randombytes_buf(seed, SKV_SSHKEY_SEED_BYTES);
    return 0;
}

int skv_sshkey_generate(skv_sshkey **out, const char *comment, skv_error *err)
{
    int rc = check_args(out, comment, err);
    if (rc)
        return rc;
    uint8_t seed[SKV_SSHKEY_SEED_BYTES];
    randombytes_buf(seed, sizeof seed);
    rc = build(out, seed, comment, err);
    sodium_memzero(seed, sizeof seed);
    return rc;
}

int skv_sshkey_from_seed(skv_sshkey **out,
                         const uint8_t seed[SKV_SSHKEY_SEED_BYTES],
                         const char *comment, skv_error *err)
{
    if (!seed)
        return skv__err(err, SKV_EINVAL, "sshkey: NULL seed");
    int rc = check_args(out, comment, err);
    return rc ? rc : build(out, seed, comment, err);
}

void skv_sshkey_free(skv_sshkey *key)
{
    if (!key)
        return;
    if (key->private_text) {
        sodium_memzero(key->private_text, key->private_len);
        skv__free(key->private_text);
    }
    skv__free(key->public_line);
    sodium_memzero(key, sizeof *key);
    skv__free(key);
}

const char *skv_sshkey_private(const skv_sshkey *key)
{
    return key ? key->private_text : NULL;
}

const char *skv_sshkey_public(const skv_sshkey *key)
{
    return key ? key->public_line : NULL;
}

const uint8_t *skv_sshkey_public_raw(const skv_sshkey *key)
{
    return key ? key->pk : NULL;
}
