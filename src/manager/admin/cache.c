/* The submit path's admin answers kept in memory: the key names the
 * question (a kind letter and its arguments), the store keeps the answer
 * and forgets it on every admin change, rollback and fence
 * (store/admin_cache.h says why that is enough). Only answers that let a
 * submission through are kept: a refusal reads the rows again and builds
 * its message from them.
 * SPDX-License-Identifier: Apache-2.0 */
#include "../store/admin_cache.h"
#include "admin_int.h"

/* Names are printable ASCII without spaces (name_check), so the unit
 * separator cannot be part of one and keys cannot collide. false when the
 * key does not fit (then nothing is cached). */
static bool key_of(char *k, size_t ksz, char kind, const char *a,
                   const char *b, const char *c)
{
    int n = snprintf(k, ksz, "%c\x1f%s\x1f%s\x1f%s", kind, a, b ? b : "",
                     c ? c : "");
    return n > 0 && (size_t)n < ksz;
}

bool skv__mgr_admin_cached(skv__mgr_admin_ctx *ctx, char kind, const char *a,
                           const char *b, const char *c, void *out, size_t n)
{
    char k[SKV__ADMIN_CACHE_KEY];
    return key_of(k, sizeof k, kind, a, b, c) &&
           skv__mgr_store_admin_cache_get(ctx->db, k, out, n);
}

void skv__mgr_admin_remember(skv__mgr_admin_ctx *ctx, char kind,
                             const char *a, const char *b, const char *c,
                             const void *val, size_t n)
{
    char k[SKV__ADMIN_CACHE_KEY];
    if (key_of(k, sizeof k, kind, a, b, c))
        skv__mgr_store_admin_cache_put(ctx->db, k, val, n);
}
