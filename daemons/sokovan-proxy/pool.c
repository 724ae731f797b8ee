/* Upstream keep-alive: one h2o socket pool per target host:port, so a
 * service that keeps connections open (Jupyter, most HTTP servers) is not
 * reconnected for every request. Idle pooled connections close after
 * POOL_IDLE_MS: an ended session's host port may soon be another
 * session's, and a pooled connection to the old kernel is dead by then.
 * At most POOLS targets; beyond that a request connects on its own.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "proxy.h"

#define POOLS 256
#define POOL_IDLE_MS 2000

typedef struct pool {
    char key[80];
    h2o_socketpool_t sp;
} pool;

static pool g_pools[POOLS];
static size_t g_n;

h2o_socketpool_t *proxy_pool_for(proxy *p, const proxy_target *t)
{
    char key[80];
    snprintf(key, sizeof key, "%s:%u", t->host, t->port);
    for (size_t i = 0; i < g_n; i++)
        if (!strcmp(g_pools[i].key, key))
            return &g_pools[i].sp;
    if (g_n == POOLS)
        return NULL;
    pool *x = &g_pools[g_n++];
    snprintf(x->key, sizeof x->key, "%s", key);
    h2o_socketpool_init_by_hostport(&x->sp, h2o_iovec_init(t->host,
                                                           strlen(t->host)),
                                    t->port, 0, SIZE_MAX);
    h2o_socketpool_set_timeout(&x->sp, &p->loop, POOL_IDLE_MS);
    return &x->sp;
}
