/* The verifier: known keys (secrets wiped on removal), the timestamp skew
 * window and the per-key replay caches.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "auth_internal.h"
#include "nonce_cache.h"
#include "skv_internal.h"

typedef struct key_entry {
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    char *secret;
    size_t secret_len;
    skv_auth_principal principal;
    skv__nonce_cache cache;
} key_entry;

struct skv_auth_verifier {
    skv_auth_verifier_options opts;
    key_entry **keys; /* sorted by access key */
    size_t nkeys;
    int64_t high_water_ms; /* latest "now" seen: clocks stepping back never
                            * reopen a window whose nonces were dropped */
    uint8_t hash_key[crypto_shorthash_KEYBYTES];
};

static void entry_free(key_entry *e)
{
    if (!e)
        return;
    skv__nonce_cache_clear(&e->cache);
    if (e->secret) {
        sodium_memzero(e->secret, e->secret_len);
        skv__free(e->secret);
    }
    sodium_memzero(e, sizeof *e);
    skv__free(e);
}

int skv_auth_verifier_new(skv_auth_verifier **out,
                          const skv_auth_verifier_options *opts, skv_error *err)
{
    skv_auth_verifier_options def = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    if (!out)
        return skv__err(err, SKV_EINVAL, "verifier_new: NULL out-pointer");
    if (!opts)
        opts = &def;
    if (opts->version != SKV_AUTH_VERIFIER_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION,
                        "verifier options version %u, expected %u",
                        opts->version, SKV_AUTH_VERIFIER_OPTIONS_VERSION);
    if (opts->max_skew_ms <= 0 || opts->max_skew_ms > INT64_MAX / 4)
        return skv__err(err, SKV_EINVAL, "verifier: max_skew_ms must be > 0");
    if (opts->max_nonces_per_key == 0 || opts->max_nonces_per_key > SIZE_MAX / 64)
        return skv__err(err, SKV_EINVAL,
                        "verifier: max_nonces_per_key must be > 0");
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "libsodium failed to initialise");
    skv_auth_verifier *v = skv__calloc(1, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "verifier_new: out of memory");
    v->opts = *opts;
    v->high_water_ms = INT64_MIN;
    crypto_shorthash_keygen(v->hash_key);
    *out = v;
    return 0;
}

void skv_auth_verifier_free(skv_auth_verifier *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->nkeys; i++)
        entry_free(v->keys[i]);
    skv__free(v->keys);
    sodium_memzero(v, sizeof *v);
    skv__free(v);
}

/* Index of access_key, or -(insertion point) - 1. */
static ptrdiff_t find_key(const skv_auth_verifier *v, const char *ak)
{
    size_t lo = 0, hi = v->nkeys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ak, v->keys[mid]->access_key);
        if (c == 0)
            return (ptrdiff_t)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -(ptrdiff_t)lo - 1;
}

static int check_principal(const skv_auth_principal *p, skv_error *err)
{
    if (!p)
        return skv__err(err, SKV_EINVAL, "add_key: NULL principal");
    size_t n = strnlen(p->user, SKV_AUTH_USER_MAX);
    if (n == 0 || n >= SKV_AUTH_USER_MAX)
        return skv__err(err, SKV_EINVAL, "add_key: principal user empty or "
                        "not terminated within %d bytes", SKV_AUTH_USER_MAX);
    if (strcmp(skv_auth_role_name(p->role), "?") == 0)
        return skv__err(err, SKV_EINVAL, "add_key: unknown role %d", (int)p->role);
    return 0;
}

int skv_auth_verifier_add_key(skv_auth_verifier *v, const char *ak,
                              const char *sk, const skv_auth_principal *p,
                              skv_error *err)
{
    if (!v)
        return skv__err(err, SKV_EINVAL, "add_key: NULL verifier");
    int rc = skv_auth_access_key_check(ak, err);
    if (!rc)
        rc = skv_auth_secret_key_check(sk, err);
    if (!rc)
        rc = check_principal(p, err);
    if (rc)
        return rc;
    ptrdiff_t at = find_key(v, ak);
    if (at >= 0)
        return skv__err(err, SKV_EEXIST, "access key '%s' already known", ak);
    size_t pos = (size_t)(-at - 1);
    key_entry **nk = skv__reallocarray(v->keys, v->nkeys + 1, sizeof *nk);
    if (!nk)
        return skv__err(err, SKV_ENOMEM, "add_key: out of memory");
    v->keys = nk;
    key_entry *e = skv__calloc(1, sizeof *e);
    if (e)
        e->secret = skv__strdup(sk);
    if (!e || !e->secret) {
        entry_free(e);
        return skv__err(err, SKV_ENOMEM, "add_key: out of memory");
    }
    skv__nonce_cache_init(&e->cache);
    e->secret_len = strlen(sk);
    strcpy(e->access_key, ak);
    e->principal = *p;
    memmove(nk + pos + 1, nk + pos, (v->nkeys - pos) * sizeof *nk);
    nk[pos] = e;
    v->nkeys++;
    return 0;
}

int skv_auth_verifier_remove_key(skv_auth_verifier *v, const char *ak,
                                 skv_error *err)
{
    if (!v || !ak)
        return skv__err(err, SKV_EINVAL, "remove_key: NULL argument");
    ptrdiff_t at = find_key(v, ak);
    if (at < 0)
        return skv__err(err, SKV_ENOENT, "access key '%.63s' not known", ak);
    entry_free(v->keys[at]);
    memmove(v->keys + at, v->keys + at + 1,
            (v->nkeys - (size_t)at - 1) * sizeof *v->keys);
    v->nkeys--;
    return 0;
}

size_t skv_auth_verifier_key_count(const skv_auth_verifier *v)
{
    return v ? v->nkeys : 0;
}

size_t skv_auth_verifier_nonce_count(const skv_auth_verifier *v, const char *ak)
{
    if (!v || !ak)
        return 0;
    ptrdiff_t at = find_key(v, ak);
    return at < 0 ? 0 : v->keys[at]->cache.total;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Timestamp inside [max(now, high water) - skew, now + skew]? */
static int check_time(skv_auth_verifier *v, int64_t ts, int64_t now,
                      skv_error *err)
{
    int64_t skew = v->opts.max_skew_ms;
    int64_t base = now > v->high_water_ms ? now : v->high_water_ms;
    if (ts < sat_add(base, -skew))
        return skv__err(err, SKV_EAUTH,
                        "stale request: timestamp %lld ms is more than %lld ms "
                        "in the past", (long long)ts, (long long)skew);
    if (ts > sat_add(now, skew))
        return skv__err(err, SKV_EAUTH,
                        "request from the future: timestamp %lld ms is more "
                        "than %lld ms ahead", (long long)ts, (long long)skew);
    return 0;
}

int skv_auth_verify(skv_auth_verifier *v, skv_auth_principal *principal,
                    const skv_auth_block *block, const skv_auth_message *msg,
                    int64_t now_ms, skv_error *err)
{
    if (!v)
        return skv__err(err, SKV_EINVAL, "verify: NULL verifier");
    skv_error why = SKV_ERROR_INIT;
    int rc = skv__auth_check_inputs(block, msg, &why);
    if (rc)
        return skv__err(err, SKV_EAUTH, "malformed auth block: %s", why.message);
    ptrdiff_t at = find_key(v, block->access_key);
    if (at < 0)
        return skv__err(err, SKV_EAUTH, "unknown access key '%s'",
                        block->access_key);
    key_entry *e = v->keys[at];
    if (now_ms > v->high_water_ms) /* now_ms is the caller's own clock */
        v->high_water_ms = now_ms;
    rc = check_time(v, block->timestamp_ms, now_ms, err);
    if (rc)
        return rc;
    uint8_t mac[SKV_AUTH_SIG_BYTES];
    rc = skv__auth_hmac(mac, block, msg, e->secret, e->secret_len, err);
    if (rc)
        return rc;
    if (crypto_verify_32(mac, block->signature) != 0)
        return skv__err(err, SKV_EAUTH, "bad signature for access key '%s'",
                        block->access_key);
    skv__nonce_cache_expire(&e->cache, sat_add(v->high_water_ms,
                            -v->opts.max_skew_ms), v->opts.max_skew_ms);
    rc = skv__nonce_cache_insert(&e->cache, block->nonce, block->timestamp_ms,
                                 v->opts.max_skew_ms, v->opts.max_nonces_per_key,
                                 v->hash_key, err);
    if (rc)
        return rc;
    if (principal)
        *principal = e->principal;
    return 0;
}

int skv_auth_verifier_remember(skv_auth_verifier *v, const char *ak,
                               const uint8_t *nonce, int64_t ts,
                               int64_t now_ms, skv_error *err)
{
    if (!v || !ak || !nonce)
        return skv__err(err, SKV_EINVAL, "remember: NULL argument");
    ptrdiff_t at = find_key(v, ak);
    if (at < 0)
        return skv__err(err, SKV_ENOENT, "access key '%.63s' not known", ak);
    if (now_ms > v->high_water_ms)
        v->high_water_ms = now_ms;
    if (check_time(v, ts, now_ms, NULL))
        return 0;    /* stale or future: refused by check_time anyway */
    key_entry *e = v->keys[at];
    if (ts < e->cache.floor_ms)
        return 0;    /* refused by the key's floor anyway */
    skv__nonce_cache_expire(&e->cache, sat_add(v->high_water_ms,
                            -v->opts.max_skew_ms), v->opts.max_skew_ms);
    skv_error why = SKV_ERROR_INIT;
    int rc = skv__nonce_cache_insert(&e->cache, nonce, ts,
                                     v->opts.max_skew_ms,
                                     v->opts.max_nonces_per_key, v->hash_key,
                                     &why);
    if (rc == SKV_EAUTH)
        return 0;    /* known already */
    return rc ? skv__err(err, rc, "%s", why.message) : 0;
}
