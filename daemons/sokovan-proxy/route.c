/* Where a request goes and which token it carries. The request line and
 * headers are h2o's (parsed by its picohttpparser); this only splits the
 * path into /s/SESSION/SERVICE/REST and picks the token out of the query,
 * the cookie or the Authorization header.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "proxy.h"

static h2o_iovec_t segment(const char **p, const char *end)
{
    const char *s = *p;
    while (*p < end && **p != '/' && **p != '?')
        (*p)++;
    return h2o_iovec_init(s, (size_t)(*p - s));
}

int proxy_route_parse(proxy_route *r, h2o_iovec_t path)
{
    const char *p = path.base, *end = path.base + path.len;
    if (path.len < 3 || memcmp(p, "/s/", 3))
        return -1;
    p += 3;
    r->sid = segment(&p, end);
    if (p >= end || *p != '/' || !r->sid.len)
        return -1;
    p++;
    r->svc = segment(&p, end);
    if (!r->svc.len || (p < end && *p == '?'))
        return -1;
    if (p == end) /* "/s/S/svc" without the slash: the service's root */
        r->rest = h2o_iovec_init("/", 1);
    else
        r->rest = h2o_iovec_init(p, (size_t)(end - p));
    return 0;
}

static int copy(char *out, size_t cap, const char *s, size_t n)
{
    if (!n || n >= cap)
        return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

/* The value of name= in a "; "-separated cookie header. */
static int from_cookie(h2o_iovec_t v, char *out, size_t cap)
{
    const size_t nl = sizeof(PROXY_COOKIE "=") - 1;
    for (const char *p = v.base, *end = v.base + v.len; p < end;) {
        while (p < end && (*p == ' ' || *p == ';'))
            p++;
        const char *e = memchr(p, ';', (size_t)(end - p));
        if (!e)
            e = end;
        if ((size_t)(e - p) > nl && !memcmp(p, PROXY_COOKIE "=", nl))
            return copy(out, cap, p + nl, (size_t)(e - p - nl));
        p = e;
    }
    return -1;
}

static int from_query(h2o_req_t *req, char *out, size_t cap)
{
    if (req->query_at == SIZE_MAX)
        return -1;
    const char *q = req->path.base + req->query_at + 1;
    const char *end = req->path.base + req->path.len;
    const size_t kl = sizeof(PROXY_QUERY) - 1;
    for (const char *p = q; p < end;) {
        const char *e = memchr(p, '&', (size_t)(end - p));
        if (!e)
            e = end;
        if ((size_t)(e - p) > kl && !memcmp(p, PROXY_QUERY, kl))
            return copy(out, cap, p + kl, (size_t)(e - p - kl));
        p = e + 1;
    }
    return -1;
}

int proxy_route_token(h2o_req_t *req, char *out, size_t cap, int *fq)
{
    *fq = 0;
    if (!from_query(req, out, cap))
        return *fq = 1, 0;
    ssize_t i = -1;
    while ((i = h2o_find_header(&req->headers, H2O_TOKEN_COOKIE, i)) != -1)
        if (!from_cookie(req->headers.entries[i].value, out, cap))
            return 0;
    i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    if (i != -1) {
        h2o_iovec_t v = req->headers.entries[i].value;
        if (v.len > 7 && !strncasecmp(v.base, "Bearer ", 7))
            return copy(out, cap, v.base + 7, v.len - 7);
    }
    return -1;
}

h2o_iovec_t proxy_route_strip_token(h2o_mem_pool_t *pool, h2o_iovec_t path)
{
    char *out = h2o_mem_alloc_pool(pool, path.len + 1);
    const char *q = memchr(path.base, '?', path.len);
    size_t n = q ? (size_t)(q - path.base) : path.len;
    memcpy(out, path.base, n);
    if (!q)
        return h2o_iovec_init(out, n);
    const char *end = path.base + path.len;
    char sep = '?';
    for (const char *p = q + 1; p < end;) {
        const char *e = memchr(p, '&', (size_t)(end - p));
        if (!e)
            e = end;
        size_t l = (size_t)(e - p);
        if (l && (l < sizeof(PROXY_QUERY) - 1 ||
                  memcmp(p, PROXY_QUERY, sizeof(PROXY_QUERY) - 1))) {
            out[n++] = sep;
            memcpy(out + n, p, l);
            n += l;
            sep = '&';
        }
        p = e + 1;
    }
    return h2o_iovec_init(out, n);
}

/* A cookie header without sokovan_app=...; NULL length when empty. */
static h2o_iovec_t cookie_without(h2o_mem_pool_t *pool, h2o_iovec_t v)
{
    char *out = h2o_mem_alloc_pool(pool, v.len + 1);
    size_t n = 0;
    const size_t nl = sizeof(PROXY_COOKIE "=") - 1;
    for (const char *p = v.base, *end = v.base + v.len; p < end;) {
        while (p < end && (*p == ' ' || *p == ';'))
            p++;
        const char *e = memchr(p, ';', (size_t)(end - p));
        if (!e)
            e = end;
        size_t l = (size_t)(e - p);
        if (l && !(l > nl && !memcmp(p, PROXY_COOKIE "=", nl))) {
            if (n) {
                memcpy(out + n, "; ", 2);
                n += 2;
            }
            memcpy(out + n, p, l);
            n += l;
        }
        p = e;
    }
    return h2o_iovec_init(out, n);
}

void proxy_route_scrub(h2o_req_t *req)
{
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
    if (i != -1) {
        h2o_iovec_t v = req->headers.entries[i].value;
        if (v.len > 7 && !strncasecmp(v.base, "Bearer ", 7))
            h2o_delete_header(&req->headers, i);
    }
    for (i = -1; (i = h2o_find_header(&req->headers, H2O_TOKEN_COOKIE, i))
                 != -1;) {
        h2o_iovec_t v = cookie_without(&req->pool,
                                       req->headers.entries[i].value);
        if (v.len) {
            req->headers.entries[i].value = v;
        } else {
            h2o_delete_header(&req->headers, i);
            i--;
        }
    }
}
