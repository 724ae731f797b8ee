/* The resolved-token cache: a chained hash of at most CACHE_MAX entries, each
 * trusted until its until_ms. Full: expired entries go first, then all
 * (a miss only costs one app.resolve).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

#define BUCKETS 1024u
#define CACHE_MAX 8192u

typedef struct entry {
    struct entry *next;
    proxy_target t;
    char key[];
} entry;

struct proxy_cache {
    entry *b[BUCKETS];
    size_t n;
};

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;  /* FNV-1a: spread, not secrecy */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % BUCKETS;
}

int proxy_cache_new(proxy_cache **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : -1;
}

static void drop(proxy_cache *c, int64_t now_ms, bool all)
{
    for (unsigned i = 0; i < BUCKETS; i++)
        for (entry **pp = &c->b[i]; *pp;) {
            entry *e = *pp;
            if (all || e->t.until_ms <= now_ms) {
                *pp = e->next;
                free(e);
                c->n--;
            } else {
                pp = &e->next;
            }
        }
}

void proxy_cache_free(proxy_cache *c)
{
    if (c)
        drop(c, 0, true);
    free(c);
}

int proxy_cache_get(proxy_cache *c, const char *key, int64_t now_ms,
                    proxy_target *t)
{
    for (entry *e = c->b[hash(key)]; e; e = e->next)
        if (!strcmp(e->key, key)) {
            if (e->t.until_ms <= now_ms)
                return 0;
            *t = e->t;
            return 1;
        }
    return 0;
}

void proxy_cache_put(proxy_cache *c, const char *key, const proxy_target *t,
                     int64_t now_ms)
{
    unsigned h = hash(key);
    for (entry *e = c->b[h]; e; e = e->next)
        if (!strcmp(e->key, key)) {
            e->t = *t;
            return;
        }
    if (c->n >= CACHE_MAX)
        drop(c, now_ms, false);
    if (c->n >= CACHE_MAX)
        drop(c, now_ms, true);
    size_t kl = strlen(key) + 1;
    entry *e = malloc(sizeof *e + kl);
    if (!e)
        return;   /* not cached: the next request asks again */
    memcpy(e->key, key, kl);
    e->t = *t;
    e->next = c->b[h];
    c->b[h] = e;
    c->n++;
}
