/* Cluster networking, part 3: this agent's share of the cluster CIDR and
 * the routes to the other agents' shares (host-gateway style), from
 * agent.register.reply and agent.routes (changes after that come as
 * agent.routes.delta: net_routes_delta.c). The set is replaced as a whole:
 * every route the agent added (routing protocol 173) is flushed, then the
 * current set added, so routes of agents that left go too. Agents sharing
 * a network namespace would flush each other's routes: multi-node routing
 * assumes one agent per host (namespace).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

#define NETWORK_FILE "network"

static bool same(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

static int save(const skv_agent *a, skv_error *err)
{
    char *path = skv__agent_path(a, NETWORK_FILE);
    char *tmp = path ? skv__asprintf("%s.tmp", path) : NULL;
    FILE *f = tmp ? fopen(tmp, "we") : NULL;
    int rc = 0;
    if (!tmp)
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    else if (!f)
        rc = skv__err_sys(err, errno, "agent: cannot write %s", tmp);
    if (f) {
        fprintf(f, "subnet=%s\ncluster_cidr=%s\n", a->subnet,
                a->cluster_cidr ? a->cluster_cidr : "");
        if (fclose(f) != 0 || rename(tmp, path) < 0)
            rc = skv__err_sys(err, errno, "agent: cannot write %s", path);
    }
    skv__free(tmp);
    skv__free(path);
    return rc;
}

int skv__agent_net_load(skv_agent *a, skv_error *err)
{
    char *path = skv__agent_path(a, NETWORK_FILE);
    if (!path)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    FILE *f = fopen(path, "re");
    skv__free(path);
    if (!f)
        return 0;   /* never registered with a subnet */
    char line[256];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq || !eq[1])
            continue;
        *eq = '\0';
        char **dst = strcmp(line, "subnet") == 0         ? &a->subnet
                     : strcmp(line, "cluster_cidr") == 0 ? &a->cluster_cidr
                                                         : NULL;
        if (dst && !*dst && !(*dst = skv__strdup(eq + 1)))
            rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    fclose(f);
    return rc;
}

int skv__agent_net_set_routes(skv_agent *a, const skv_proto_route *routes,
                              size_t n, skv_error *err)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_net_route_flush(NULL, &e);
    if (rc)
        return skv__err(err, rc, "agent: flushing routes: %s", e.message);
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        const skv_proto_route *r = &routes[i];
        if (!r->subnet || !r->via || !*r->via ||
            (r->agent_id && strcmp(r->agent_id, a->agent_id) == 0) ||
            same(r->subnet, a->subnet))
            continue;
        /* One unreachable peer must not cut the others off. */
        rc = skv_net_route_add(r->subnet, r->via, &e);
        if (rc && rc != SKV_EEXIST)
            skv__log(SKV_LOG_WARN, "agent", "route to %s via %s (agent %s): "
                     "%s", r->subnet, r->via,
                     r->agent_id ? r->agent_id : "?", e.message);
        else
            added++;
    }
    skv__log(SKV_LOG_INFO, "agent", "%zu routes to other agents", added);
    return 0;
}

int skv__agent_net_registered(skv_agent *a,
                              const skv_proto_agent_register_reply *r,
                              skv_error *err)
{
    if (!r->subnet || !*r->subnet)
        return 0;   /* a manager without cluster networking */
    if (!same(a->subnet, r->subnet) ||
        !same(a->cluster_cidr, r->cluster_cidr)) {
        char *s = skv__strdup(r->subnet);
        char *c = r->cluster_cidr ? skv__strdup(r->cluster_cidr) : NULL;
        if (!s || (r->cluster_cidr && !c)) {
            skv__free(s);
            skv__free(c);
            return skv__err(err, SKV_ENOMEM, "agent: out of memory");
        }
        skv__free(a->subnet);
        skv__free(a->cluster_cidr);
        a->subnet = s;
        a->cluster_cidr = c;
        /* Rebuilt over the new subnet when next needed. */
        skv_net_pool_free(a->pool);
        a->pool = NULL;
        int rc = save(a, err);
        if (rc)
            return rc;
    }
    int rc = skv_net_forwarding_enable(err);
    return rc ? rc : skv__agent_net_set_routes(a, r->routes, r->n_routes,
                                               err);
}

int skv__agent_on_routes(skv_agent *a, const skv_proto_envelope *env,
                         int64_t now_ms, skv_error *err)
{
    SKV__UNUSED(now_ms);
    skv_proto_agent_routes m;
    memset(&m, 0, sizeof(m));
    int rc = skv_proto_body_decode(&m, SKV_PROTO_AGENT_ROUTES, env->body,
                                   env->body_len, err);
    if (rc)
        return rc;
    skv_error e = SKV_ERROR_INIT;
    /* A route that cannot be set is logged; the connection stays. */
    if (skv__agent_net_set_routes(a, m.routes, m.n_routes, &e) != 0)
        skv__log(SKV_LOG_WARN, "agent", "agent.routes: %s", e.message);
    skv_proto_body_free(SKV_PROTO_AGENT_ROUTES, &m);
    return 0;
}
