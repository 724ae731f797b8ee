/* The request handler: route, token, then either the cookie exchange
 * (a token in the query becomes an HttpOnly cookie scoped to the app's
 * path), `sokovan app`'s tunnel, or h2o's reverse proxy to the target.
 * A token seen before (cache) is served at once; otherwise the request
 * waits for app.resolve, which runs off the loop.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "proxy.h"

typedef struct pending {
    proxy *p;
    h2o_req_t *req;             /* NULL once h2o disposed of the request */
    struct pending **slot;      /* in the request's pool, points back */
    proxy_route r;
    char key[3 * PROXY_TOKEN_MAX];
    int from_query;
} pending;

typedef struct proxy_handler {
    h2o_handler_t super;
    proxy *p;
} proxy_handler;

static void refuse(h2o_req_t *req, int status, const char *reason,
                   const char *why)
{
    char *body = h2o_mem_alloc_pool(&req->pool, strlen(why) + 2);
    sprintf(body, "%s\n", why);
    h2o_send_error_generic(req, status, reason, body, 0);
}

static void refuse_rc(h2o_req_t *req, int rc, const char *why)
{
    if (rc == SKV_EPERM || rc == SKV_EAUTH)
        refuse(req, 403, "Forbidden", why);
    else if (rc == SKV_ENOENT)
        refuse(req, 404, "Not Found", why);
    else if (rc == SKV_ESTATE)
        refuse(req, 503, "Service Unavailable", why);
    else
        refuse(req, 502, "Bad Gateway", why);
}

/* The token came in the URL: keep it in a cookie for this app's path
 * only, and send the browser to the same URL without it. */
static void exchange(proxy *p, h2o_req_t *req, const proxy_route *r,
                     const char *token)
{
    int n = (int)(r->svc.base + r->svc.len - req->path.base);
    h2o_iovec_t c = h2o_concat(&req->pool, h2o_iovec_init(H2O_STRLIT(
        PROXY_COOKIE "=")), h2o_iovec_init(token, strlen(token)),
        h2o_iovec_init(H2O_STRLIT("; Path=")),
        h2o_iovec_init(req->path.base, (size_t)n),
        h2o_iovec_init(H2O_STRLIT("/; HttpOnly; SameSite=Lax")),
        p->ssl ? h2o_iovec_init(H2O_STRLIT("; Secure"))
               : h2o_iovec_init("", 0));
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_SET_COOKIE, NULL,
                   c.base, c.len);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CACHE_CONTROL,
                   NULL, H2O_STRLIT("no-store"));
    h2o_iovec_t to = proxy_route_strip_token(&req->pool, req->path);
    req->res.status = 302;
    req->res.reason = "Found";
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_LOCATION, NULL,
                   to.base, to.len);
    h2o_send_inline(req, H2O_STRLIT("signed in: cookie set\n"));
}

/* h2o's reverse proxy to host:port with the app's prefix taken off (and
 * put back on Location headers); WebSocket upgrades pass through. A
 * "prefix" service is served under the prefix itself: the whole path goes
 * upstream and its absolute Locations only lose the upstream's origin. */
static void forward(proxy *p, h2o_req_t *req, const proxy_route *r,
                    const proxy_target *t)
{
    bool whole = !strcmp(t->protocol, "prefix");
    h2o_req_overrides_t *ov = h2o_mem_alloc_pool(&req->pool, sizeof *ov);
    memset(ov, 0, sizeof *ov);
    ov->client_ctx = &p->client_ctx;
    ov->hostport.host = h2o_strdup(&req->pool, t->host, SIZE_MAX);
    ov->hostport.port = t->port;
    void *pool = NULL;
    ov->socketpool = proxy_pool_for(p, r->sid, t, &pool);   /* keep-alive */
    char auth[96];
    int al = snprintf(auth, sizeof auth, "%s:%u", t->host, t->port);
    h2o_iovec_t authority = h2o_strdup(&req->pool, auth, (size_t)al);
    h2o_url_t *up = h2o_mem_alloc_pool(&req->pool, sizeof *up);
    if (!h2o_url_init(up, &H2O_URL_SCHEME_HTTP, authority,
                      h2o_iovec_init(H2O_STRLIT("/")))) {
        /* "http://host:port/x" from upstream -> "/s/SESSION/SERVICE/x" */
        ov->location_rewrite.match = up;
        ov->location_rewrite.path_prefix = whole
            ? h2o_iovec_init(H2O_STRLIT("/"))
            : h2o_concat(&req->pool,
                         h2o_iovec_init(req->path.base,
                                        (size_t)(r->svc.base + r->svc.len -
                                                 req->path.base)),
                         h2o_iovec_init(H2O_STRLIT("/")));
    }
    h2o_iovec_t path = whole ? req->path : r->rest;
    proxy_route_scrub(req);
    h2o_reprocess_request(req, req->method, &H2O_URL_SCHEME_HTTP, authority,
                          path, ov, 0);
    proxy_pool_warm(p, pool);   /* the request has taken its connection */
}

static bool wants_tunnel(const h2o_req_t *req)
{
    return req->upgrade.base &&
           h2o_lcstris(req->upgrade.base, req->upgrade.len,
                       H2O_STRLIT(PROXY_TUNNEL));
}

static void serve(proxy *p, h2o_req_t *req, const proxy_route *r,
                  const proxy_target *t, const char *token, int from_query)
{
    proxy_activity_note(p, r->sid);   /* a resolved token: its session */
    proxy_streams_arm(p, req, r->sid); /* an upgrade: counted while used */
    if (from_query)
        exchange(p, req, r, token);
    else if (wants_tunnel(req))
        proxy_tunnel_start(p, req, t);
    else if (!strcmp(t->protocol, "tcp"))
        refuse(req, 400, "Bad Request", "this service is a TCP service: "
               "reach it with `sokovan app SESSION SERVICE`");
    else
        forward(p, req, r, t);
}

/* The token out of the cache key "SID\nSVC\nTOKEN". */
static const char *token_of(const char *key)
{
    return strchr(strchr(key, '\n') + 1, '\n') + 1;
}

static void on_dispose(void *mem)
{
    pending **slot = mem;
    if (*slot)
        (*slot)->req = NULL;
}

static void on_resolved(void *data, int rc, const proxy_target *t,
                        const char *why)
{
    pending *w = data;
    h2o_req_t *req = w->req;
    if (req) {
        *w->slot = NULL;
        if (rc) {
            refuse_rc(req, rc, why ? why : "app.resolve failed");
        } else {
            proxy_target c = *t;
            int64_t until = skvd_now_ms() + (int64_t)w->p->cfg.proxy.cache_ms;
            if (until < c.until_ms)
                c.until_ms = until;
            proxy_cache_put(w->p->cache, w->key, &c, skvd_now_ms());
            serve(w->p, req, &w->r, t, token_of(w->key), w->from_query);
        }
    }
    free(w);
}

static int wait_for(proxy *p, h2o_req_t *req, const proxy_route *r,
                    const char *key, const char *token, int fq)
{
    pending *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->p = p;
    w->req = req;
    w->r = *r;
    w->from_query = fq;
    snprintf(w->key, sizeof w->key, "%s", key);
    w->slot = h2o_mem_alloc_shared(&req->pool, sizeof *w->slot, on_dispose);
    *w->slot = w;
    char *sid = h2o_strdup(&req->pool, r->sid.base, r->sid.len).base;
    char *svc = h2o_strdup(&req->pool, r->svc.base, r->svc.len).base;
    if (proxy_resolve(p, sid, svc, token, on_resolved, w)) {
        *w->slot = NULL;
        free(w);
        return -1;
    }
    return 0;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    proxy *p = ((proxy_handler *)self)->p;
    proxy_route r;
    char token[PROXY_TOKEN_MAX], key[3 * PROXY_TOKEN_MAX];
    int fq = 0;
    if (proxy_route_parse(&r, req->path)) {
        refuse(req, 404, "Not Found", "not an app URL: want "
               "/s/SESSION/SERVICE/");
        return 0;
    }
    if (proxy_route_token(req, token, sizeof token, &fq)) {
        refuse(req, 401, "Unauthorized", "an app token is required: "
               "`sokovan app-token SESSION SERVICE` prints this app's URL "
               "with one");
        return 0;
    }
    snprintf(key, sizeof key, "%.*s\n%.*s\n%s", (int)r.sid.len, r.sid.base,
             (int)r.svc.len, r.svc.base, token);
    proxy_target t;
    if (proxy_cache_get(p->cache, key, skvd_now_ms(), &t))
        serve(p, req, &r, &t, token, fq);
    else if (wait_for(p, req, &r, key, token, fq))
        refuse(req, 500, "Internal Server Error", "out of memory");
    return 0;
}

int proxy_handler_register(proxy *p, h2o_hostconf_t *host)
{
    h2o_pathconf_t *pc = h2o_config_register_path(host, "/", 0);
    proxy_handler *h = (proxy_handler *)h2o_create_handler(pc, sizeof *h);
    if (!h)
        return -1;
    h->super.on_req = on_req;
    h->p = p;
    return 0;
}
