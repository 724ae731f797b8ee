/* Service apps: the services a session declares at submit (kept in the
 * submit body the store already holds, so restarts and fail-over keep
 * them), app.token for the session's owner, and app.resolve for the app
 * proxy: token -> the agent's address and the published host port of the
 * service on the main kernel.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "mgr_app.h"

#define TTL_DEFAULT_S (12u * 3600)
#define TTL_MAX_S (7u * 24 * 3600)

static bool has_port(const skv_proto_session_submit *s, uint32_t port)
{
    for (size_t i = 0; i < s->n_ports; i++)
        if (s->ports[i] == port)
            return true;
    return false;
}

int skv__mgr_app_check_submit(const skv_proto_session_submit *s,
                              skv_error *err)
{
    char name[SKV_PROTO_SERVICE_NAME_MAX], other[SKV_PROTO_SERVICE_NAME_MAX];
    char proto[8];
    uint32_t port, p2;
    for (size_t i = 0; i < s->n_services; i++) {
        int rc = skv_proto_service_parse(s->services[i], name, &port, proto,
                                         err);
        if (rc)
            return rc;
        if (!has_port(s, port))
            return skv__err(err, SKV_EINVAL, "service %s: port %u is not "
                            "among the session's ports", name, port);
        for (size_t j = 0; j < i; j++)
            if (!skv_proto_service_parse(s->services[j], other, &p2, proto,
                                         NULL) && !strcmp(name, other))
                return skv__err(err, SKV_EINVAL, "service %s declared "
                                "twice", name);
    }
    return 0;
}

/* The declared service svc of a loaded submit body. */
static int find_service(const skv_proto_session_submit *s, const char *svc,
                        uint32_t *port, char *proto, skv_error *err)
{
    char name[SKV_PROTO_SERVICE_NAME_MAX];
    for (size_t i = 0; i < s->n_services; i++)
        if (!skv_proto_service_parse(s->services[i], name, port, proto, NULL)
            && !strcmp(name, svc))
            return 0;
    return skv__err(err, SKV_ENOENT, "the session declares no service '%s'",
                    svc);
}

static int load(skv_manager *m, const char *sid, skv_proto_session_submit *s,
                char *owner, skv_error *err)
{
    char dom[SKV__MGR_ID_MAX], proj[SKV__MGR_ID_MAX];
    memset(s, 0, sizeof *s);
    int rc = skv__mgr_load_submit(m, sid, s, dom, proj, owner, err);
    return rc < 0 ? rc : rc > 0 ? skv__err(err, SKV_ENOENT, "no session "
                                           "%s", sid) : 0;
}

int skv__mgr_app_show(skv_manager *m, skv_proto_session_info *i,
                      skv_error *err)
{
    skv_proto_session_submit s;
    char owner[SKV__MGR_ID_MAX];
    int rc = load(m, i->session_id, &s, owner, err);
    if (!rc) {   /* the info takes the list over */
        i->services = s.services;
        i->n_services = s.n_services;
        s.services = NULL;
        s.n_services = 0;
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    return rc;
}

/* Only the owner gets tokens: an admin acting for others is not the user
 * the service is for. */
static int token_for(skv_manager *m, const skv__mgr_call *c,
                     const skv_proto_app_token *q,
                     skv_proto_app_token_reply *r, skv_error *err)
{
    skv_proto_session_submit s;
    char owner[SKV__MGR_ID_MAX], proto[8];
    uint32_t port;
    if (q->ttl_s > TTL_MAX_S)
        return skv__err(err, SKV_EINVAL, "app.token: ttl_s at most %u",
                        TTL_MAX_S);
    int rc = load(m, q->session_id, &s, owner, err);
    if (!rc && strcmp(owner, c->who->user))
        rc = skv__err(err, SKV_EPERM, "session %s is not %s's: app tokens "
                      "are issued to the session's owner only",
                      q->session_id, c->who->user);
    if (!rc)
        rc = find_service(&s, q->service, &port, proto, err);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    if (rc)
        return rc;
    r->expires_ms = c->now_ms + 1000ll * (q->ttl_s ? q->ttl_s : TTL_DEFAULT_S);
    r->token = skv__mgr_app_token_make(m, q->session_id, q->service, owner,
                                       r->expires_ms, err);
    r->path = skv__asprintf("/s/%s/%s/", q->session_id, q->service);
    if (r->token && !r->path)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (!r->token)
        return err ? err->code : SKV_ENOMEM;
    return q->ssh_key ? skv__mgr_app_ssh_key(m, q->session_id, r, err) : 0;
}

int skv__mgr_on_app_token(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err)
{
    skv_proto_app_token_reply r = {0};
    int rc = token_for(m, c, c->body, &r, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_APP_TOKEN_REPLY, &r);
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
    return rc;
}

/* "tcp:PORT=HOST:HOSTPORT" of port among k's published ports. */
static bool published(const skv_proto_kernel_info *k, uint32_t port,
                      skv_proto_app_resolve_reply *r)
{
    char want[24];
    int n = snprintf(want, sizeof want, "tcp:%u=", port);
    for (size_t i = 0; i < k->n_published; i++) {
        const char *v = k->published[i];
        const char *colon = v ? strrchr(v, ':') : NULL;
        if (!v || strncmp(v, want, (size_t)n) || !colon || colon < v + n)
            continue;
        r->host = skv__strndup(v + n, (size_t)(colon - v - n));
        r->port = (uint32_t)atoi(colon + 1);
        return r->host && r->port;
    }
    return false;
}

/* Where the main kernel's port is published now (session.show's data). */
static int target(skv_manager *m, const char *sid, uint32_t port,
                  skv_proto_app_resolve_reply *r, skv_error *err)
{
    skv_proto_session_show_reply show = {0};
    int rc = skv__mgr_session_info(m, &show.session, sid, err);
    if (!rc)
        rc = skv__mgr_session_details(m, &show.session, err);
    if (!rc && strcmp(show.session.status, "RUNNING"))
        rc = skv__err(err, SKV_ESTATE, "session %s is %s, not RUNNING", sid,
                      show.session.status);
    bool found = false;
    for (size_t i = 0; !rc && !found && i < show.session.n_kernels; i++) {
        const skv_proto_kernel_info *k = &show.session.kernels[i];
        found = k->role && !strcmp(k->role, "main") && published(k, port, r);
    }
    if (!rc && !found)
        rc = skv__err(err, SKV_ESTATE, "session %s: port %u is not "
                      "published (yet)", sid, port);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &show);
    return rc;
}

static int resolve(skv_manager *m, const skv__mgr_call *c,
                   const skv_proto_app_resolve *q,
                   skv_proto_app_resolve_reply *r, skv_error *err)
{
    skv_proto_session_submit s;
    char owner[SKV__MGR_ID_MAX], user[SKV__MGR_ID_MAX], proto[8];
    uint32_t port = 0;
    int rc = load(m, q->session_id, &s, owner, err);
    if (!rc)
        rc = find_service(&s, q->service, &port, proto, err);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    if (!rc)
        rc = skv__mgr_app_token_check(m, q->session_id, q->service, q->token,
                                      c->now_ms, user, sizeof user,
                                      &r->expires_ms, err);
    if (!rc && strcmp(user, owner))
        rc = skv__err(err, SKV_EPERM, "app token: %s is not the session's "
                      "owner", user);
    if (!rc)
        rc = target(m, q->session_id, port, r, err);
    if (!rc && (!(r->user = skv__strdup(user)) ||
                !(r->protocol = skv__strdup(proto))))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    return rc;
}

int skv__mgr_on_app_resolve(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err)
{
    skv_proto_app_resolve_reply r = {0};
    int rc = resolve(m, c, c->body, &r, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_APP_RESOLVE_REPLY,
                            &r);
    skv_proto_body_free(SKV_PROTO_APP_RESOLVE_REPLY, &r);
    return rc;
}
