/* sokovan-proxy: the app proxy daemon (proxy.h). A separate daemon, not a
 * part of the manager: app traffic (bulk downloads, long-lived
 * WebSockets) never competes with the manager's event loop, the proxy
 * can run next to the agents or at the network edge with its own TLS
 * certificate, and several proxies can serve one cluster. It holds no
 * state: a restart loses only its cache.
 * SPDX-License-Identifier: Apache-2.0 */
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

#define PROG "sokovan-proxy"

static void on_accept(uv_stream_t *l, int status)
{
    proxy *p = l->data;
    if (status != 0)
        return;
    uv_tcp_t *c = malloc(sizeof *c);
    if (!c)
        return;
    uv_tcp_init(l->loop, c);
    if (uv_accept(l, (uv_stream_t *)c)) {
        uv_close((uv_handle_t *)c, (uv_close_cb)free);
        return;
    }
    uv_tcp_nodelay(c, 1);
    h2o_socket_t *s = h2o_uv_socket_create((uv_stream_t *)c,
                                           (uv_close_cb)free);
    h2o_accept(&p->accept, s);
}

static int listen_on(proxy *p)
{
    char host[256];
    int port;
    char why[256];
    struct sockaddr_in sa;
    if (skvd_hostport_split(host, sizeof host, &port, p->cfg.proxy.listen,
                            why, sizeof why) ||
        uv_ip4_addr(host, port, &sa)) {
        skvd_log(SKV_LOG_ERROR, "listen %s: want IPv4 HOST:PORT",
                 p->cfg.proxy.listen);
        return -1;
    }
    uv_tcp_init(&p->loop, &p->listener);
    p->listener.data = p;
    int rc = uv_tcp_bind(&p->listener, (struct sockaddr *)&sa, 0);
    if (!rc)
        rc = uv_listen((uv_stream_t *)&p->listener, 1024, on_accept);
    if (rc)
        skvd_log(SKV_LOG_ERROR, "listen %s: %s", p->cfg.proxy.listen,
                 uv_strerror(rc));
    return rc ? -1 : 0;
}

/* HTTPS: OpenSSL's context for h2o's acceptor (HTTP/1.1 over TLS). */
static int tls(proxy *p)
{
    const skvd_proxy_conf *c = &p->cfg.proxy;
    if (!c->tls_cert)
        return 0;
    p->ssl = SSL_CTX_new(TLS_server_method());
    if (!p->ssl ||
        !SSL_CTX_set_min_proto_version(p->ssl, TLS1_2_VERSION) ||
        SSL_CTX_use_certificate_chain_file(p->ssl, c->tls_cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(p->ssl, c->tls_key, SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(p->ssl) != 1) {
        skvd_log(SKV_LOG_ERROR, "tls_cert %s / tls_key %s: %s", c->tls_cert,
                 c->tls_key, ERR_reason_error_string(ERR_get_error()));
        return -1;
    }
    p->accept.ssl_ctx = p->ssl;
    return 0;
}

/* h2o reads a socket into a buffer of this initial size (8 KiB by
 * default): bulk bodies then cost a read and a write per few KiB, and the
 * proxy, not the network, limits a download (bench/proxy: 70 % of direct
 * with the default, 89-112 % with this). The price is this much memory per
 * busy connection. */
#define READ_BUFFER (128u * 1024)

static int h2o_setup(proxy *p)
{
    h2o_socket_buffer_prototype._initial_buf.capacity = READ_BUFFER;
    h2o_config_init(&p->h2o_conf);
    p->h2o_conf.max_request_entity_size = (size_t)p->cfg.proxy.max_request_body;
    p->h2o_conf.proxy.io_timeout = p->cfg.proxy.io_timeout_ms;
    p->h2o_conf.proxy.emit_x_forwarded_headers = 1;
    h2o_hostconf_t *host = h2o_config_register_host(
        &p->h2o_conf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    if (proxy_handler_register(p, host))
        return -1;
    h2o_context_init(&p->ctx, &p->loop, &p->h2o_conf);
    /* WebSocket handshakes are proxied only with a websocket timeout. */
    h2o_timeout_init(&p->loop, &p->io_timeout, p->cfg.proxy.io_timeout_ms);
    p->client_ctx = p->ctx.proxy.client_ctx;
    p->client_ctx.websocket_timeout = &p->io_timeout;
    p->accept.ctx = &p->ctx;
    p->accept.hosts = p->h2o_conf.hosts;
    return tls(p);
}

static int read_key(proxy *p)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv_client_read_keyfile(p->ak, p->sk, p->cfg.proxy.key_file, &e)) {
        skvd_log(SKV_LOG_ERROR, "key_file %s: %s", p->cfg.proxy.key_file,
                 e.message);
        return -1;
    }
    return 0;
}

static void stop(void *ctx)
{
    uv_stop(&((proxy *)ctx)->loop);
}

static int run(proxy *p)
{
    if (uv_loop_init(&p->loop) || pthread_mutex_init(&p->mu, NULL) ||
        proxy_cache_new(&p->cache))
        return SKVD_EXIT_FAIL;
    int rc = read_key(p) || h2o_setup(p) || listen_on(p) ||
             proxy_activity_start(p) || proxy_streams_start(p) ||
             skvd_signals_start(&p->loop, stop, p);
    char why[256];
    if (!rc && p->cfg.proxy.pidfile &&
        skvd_pidfile_write(p->cfg.proxy.pidfile, why, sizeof why)) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        rc = 1;
    }
    if (!rc) {
        if (p->cfg.proxy.public_url)
            skvd_log(SKV_LOG_INFO, "ready: %s/s/SESSION/SERVICE/ on %s "
                     "(manager %s)", p->cfg.proxy.public_url,
                     p->cfg.proxy.listen, p->cfg.proxy.manager);
        else
            skvd_log(SKV_LOG_INFO, "ready: %s://%s/s/SESSION/SERVICE/ "
                     "(manager %s)", p->ssl ? "https" : "http",
                     p->cfg.proxy.listen, p->cfg.proxy.manager);
        uv_run(&p->loop, UV_RUN_DEFAULT);
    }
    skvd_signals_close();
    proxy_streams_stop(p);
    proxy_activity_stop(p);
    uv_run(&p->loop, UV_RUN_NOWAIT);   /* the timer's close callback */
    proxy_pool_stop(p);
    skvd_pidfile_remove(p->cfg.proxy.pidfile);
    proxy_resolve_close(p);
    skv_auth_wipe(p->sk, sizeof p->sk);
    skvd_log(SKV_LOG_INFO, "stopped");
    return rc ? SKVD_EXIT_FAIL : SKVD_EXIT_OK;
}

int main(int argc, char **argv)
{
    static proxy p;
    if (skvd_config_init(&p.cfg))
        return SKVD_EXIT_FAIL;
    int rc = skvd_args_parse(&p.cfg, SKVD_ROLE_PROXY, PROG,
                             "The sokovan app proxy: serves the services "
                             "sessions declare at /s/SESSION/SERVICE/ to "
                             "their owners.", argc, argv);
    if (rc < 0 && !p.cfg.proxy.listen) {
        fprintf(stderr, PROG ": listen is disabled: nobody could reach the "
                "proxy\n");
        rc = SKVD_EXIT_USAGE;
    }
    if (rc < 0) {
        skvd_log_init(PROG, (skv_log_level)p.cfg.proxy.log_level);
        rc = run(&p);
    }
    skvd_config_free(&p.cfg);
    return rc;
}
