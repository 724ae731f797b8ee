/* Cluster networking on the manager: each agent gets a /20 of the cluster
 * CIDR (table agent_net, stable across restarts), and every multi-kernel
 * session a /27 inside the subnet of each agent it runs on (session_net;
 * the subnets of ended sessions are handed out again). Kernel addresses
 * follow from them: the k-th kernel of the session on an agent (by index)
 * has address index k + 2. A random 32-byte SSH key seed per session
 * (session_ssh) goes to every agent of the session. Agents learn their
 * subnet and the routes to the others in agent.register.reply, and the
 * changes after that from mgr_routes.c (agent.routes.delta, or the new
 * set in an agent.routes event for agents without deltas). Kernel
 * addresses and published ports from the create replies are kept in
 * kernel_net for session.show.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"
#include "sokovan/subnet.h"
#include "sokovan/sshkey.h"

#define AGENT_PREFIX 20
#define SESSION_PREFIX 27
#define DEFAULT_CIDR "10.128.0.0/9"

/* A subnet outside a changed cluster_cidr is kept for its agent. */
static void reserve_agent(void *arg, const char *agent, const char *subnet)
{
    skv_manager *m = arg;
    skv_error e = SKV_ERROR_INIT;
    if (skv_net_pool_reserve(m->agent_pool, subnet, &e) != 0)
        skv__log(SKV_LOG_WARN, "manager", "agent %s subnet %s: %s", agent,
                 subnet, e.message);
}

int skv__mgr_net_open(skv_manager *m, const char *cidr, skv_error *err)
{
    if (!(m->cluster_cidr = skv__strdup(cidr ? cidr : DEFAULT_CIDR)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_net_pool_new(&m->agent_pool, m->cluster_cidr, AGENT_PREFIX,
                              &e);
    if (rc)
        return skv__err(err, rc, "manager option cluster_cidr: %s (agents "
                        "get /%d subnets)", e.message, AGENT_PREFIX);
    return skv__mgr_store_agent_subnets(m->store, reserve_agent, m, err);
}

void skv__mgr_net_close(skv_manager *m)
{
    skv_net_pool_free(m->agent_pool);
    m->agent_pool = NULL;
    skv__free(m->cluster_cidr);
    m->cluster_cidr = NULL;
}

static int agent_subnet(skv_manager *m, const char *id, char *buf, size_t n,
                        skv_error *err)
{
    int rc = skv__mgr_store_agent_subnet(m->store, id, buf, n, err);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv_net_pool_alloc(m->agent_pool, buf, n, err);
    if (!rc && (rc = skv__mgr_store_agent_subnet_put(m->store, id, buf,
                                                     err)) != 0)
        skv_net_pool_release(m->agent_pool, buf, NULL);
    if (!rc)
        skv__log(SKV_LOG_INFO, "manager", "agent %s: subnet %s", id, buf);
    return rc;
}

static void routes_free(skv_proto_route *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        skv__free(r[i].subnet);
        skv__free(r[i].via);
        skv__free(r[i].agent_id);
    }
    skv__free(r);
}

/* Every agent with a subnet and an address. */
static int routes_load(skv_manager *m, skv_proto_route **out, size_t *n,
                       skv_error *err)
{
    int rc = skv__mgr_store_routes(m->store, out, n, err);
    for (size_t i = 0; !rc && i < *n; i++) {
        /* "10.0.0.5:6001": the host part is the gateway. */
        char *colon = strchr((*out)[i].via, ':');
        if (colon && !strchr(colon + 1, ':'))
            *colon = '\0';
    }
    if (rc) {
        routes_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int skv__mgr_net_register_reply(skv_manager *m, const char *agent_id,
                                skv_proto_agent_register_reply *rep,
                                skv_error *err)
{
    char subnet[SKV_NET_ADDR_MAX];
    int rc = agent_subnet(m, agent_id, subnet, sizeof subnet, err);
    if (!rc && !(rep->subnet = skv__strdup(subnet)))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = routes_load(m, &rep->routes, &rep->n_routes, err);
    if (!rc)
        rep->cluster_cidr = m->cluster_cidr;
    if (rc)
        skv__mgr_net_reply_free(rep);
    return rc;
}

void skv__mgr_net_reply_free(skv_proto_agent_register_reply *rep)
{
    skv__free(rep->subnet);
    routes_free(rep->routes, rep->n_routes);
    rep->subnet = rep->cluster_cidr = NULL;
    rep->routes = NULL;
    rep->n_routes = 0;
}

void skv__mgr_net_broadcast(skv_manager *m)
{
    skv_proto_agent_routes ev = {NULL, 0};
    skv_error e = SKV_ERROR_INIT;
    if (routes_load(m, &ev.routes, &ev.n_routes, &e)) {
        skv__log(SKV_LOG_ERROR, "manager", "agent.routes: %s", e.message);
        return;
    }
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        void *frame = NULL;
        size_t len = 0;
        if (!a->conn || a->state != SKV__AGENT_ALIVE || a->route_deltas)
            continue;
        if (skv_proto_message_encode(&frame, &len, SKV_PROTO_EVENT, 0,
                                     SKV_PROTO_AGENT_ROUTES, &ev, 0, NULL,
                                     &e) == 0)
            skv__mgr_send_frame(m, a->conn, frame, len);
    }
    routes_free(ev.routes, ev.n_routes);
}

static void reserve_session(void *arg, const char *subnet)
{
    skv_net_pool_reserve(arg, subnet, NULL);
}

/* The session's /27 on an agent, allocated on first use. */
static int session_subnet(skv_manager *m, const char *sid,
                          const char *agent_id, char *buf, size_t n,
                          skv_error *err)
{
    int rc = skv__mgr_store_session_subnet(m->store, sid, agent_id, buf, n,
                                           err);
    if (rc)
        return rc < 0 ? rc : 0;
    char asub[SKV_NET_ADDR_MAX];
    skv_net_pool *pool = NULL;
    rc = agent_subnet(m, agent_id, asub, sizeof asub, err);
    if (!rc)
        rc = skv_net_pool_new(&pool, asub, SESSION_PREFIX, err);
    if (!rc)
        rc = skv__mgr_store_live_subnets(m->store, agent_id, reserve_session,
                                         pool, err);
    if (!rc)
        rc = skv_net_pool_alloc(pool, buf, n, err);
    if (!rc)
        rc = skv__mgr_store_session_subnet_put(m->store, sid, agent_id, buf,
                                               err);
    skv_net_pool_free(pool);
    return rc;
}

int skv__mgr_net_kernel(skv_manager *m, const char *sid,
                        const char *agent_id, uint32_t idx, char *subnet,
                        char *address, skv_error *err)
{
    unsigned k = 0, b[4], plen;
    int rc = session_subnet(m, sid, agent_id, subnet, SKV_NET_ADDR_MAX,
                            err);
    if (!rc)
        rc = skv__mgr_store_kernel_rank(m->store, sid, agent_id, idx, &k,
                                        err);
    if (rc)
        return rc;
    if (sscanf(subnet, "%u.%u.%u.%u/%u", &b[0], &b[1], &b[2], &b[3],
               &plen) != 5)
        return skv__err(err, SKV_EIO, "session %s: bad subnet '%s'", sid,
                        subnet);
    uint32_t a = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) + k + 2;
    snprintf(address, SKV_NET_ADDR_MAX, "%u.%u.%u.%u", a >> 24,
             (a >> 16) & 255, (a >> 8) & 255, a & 255);
    return 0;
}
