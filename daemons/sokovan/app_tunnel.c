/* sokovan app SESSION SERVICE [--bind ADDR:PORT]: a local TCP listener;
 * each connection to it becomes one tunnel through the app proxy to the
 * service's port. The CLI speaks HTTP with h2o's client (libh2o parses
 * the answer): "GET /s/SESSION/SERVICE/" with "Upgrade: sokovan-tunnel"
 * and the owner's app token; after "101 Switching Protocols" h2o splices
 * the local and the proxy sockets (h2o_tunnel_establish).
 * SPDX-License-Identifier: Apache-2.0 */
#define H2O_USE_LIBUV 1
#include <h2o.h>
#include <h2o/http1client.h>
#include <h2o/tunnel.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct app {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_signal_t sig[2];
    h2o_globalconf_t conf;
    h2o_context_t ctx;
    h2o_timeout_t idle;
    h2o_url_t url;          /* the proxy */
    h2o_iovec_t request;    /* the upgrade request, the same for each */
    SSL_CTX *ssl;
} app;

typedef struct conn {
    app *a;
    h2o_socket_t *local;
    h2o_http1client_t *client;
} conn;

static void conn_fail(conn *cn, const char *why)
{
    fprintf(stderr, "sokovan app: %s\n", why);
    h2o_socket_close(cn->local);
    free(cn);
}

static h2o_http1client_body_cb on_head(h2o_http1client_t *client,
                                       const char *errstr, int minor,
                                       int status, h2o_iovec_t msg,
                                       struct st_h2o_header_t *headers,
                                       size_t nh, int rlen)
{
    conn *cn = client->data;
    (void)minor, (void)headers, (void)nh;
    char why[300];
    if (status != 101) {
        snprintf(why, sizeof why, "the proxy refused the tunnel: %d %.*s%s%s",
                 status, (int)msg.len, msg.base, errstr ? " " : "",
                 errstr && errstr != h2o_http1client_error_is_eos ? errstr
                                                                  : "");
        conn_fail(cn, why);
        return NULL;
    }
    h2o_socket_t *up = h2o_http1client_steal_socket(client);
    h2o_buffer_consume(&up->input, (size_t)rlen);
    h2o_tunnel_establish(&cn->a->ctx, cn->local, up, &cn->a->idle);
    free(cn);
    return NULL;
}

static h2o_http1client_head_cb on_connect(h2o_http1client_t *client,
                                          const char *errstr,
                                          h2o_iovec_t **reqbufs,
                                          size_t *reqbufcnt, int *is_head)
{
    conn *cn = client->data;
    if (errstr) {
        char why[300];
        snprintf(why, sizeof why, "cannot reach the proxy at %.*s: %s",
                 (int)cn->a->url.authority.len, cn->a->url.authority.base,
                 errstr);
        conn_fail(cn, why);
        return NULL;
    }
    *reqbufs = &cn->a->request;
    *reqbufcnt = 1;
    *is_head = 0;
    return on_head;
}

static void on_accept(uv_stream_t *l, int status)
{
    app *a = l->data;
    uv_tcp_t *c = status ? NULL : malloc(sizeof *c);
    if (!c)
        return;
    uv_tcp_init(a->loop, c);
    if (uv_accept(l, (uv_stream_t *)c)) {
        uv_close((uv_handle_t *)c, (uv_close_cb)free);
        return;
    }
    conn *cn = calloc(1, sizeof *cn);
    h2o_socket_t *s = h2o_uv_socket_create((uv_stream_t *)c,
                                           (uv_close_cb)free);
    if (!cn) {
        h2o_socket_close(s);
        return;
    }
    cn->a = a;
    cn->local = s;
    h2o_http1client_connect(&cn->client, cn, &a->ctx.proxy.client_ctx,
                            a->url.host, h2o_url_get_port(&a->url),
                            a->url.scheme == &H2O_URL_SCHEME_HTTPS,
                            on_connect);
}

static void on_signal(uv_signal_t *s, int signum)
{
    (void)signum;
    uv_stop(s->loop);
}

static int build_request(app *a, const char *sid, const char *svc,
                         const char *token)
{
    char *r = NULL;
    int n = asprintf(&r, "GET /s/%s/%s/ HTTP/1.1\r\nHost: %.*s\r\n"
                     "Connection: upgrade\r\nUpgrade: sokovan-tunnel\r\n"
                     "Authorization: Bearer %s\r\n\r\n", sid, svc,
                     (int)a->url.authority.len, a->url.authority.base,
                     token);
    if (n < 0)
        return cli_fail("out of memory");
    a->request = h2o_iovec_init(r, (size_t)n);
    return 0;
}

/* https: verify the proxy against the system's CAs or $SOKOVAN_PROXY_CA. */
static int tls_client(app *a)
{
    if (a->url.scheme != &H2O_URL_SCHEME_HTTPS)
        return 0;
    const char *ca = getenv("SOKOVAN_PROXY_CA");
    a->ssl = SSL_CTX_new(TLS_client_method());
    if (!a->ssl || (ca && ca[0] ? SSL_CTX_load_verify_locations(a->ssl, ca,
                                                                NULL)
                                : SSL_CTX_set_default_verify_paths(a->ssl))
                       != 1)
        return cli_fail("TLS to the proxy: cannot load %s",
                        ca && ca[0] ? ca : "the system's CAs");
    SSL_CTX_set_verify(a->ssl, SSL_VERIFY_PEER, NULL);
    a->ctx.proxy.client_ctx.ssl_ctx = a->ssl;
    return 0;
}

static int listen_on(app *a, const char *bind, unsigned *port)
{
    char host[64];
    unsigned want = 0;
    struct sockaddr_in sa;
    const char *colon = strrchr(bind, ':');
    if (!colon || (size_t)(colon - bind) >= sizeof host ||
        sscanf(colon + 1, "%u", &want) != 1 || want > 65535)
        return cli_fail("--bind %s: want ADDRESS:PORT", bind);
    snprintf(host, sizeof host, "%.*s", (int)(colon - bind), bind);
    if (uv_ip4_addr(host, (int)want, &sa))
        return cli_fail("--bind %s: not an IPv4 address", bind);
    uv_tcp_init(a->loop, &a->listener);
    a->listener.data = a;
    int rc = uv_tcp_bind(&a->listener, (struct sockaddr *)&sa, 0);
    if (!rc)
        rc = uv_listen((uv_stream_t *)&a->listener, 128, on_accept);
    int len = sizeof sa;
    if (!rc)
        rc = uv_tcp_getsockname(&a->listener, (struct sockaddr *)&sa, &len);
    if (rc)
        return cli_fail("--bind %s: %s", bind, uv_strerror(rc));
    *port = ntohs(sa.sin_port);
    return 0;
}

/* One tunnel listener per process (the CLI runs one command). */
static app g_app;

int cli_tunnel_listen(const char *sid, const char *svc, const char *token,
                      const char *bind, unsigned *port)
{
    app *a = &g_app;
    const char *base = cli_proxy_url();
    a->loop = uv_default_loop();
    if (h2o_url_parse(base, SIZE_MAX, &a->url) != 0)
        return cli_fail("SOKOVAN_PROXY_URL '%s' is not an http(s) URL", base);
    h2o_config_init(&a->conf);  /* a context needs a host; it serves none */
    h2o_config_register_host(&a->conf, h2o_iovec_init(H2O_STRLIT("tunnel")),
                             65535);
    h2o_context_init(&a->ctx, a->loop, &a->conf);
    h2o_timeout_init(a->loop, &a->idle, 24ull * 3600 * 1000);
    signal(SIGPIPE, SIG_IGN);
    int rc = tls_client(a);
    if (!rc)
        rc = build_request(a, sid, svc, token);
    if (!rc)
        rc = listen_on(a, bind, port);
    return rc;
}

void cli_tunnel_done(void)
{
    free(g_app.request.base);
    g_app.request.base = NULL;
}

static int tunnel(const char *sid, const char *svc, const char *token,
                  const char *bind)
{
    unsigned port = 0;
    int rc = cli_tunnel_listen(sid, svc, token, bind, &port);
    if (rc)
        return rc;
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(bind, ':') - bind),
             bind);
    printf("listening on %s:%u\n", host, port);
    fflush(stdout);
    for (int i = 0; i < 2; i++) {
        uv_signal_init(g_app.loop, &g_app.sig[i]);
        uv_signal_start(&g_app.sig[i], on_signal, i ? SIGTERM : SIGINT);
    }
    uv_run(g_app.loop, UV_RUN_DEFAULT);
    cli_tunnel_done();
    return CLI_OK;
}

int cli_cmd_app(cli *c, int argc, char **argv)
{
    enum { A_BIND = 1 };
    static const cli_opt opts[] = {{"bind", 1, A_BIND, 0}, {NULL, 0, 0, 0}};
    const char *sid = NULL, *svc = NULL, *bind = "127.0.0.1:0", *val;
    int id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while ((id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan app SESSION SERVICE [--bind ADDR:PORT]\n"
                 "Listen on ADDR:PORT (default 127.0.0.1, any free port; the "
                 "line\n\"listening on ADDR:PORT\" says which) and tunnel "
                 "each connection\nthrough the app proxy ($SOKOVAN_PROXY_URL) "
                 "to the session's service.\nRuns until interrupted.");
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (id == A_BIND)
            bind = val;
        else if (!sid)
            sid = val;
        else if (!svc)
            svc = val;
        else
            return cli_usage(c, "unexpected argument '%s'", val);
    }
    if (!sid || !svc)
        return cli_usage(c, "want SESSION SERVICE");
    skv_proto_app_token_reply r;
    int rc = cli_app_token(c, sid, svc, 0, &r);
    if (rc)
        return rc;
    rc = tunnel(sid, svc, r.token, bind);
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
    return rc;
}
