/* The network context of a daemon: callbacks, limits, connections.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "skvd.h"

void skvd_net_init(skvd_net *n, uv_loop_t *loop, const skvd_net_cbs *cbs,
                   void *ctx, size_t max_frame, size_t max_queue)
{
    memset(n, 0, sizeof(*n));
    n->loop = loop;
    n->cbs = *cbs;
    n->ctx = ctx;
    n->max_frame = max_frame;
    n->max_queue = max_queue;
    n->unix_mode = 0660;
    n->unix_gid = -1;
}

void skvd_net_stop(skvd_net *n)
{
    n->stopping = true;
    skvd_limits_stop(n);
    skvd_listeners_close(n);
    skvd_connect_stop(n);
    for (skvd_conn *c = n->conns; c; c = c->next)
        skvd_conn_close(c, false);
}

void skvd_net_release(skvd_net *n)
{
    skvd_tls_ctx_free(n->tls_listen);
    skvd_tls_ctx_free(n->tls_connect);
    n->tls_listen = n->tls_connect = NULL;
    free(n->buckets);
    n->buckets = NULL;
    n->nbuckets = n->count = 0;
}
