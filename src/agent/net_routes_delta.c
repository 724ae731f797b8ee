/* Cluster networking, part 4: route changes from the manager
 * (agent.routes.delta). The full table comes once, in the register reply
 * (net_routes.c); after that the manager sends only what changed: peers
 * that left or moved (removed, applied first) and peers that joined or
 * moved (added). Both are idempotent here — a route already there or
 * already gone is not an error — because a delta may repeat what the
 * register reply just gave.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

/* Our own subnet and entries without a gateway are never routed. */
static bool skip(const skv_agent *a, const skv_proto_route *r)
{
    return !r->subnet || !r->via || !*r->via ||
           (r->agent_id && strcmp(r->agent_id, a->agent_id) == 0) ||
           (a->subnet && strcmp(r->subnet, a->subnet) == 0);
}

static void withdraw(const skv_agent *a, const skv_proto_route *r)
{
    skv_error e = SKV_ERROR_INIT;
    if (skip(a, r))
        return;
    int rc = skv_net_route_del(r->subnet, r->via, &e);
    if (rc && rc != SKV_ENOENT)
        skv__log(SKV_LOG_WARN, "agent", "removing route to %s via %s "
                 "(agent %s): %s", r->subnet, r->via,
                 r->agent_id ? r->agent_id : "?", e.message);
}

static void add(const skv_agent *a, const skv_proto_route *r)
{
    skv_error e = SKV_ERROR_INIT;
    if (skip(a, r))
        return;
    /* One unreachable peer must not cut the others off. */
    int rc = skv_net_route_add(r->subnet, r->via, &e);
    if (rc && rc != SKV_EEXIST)
        skv__log(SKV_LOG_WARN, "agent", "route to %s via %s (agent %s): %s",
                 r->subnet, r->via, r->agent_id ? r->agent_id : "?",
                 e.message);
}

int skv__agent_on_routes_delta(skv_agent *a, const skv_proto_envelope *env,
                               skv_error *err)
{
    skv_proto_agent_routes_delta m;
    int rc = skv_proto_body_decode(&m, SKV_PROTO_AGENT_ROUTES_DELTA,
                                   env->body, env->body_len, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < m.n_removed; i++)
        withdraw(a, &m.removed[i]);
    for (size_t i = 0; i < m.n_added; i++)
        add(a, &m.added[i]);
    skv__log(SKV_LOG_INFO, "agent", "routes: %zu removed, %zu added",
             m.n_removed, m.n_added);
    skv_proto_body_free(SKV_PROTO_AGENT_ROUTES_DELTA, &m);
    return 0;
}
