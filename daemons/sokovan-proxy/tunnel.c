/* `sokovan app`: a request with "Upgrade: sokovan-tunnel" becomes a raw
 * byte stream to the service's port. h2o writes the 101 answer and
 * splices the two sockets (h2o_tunnel_establish); this only connects the
 * upstream side first, so a refused connection is still an HTTP error.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

typedef struct tun {
    proxy *p;
    h2o_req_t *req;             /* NULL once h2o disposed of the request */
    struct tun **slot;
    h2o_socket_t *up;
} tun;

static void on_dispose(void *mem)
{
    tun **slot = mem;
    if (*slot)
        (*slot)->req = NULL;
}

static void on_upgraded(void *data, h2o_socket_t *sock, size_t reqsize)
{
    tun *t = data;
    if (sock) {
        h2o_buffer_consume(&sock->input, reqsize);
        h2o_tunnel_establish(&t->p->ctx, sock, t->up, &t->p->io_timeout);
    } else {
        h2o_socket_close(t->up);
    }
    free(t);
}

static void on_connect(h2o_socket_t *sock, const char *err)
{
    tun *t = sock->data;
    h2o_req_t *req = t->req;
    if (req)
        *t->slot = NULL;
    if (!req || err) {
        h2o_socket_close(sock);
        if (req)
            h2o_send_error_generic(req, 502, "Bad Gateway",
                                   "the service's port refused the "
                                   "connection\n", 0);
        free(t);
        return;
    }
    t->up = sock;
    req->res.status = 101;
    req->res.reason = "Switching Protocols";
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_UPGRADE, NULL,
                   H2O_STRLIT(PROXY_TUNNEL));
    h2o_http1_upgrade(req, NULL, 0, on_upgraded, t);
}

void proxy_tunnel_start(proxy *p, h2o_req_t *req, const proxy_target *target)
{
    struct sockaddr_in sa;
    if (req->version >= 0x200 ||
        uv_ip4_addr(target->host, target->port, &sa)) {
        h2o_send_error_generic(req, 400, "Bad Request", "a tunnel needs "
                               "HTTP/1.1 and an IPv4 target\n", 0);
        return;
    }
    tun *t = calloc(1, sizeof *t);
    h2o_socket_t *s = t ? h2o_socket_connect(&p->loop, (struct sockaddr *)&sa,
                                             sizeof sa, on_connect)
                        : NULL;
    if (!s) {
        free(t);
        h2o_send_error_generic(req, 502, "Bad Gateway", "cannot connect to "
                               "the service's port\n", 0);
        return;
    }
    t->p = p;
    t->req = req;
    t->slot = h2o_mem_alloc_shared(&req->pool, sizeof *t->slot, on_dispose);
    *t->slot = t;
    s->data = t;
}
