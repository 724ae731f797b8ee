/* sokovan-proxy: the app proxy. It serves
 * http(s)://HOST:PORT/s/SESSION/SERVICE/... to the service port a session
 * declared, on the agent that runs its main kernel. HTTP (keep-alive,
 * streamed responses, WebSocket upgrade) is h2o's (libh2o, the libuv
 * flavour): its reverse proxy forwards each request to the target this
 * daemon resolved, and its tunnel splices `sokovan app` connections. The
 * proxy keeps no state of its own: a token is resolved by the manager
 * (app.resolve over the authenticated RPC, signed with an admin key) and
 * cached for cache_ms (short: an ended session's host port may be
 * published again), so restarting the proxy ends no session.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_PROXY_H
#define SKV_PROXY_H

#define H2O_USE_LIBUV 1
#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/socketpool.h>
#include <h2o/tunnel.h>
#include <pthread.h>

#include "skvd.h"
#include "sokovan/client.h"

#define PROXY_TOKEN_MAX 1024
#define PROXY_COOKIE "sokovan_app"
#define PROXY_QUERY "sokovan_token="
#define PROXY_TUNNEL "sokovan-tunnel"

/* A resolved token: where its service is, and until when to trust it. */
typedef struct proxy_target {
    char host[64];
    uint16_t port;
    char protocol[8];
    char user[256];
    int64_t until_ms;       /* min(token expiry, now + cache_ms) */
} proxy_target;

typedef struct proxy_cache proxy_cache;
struct proxy_activity;
struct proxy_streams;

typedef struct proxy {
    skvd_config cfg;
    uv_loop_t loop;
    uv_tcp_t listener;
    h2o_globalconf_t h2o_conf;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept;
    h2o_http1client_ctx_t client_ctx;   /* ctx's, with WebSocket allowed */
    h2o_timeout_t io_timeout;
    SSL_CTX *ssl;                       /* NULL: plain HTTP */
    proxy_cache *cache;
    /* the manager connection, used from the libuv worker threads */
    pthread_mutex_t mu;
    skv_client *client;
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    struct proxy_activity *activity;    /* activity.c */
    struct proxy_streams *streams;      /* streams.c */
} proxy;

/* route.c: "/s/SESSION/SERVICE/REST" -> its parts (pointers into the
 * pool); 0, or -1 when path is not of that form. */
typedef struct proxy_route {
    h2o_iovec_t sid, svc, rest;   /* rest starts with '/' */
} proxy_route;
int proxy_route_parse(proxy_route *r, h2o_iovec_t path);
/* The token of a request: the query's sokovan_token, the sokovan_app
 * cookie or "Authorization: Bearer". *from_query says which. */
int proxy_route_token(h2o_req_t *req, char *out, size_t cap,
                      int *from_query);
/* path without the sokovan_token query parameter (pool memory). */
h2o_iovec_t proxy_route_strip_token(h2o_mem_pool_t *pool, h2o_iovec_t path);
/* Drop our credentials from what goes upstream: "Authorization: Bearer"
 * and the sokovan_app cookie. */
void proxy_route_scrub(h2o_req_t *req);

/* cache.c: token -> target, bounded. */
int proxy_cache_new(proxy_cache **out);
void proxy_cache_free(proxy_cache *c);
/* 1 with *t when key is cached and fresh, else 0. */
int proxy_cache_get(proxy_cache *c, const char *key, int64_t now_ms,
                    proxy_target *t);
void proxy_cache_put(proxy_cache *c, const char *key, const proxy_target *t,
                     int64_t now_ms);

/* resolve.c: ask the manager (on a libuv worker thread); done runs on the
 * loop with rc 0 and *t, or a negative SKV_E* code and a message. */
typedef void (*proxy_resolved_cb)(void *data, int rc, const proxy_target *t,
                                  const char *why);
int proxy_resolve(proxy *p, const char *sid, const char *svc,
                  const char *token, proxy_resolved_cb done, void *data);
void proxy_resolve_close(proxy *p);
/* One request to the manager over the shared connection (dialled when
 * needed); blocks: call it on a worker thread. */
int proxy_manager_call(proxy *p, skv_proto_type type, const void *req,
                       void *reply, skv_error *e);

/* activity.c: the sessions served, reported every activity_report_ms
 * (app.activity). _note runs on the loop. */
int proxy_activity_start(proxy *p);
void proxy_activity_note(proxy *p, h2o_iovec_t sid);
void proxy_activity_stop(proxy *p);

/* streams.c: WebSockets and tunnels count as activity while they carry
 * bytes. _arm: on an upgrade request (watched from its 101 until its
 * connection closes); _sample: at each report, note the sessions whose
 * streams carried more than stream_min_bytes since the previous one. */
int proxy_streams_start(proxy *p);
void proxy_streams_arm(proxy *p, h2o_req_t *req, h2o_iovec_t sid);
void proxy_streams_sample(proxy *p);
void proxy_streams_stop(proxy *p);
/* tcpbytes.c: a TCP socket's data bytes both ways (TCP_INFO); 0 or
 * -errno (-ENOSYS: the kernel does not count them). */
int proxy_tcp_bytes(int fd, uint64_t *moved);

/* handler.c: the one request handler. */
int proxy_handler_register(proxy *p, h2o_hostconf_t *host);

/* pool.c: the keep-alive pool of a session's target for one user; NULL:
 * connect per request. *ref is for _warm, after the request has taken its
 * connection: it parks a new one for the next request (connect ahead).
 * _stop: closes every pooled connection and frees the pools. */
h2o_socketpool_t *proxy_pool_for(proxy *p, h2o_iovec_t sid,
                                 const proxy_target *t, void **ref);
void proxy_pool_warm(proxy *p, void *ref);
void proxy_pool_stop(proxy *p);

/* tunnel.c: `sokovan app`'s upgrade to a raw byte stream. */
void proxy_tunnel_start(proxy *p, h2o_req_t *req, const proxy_target *t);

#endif
