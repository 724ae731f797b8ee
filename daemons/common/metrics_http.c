/* The /metrics HTTP endpoint (libmicrohttpd). See metrics_http.h for the
 * threading choice: the HTTP thread only ever reads the published text,
 * under the mutex.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "metrics_http.h"

#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result mhd_result;
#else
typedef int mhd_result;
#endif

#define CONNECTION_LIMIT 32      /* scrapers are few */
#define CONNECTION_TIMEOUT_S 10  /* drop idle or stuck clients */

struct skvd_metrics_http {
    struct MHD_Daemon *mhd;
    uint16_t port;
    pthread_mutex_t lock; /* guards text/len/ready */
    char *text;           /* skv_free'd */
    size_t len;
    int ready;
};

static mhd_result reply(struct MHD_Connection *c, unsigned status,
                        const char *body, size_t len, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    mhd_result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* Runs on the HTTP thread. The body is copied while the lock is held, so a
 * concurrent publish cannot free it under us. */
static mhd_result handle(void *cls, struct MHD_Connection *c, const char *url,
                         const char *method, const char *version,
                         const char *upload, size_t *upload_size, void **state)
{
    skvd_metrics_http *h = cls;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "not found\n", 10, "text/plain");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n", 19,
                     "text/plain");
    pthread_mutex_lock(&h->lock);
    mhd_result rc = h->ready
        ? reply(c, MHD_HTTP_OK, h->text, h->len, SKV_METRICS_CONTENT_TYPE)
        : reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no metrics yet\n", 15,
                "text/plain");
    pthread_mutex_unlock(&h->lock);
    return rc;
}

/* Fill err (may be NULL) the way the library does; returns code. */
static int fail(skv_error *err, int code, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(skv_error *err, int code, int sys_errno, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
        err->sys_errno = sys_errno;
    }
    return code;
}

/* Split "host:port" / "[v6]:port" / "*:port"; port 0..65535. */
static int split(char *host, size_t hostlen, const char **port, const char *text)
{
    const char *h = text, *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return -1;
        h = text + 1;
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || strchr(text, ':') != colon)
            return -1;
    }
    size_t n = (size_t)((text[0] == '[' ? colon - 1 : colon) - h);
    if (n == 0 || n >= hostlen)
        return -1;
    memcpy(host, h, n);
    host[n] = 0;
    *port = colon + 1;
    char *end;
    errno = 0;
    long p = strtol(*port, &end, 10);
    return (!**port || *end || errno || p < 0 || p > 65535) ? -1 : 0;
}

static int resolve(struct sockaddr_storage *ss, const char *text, skv_error *err)
{
    char host[256];
    const char *port;
    if (!text || split(host, sizeof host, &port, text) != 0)
        return fail(err, SKV_EINVAL, 0, "metrics http: '%s' is not HOST:PORT or "
                    "[ADDR]:PORT with a port 0..65535", text ? text : "(null)");
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(strcmp(host, "*") ? host : "0.0.0.0", port, &hints, &res);
    if (g != 0)
        return fail(err, SKV_EINVAL, 0, "metrics http: cannot resolve '%s': %s",
                    text, gai_strerror(g));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

/* The bound port, from the listening socket (works with port 0). */
static uint16_t bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!info || getsockname(info->listen_fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int skvd_metrics_http_start(skvd_metrics_http **out, const char *listen,
                            skv_error *err)
{
    struct sockaddr_storage ss = {0};
    if (!out)
        return fail(err, SKV_EINVAL, 0, "metrics http: NULL out pointer");
    int rc = resolve(&ss, listen, err);
    if (rc)
        return rc;
    skvd_metrics_http *h = calloc(1, sizeof *h);
    if (!h)
        return fail(err, SKV_ENOMEM, 0, "metrics http: out of memory");
    pthread_mutex_init(&h->lock, NULL);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    uint16_t port = ntohs(ss.ss_family == AF_INET6
                              ? ((struct sockaddr_in6 *)&ss)->sin6_port
                              : ((struct sockaddr_in *)&ss)->sin_port);
    errno = 0;
    h->mhd = MHD_start_daemon(flags, port, NULL, NULL, handle, h,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
                              MHD_OPTION_CONNECTION_TIMEOUT,
                              (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
    if (!h->mhd) {
        int e = errno;
        pthread_mutex_destroy(&h->lock);
        free(h);
        return fail(err, SKV_ESYS, e, "metrics http: cannot listen on '%s'%s%s",
                    listen, e ? ": " : "", e ? strerror(e) : "");
    }
    h->port = bound_port(h->mhd);
    *out = h;
    return 0;
}

uint16_t skvd_metrics_http_port(const skvd_metrics_http *h)
{
    return h ? h->port : 0;
}

int skvd_metrics_http_publish(skvd_metrics_http *h, const skv_metrics *reg,
                              skv_error *err)
{
    if (!h || !reg)
        return fail(err, SKV_EINVAL, 0, "metrics http: NULL server or registry");
    char *text = NULL;
    size_t len = 0;
    int rc = skv_metrics_render(&text, &len, reg, err); /* outside the lock */
    if (rc)
        return rc;
    pthread_mutex_lock(&h->lock);
    char *old = h->text;
    h->text = text;
    h->len = len;
    h->ready = 1;
    pthread_mutex_unlock(&h->lock);
    skv_free(old);
    return 0;
}

void skvd_metrics_http_stop(skvd_metrics_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->mhd); /* joins the HTTP thread: no handler runs after */
    pthread_mutex_destroy(&h->lock);
    skv_free(h->text);
    free(h);
}
