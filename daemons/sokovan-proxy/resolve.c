/* app.resolve: a token -> its target, asked of the manager over the
 * authenticated RPC (skv_client, which blocks) on a libuv worker thread,
 * so the event loop never waits for the manager. One connection, shared
 * under a mutex and reopened after a failure.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

typedef struct job {
    uv_work_t w;
    proxy *p;
    char *sid, *svc, *token;
    proxy_resolved_cb done;
    void *data;
    int rc;
    skv_error e;
    proxy_target t;
} job;

static int dial(proxy *p, skv_error *e)
{
    if (p->client && skv_client_usable(p->client))
        return 0;
    skv_client_free(p->client);
    p->client = NULL;
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = p->cfg.proxy.manager;
    o.access_key = p->ak;
    o.secret_key = p->sk;
    o.timeout_ms = 10000;
    return skv_client_connect(&p->client, &o, e);
}

static int bad_reply(skv_error *e)
{
    e->code = SKV_EPROTO;
    snprintf(e->message, sizeof e->message, "app.resolve: the manager's "
             "reply lacks a usable host, port, protocol or user");
    return SKV_EPROTO;
}

static int fill(proxy_target *t, const skv_proto_app_resolve_reply *r,
                skv_error *e)
{
    if (!r->host || strlen(r->host) >= sizeof t->host || !r->port ||
        r->port > 65535 || !r->protocol || !r->user ||
        strlen(r->user) >= sizeof t->user || strlen(r->protocol) >= 8)
        return bad_reply(e);
    strcpy(t->host, r->host);
    t->port = (uint16_t)r->port;
    strcpy(t->protocol, r->protocol);
    strcpy(t->user, r->user);
    t->until_ms = r->expires_ms;
    return 0;
}

static void work(uv_work_t *w)
{
    job *j = w->data;
    skv_proto_app_resolve q = {j->sid, j->svc, j->token};
    skv_proto_app_resolve_reply r;
    pthread_mutex_lock(&j->p->mu);
    j->rc = dial(j->p, &j->e) ? SKV_EIO : 0;   /* cannot reach: 502 */
    if (!j->rc)
        j->rc = skv_client_call(j->p->client, SKV_PROTO_APP_RESOLVE, &q, &r,
                                &j->e);
    /* A broken connection is the proxy's trouble (502), not an answer
     * about the session: the next request dials again. */
    if (j->rc && j->p->client && !skv_client_usable(j->p->client))
        j->rc = SKV_EIO;
    pthread_mutex_unlock(&j->p->mu);
    if (!j->rc) {
        j->rc = fill(&j->t, &r, &j->e);
        skv_proto_body_free(SKV_PROTO_APP_RESOLVE_REPLY, &r);
    }
}

static void job_free(job *j)
{
    free(j->sid);
    free(j->svc);
    free(j->token);
    free(j);
}

static void after(uv_work_t *w, int status)
{
    job *j = w->data;
    if (status == UV_ECANCELED)
        j->rc = SKV_ECANCELED;
    j->done(j->data, j->rc, &j->t, j->rc ? j->e.message : NULL);
    job_free(j);
}

int proxy_resolve(proxy *p, const char *sid, const char *svc,
                  const char *token, proxy_resolved_cb done, void *data)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    j->p = p;
    j->done = done;
    j->data = data;
    j->w.data = j;
    j->sid = strdup(sid);
    j->svc = strdup(svc);
    j->token = strdup(token);
    if (!j->sid || !j->svc || !j->token ||
        uv_queue_work(&p->loop, &j->w, work, after)) {
        job_free(j);
        return -1;
    }
    return 0;
}

int proxy_manager_call(proxy *p, skv_proto_type type, const void *req,
                       void *reply, skv_error *e)
{
    pthread_mutex_lock(&p->mu);
    int rc = dial(p, e);
    if (!rc)
        rc = skv_client_call(p->client, type, req, reply, e);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void proxy_resolve_close(proxy *p)
{
    pthread_mutex_lock(&p->mu);
    skv_client_free(p->client);
    p->client = NULL;
    pthread_mutex_unlock(&p->mu);
}
