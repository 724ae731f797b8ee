/* Listening sockets: a Unix socket (its directory created, a stale socket
 * replaced, the file removed again on stop) and TCP.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

struct skvd_listener {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    skvd_net *net;
    bool is_unix;
    char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct skvd_listener *next;
};

static void on_connection(uv_stream_t *server, int status)
{
    struct skvd_listener *l = server->data;
    skvd_conn *c;
    if (status < 0) {
        skvd_log(SKV_LOG_WARN, "listener %s: %s", l->name,
                 uv_strerror(status));
        return;
    }
    if (!(c = skvd_conn_alloc(l->net, false))) {
        skvd_log(SKV_LOG_ERROR, "listener %s: out of memory", l->name);
        return;
    }
    int rc = l->is_unix ? uv_pipe_init(l->net->loop, &c->h.pipe, 0)
                        : uv_tcp_init(l->net->loop, &c->h.tcp);
    c->h.handle.data = c;
    if (rc == 0)
        rc = uv_accept(server, &c->h.stream);
    if (rc == 0 && !l->is_unix && l->net->tls_listen &&
        skvd_tls_attach(c, l->net->tls_listen, NULL))
        rc = UV_ENOMEM;     /* TCP while tls_listen is set: TLS only */
    if (rc != 0) {
        skvd_log(SKV_LOG_WARN, "listener %s: accept: %s", l->name,
                 uv_strerror(rc));
        skvd_conn_close(c, false);
        return;
    }
    if (!skvd_limits_admit(c)) { /* every connection authenticated */
        skvd_conn_close(c, false);
        return;
    }
    skvd_conn_start(c);
}

static void listener_free_cb(uv_handle_t *h)
{
    free(h->data);
}

/* Common tail: listen, link into the net. On failure the handle is closed
 * (and freed by its close callback). */
static int finish(skvd_net *n, struct skvd_listener *l, int rc, char *why,
                  size_t wl)
{
    if (rc == 0)
        rc = uv_listen(&l->h.stream, 1024, on_connection);
    if (rc != 0) {
        snprintf(why, wl, "cannot listen on %s: %s", l->name,
                 uv_strerror(rc));
        uv_close(&l->h.handle, listener_free_cb);
        return -1;
    }
    l->next = n->listeners;
    n->listeners = l;
    skvd_log(SKV_LOG_INFO, "listening on %s%s", l->is_unix ? "unix:" : "",
             l->name);
    return 0;
}

int skvd_listen_unix(skvd_net *n, const char *path, char *why, size_t wl)
{
    struct skvd_listener *l;
    if (skvd_unix_path_prepare(path, why, wl))
        return -1;
    if (!(l = calloc(1, sizeof(*l))))
        return WHY("out of memory");
    l->net = n;
    l->is_unix = true;
    snprintf(l->name, sizeof(l->name), "%s", path);
    int rc = uv_pipe_init(n->loop, &l->h.pipe, 0);
    if (rc != 0) {
        free(l);
        return WHY("%s: %s", path, uv_strerror(rc));
    }
    l->h.handle.data = l;
    rc = uv_pipe_bind(&l->h.pipe, path);
    bool bound = rc == 0;
    /* Keys authenticate every request; the mode and group decide who may
     * reach the manager at all (0660: the owner and the group's members).
     * Set before listen(): nobody connects while the mode is umask's. */
    if (rc == 0 && (chmod(path, n->unix_mode) != 0 ||
                    (n->unix_gid >= 0 &&
                     chown(path, (uid_t)-1, (gid_t)n->unix_gid) != 0)))
        rc = uv_translate_sys_error(errno);
    if (finish(n, l, rc, why, wl) == 0)
        return 0;
    if (bound)
        unlink(path);
    return -1;
}

int skvd_listen_tcp(skvd_net *n, const char *hostport, char *why, size_t wl)
{
    struct sockaddr_storage ss;
    struct skvd_listener *l;
    if (skvd_hostport_resolve(&ss, hostport, why, wl))
        return -1;
    if (!(l = calloc(1, sizeof(*l))))
        return WHY("out of memory");
    l->net = n;
    snprintf(l->name, sizeof(l->name), "%s", hostport);
    int rc = uv_tcp_init(n->loop, &l->h.tcp);
    if (rc != 0) {
        free(l);
        return WHY("%s: %s", hostport, uv_strerror(rc));
    }
    l->h.handle.data = l;
    rc = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&ss, 0);
    return finish(n, l, rc, why, wl);
}

void skvd_listeners_close(skvd_net *n)
{
    struct skvd_listener *l = n->listeners, *next;
    for (; l; l = next) {
        next = l->next;
        if (l->is_unix)
            unlink(l->name);
        uv_close(&l->h.handle, listener_free_cb);
    }
    n->listeners = NULL;
}
