/* Route changes to the agents. An agent gets the whole route table once,
 * in its register reply (mgr_net.c); after that only what changed: each
 * agent's route now (route) and as its peers last heard it (told) are
 * kept, registrations and losses update route, and once per tick the
 * agents whose two differ go out in one agent.routes.delta (told's route
 * withdrawn, route's added) to every agent that applies deltas. Sending
 * the whole table to every agent on every registration made N
 * registrations cost N^2 frames and N^3 bytes (1,000 agents: 500,000
 * frames, 17.8 GB); a tick that saw k registrations now costs N frames of
 * k routes. Agents that do not say route_deltas (older builds) get the
 * whole table as before, once per tick with changes. Only the latest state
 * per agent is sent, so an agent that registers and is lost within one
 * tick costs nothing; the agent side is idempotent (a route already there
 * or already gone is fine), so a delta that repeats a register reply is
 * harmless.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"

/* A list field holds at most this many routes (schema.c's bound). */
#define CHUNK 4096

/* "10.0.0.5:6001" -> "10.0.0.5"; an IPv6 literal (two colons) is kept. */
static void via_of(const char *address, char *via, size_t n)
{
    snprintf(via, n, "%s", address);
    char *colon = strchr(via, ':');
    if (colon && !strchr(colon + 1, ':'))
        *colon = '\0';
}

static bool same_route(const skv__mgr_route *x, const skv__mgr_route *y)
{
    return strcmp(x->subnet, y->subnet) == 0 && strcmp(x->via, y->via) == 0;
}

static void set_route(skv_manager *m, skv__mgr_agent *a,
                      const skv__mgr_route *r)
{
    a->route = *r;
    a->route_dirty = true;
    m->routes_dirty = true;
}

void skv__mgr_routes_registered(skv_manager *m, skv__mgr_agent *a,
                                const char *subnet, bool deltas)
{
    skv__mgr_route r = {"", ""};
    a->route_deltas = deltas;
    if (subnet && *subnet && a->address[0] &&
        strlen(subnet) < sizeof r.subnet) {
        snprintf(r.subnet, sizeof r.subnet, "%s", subnet);
        via_of(a->address, r.via, sizeof r.via);
    }
    set_route(m, a, &r);
}

/* After a restart the peers may know the route from their register reply
 * (the table comes from the store) although this manager never told them:
 * withdraw what the store says. */
static void told_from_store(skv_manager *m, skv__mgr_agent *a)
{
    char subnet[sizeof a->told.subnet];
    if (a->told.subnet[0] || !a->address[0] ||
        skv__mgr_store_agent_subnet(m->store, a->id, subnet, sizeof subnet,
                                    NULL) != 1)
        return;
    snprintf(a->told.subnet, sizeof a->told.subnet, "%s", subnet);
    via_of(a->address, a->told.via, sizeof a->told.via);
}

void skv__mgr_routes_lost(skv_manager *m, skv__mgr_agent *a)
{
    static const skv__mgr_route none = {"", ""};
    told_from_store(m, a);
    set_route(m, a, &none);
}

typedef struct delta {
    skv_proto_route *removed, *added;
    size_t n_removed, n_added;
    skv__mgr_route *old;      /* the withdrawn routes (told moves on) */
} delta;

static skv_proto_route entry(skv__mgr_agent *a, skv__mgr_route *r)
{
    skv_proto_route e = {r->subnet, r->via, a->id};
    return e;
}

/* The agents whose route changed since the last flush; told catches up. */
static void collect(skv_manager *m, delta *d)
{
    for (size_t i = 0; i < m->n_agents; i++) {
        skv__mgr_agent *a = &m->agents[i];
        if (!a->route_dirty)
            continue;
        a->route_dirty = false;
        if (same_route(&a->route, &a->told))
            continue;
        if (a->told.subnet[0]) {
            d->old[d->n_removed] = a->told;
            d->removed[d->n_removed] = entry(a, &d->old[d->n_removed]);
            d->n_removed++;
        }
        if (a->route.subnet[0])
            d->added[d->n_added++] = entry(a, &a->route);
        a->told = a->route;
    }
}

static void send_copy(skv_manager *m, uint64_t conn, const void *frame,
                      size_t len)
{
    void *copy = skv__malloc(len);
    if (!copy) {
        skv__log(SKV_LOG_ERROR, "manager", "agent.routes.delta: out of "
                 "memory");
        return;
    }
    memcpy(copy, frame, len);
    skv__mgr_send_frame(m, conn, copy, len);
}

/* One encoded frame, a copy to each agent that applies deltas. */
static void send_one(skv_manager *m, const skv_proto_agent_routes_delta *ev)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_message_encode(&frame, &len, SKV_PROTO_EVENT, 0,
                                 SKV_PROTO_AGENT_ROUTES_DELTA, ev, 0, NULL,
                                 &e) != 0) {
        skv__log(SKV_LOG_ERROR, "manager", "agent.routes.delta: %s",
                 e.message);
        return;
    }
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if (a->conn && a->state == SKV__AGENT_ALIVE && a->route_deltas)
            send_copy(m, a->conn, frame, len);
    }
    skv__free(frame);
}

/* One frame (the agent applies its withdrawals first); past CHUNK routes
 * either way, all withdrawals go before any addition (a moved agent is
 * both), in frames of at most CHUNK routes. */
static void send_delta(skv_manager *m, const delta *d)
{
    if (d->n_removed <= CHUNK && d->n_added <= CHUNK) {
        skv_proto_agent_routes_delta ev = {d->removed, d->n_removed,
                                           d->added, d->n_added};
        send_one(m, &ev);
        return;
    }
    for (size_t i = 0; i < d->n_removed; i += CHUNK) {
        size_t n = d->n_removed - i < CHUNK ? d->n_removed - i : CHUNK;
        skv_proto_agent_routes_delta ev = {d->removed + i, n, NULL, 0};
        send_one(m, &ev);
    }
    for (size_t i = 0; i < d->n_added; i += CHUNK) {
        size_t n = d->n_added - i < CHUNK ? d->n_added - i : CHUNK;
        skv_proto_agent_routes_delta ev = {NULL, 0, d->added + i, n};
        send_one(m, &ev);
    }
}

static bool any_legacy(const skv_manager *m)
{
    for (size_t i = 0; i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if (a->conn && a->state == SKV__AGENT_ALIVE && !a->route_deltas)
            return true;
    }
    return false;
}

void skv__mgr_routes_flush(skv_manager *m)
{
    if (!m->routes_dirty)
        return;
    m->routes_dirty = false;
    delta d = {skv__calloc(m->n_agents + 1, sizeof *d.removed),
               skv__calloc(m->n_agents + 1, sizeof *d.added), 0, 0,
               skv__calloc(m->n_agents + 1, sizeof *d.old)};
    if (!d.removed || !d.added || !d.old) {
        skv__log(SKV_LOG_ERROR, "manager", "route changes: out of memory");
        m->routes_dirty = true;    /* tried again next tick */
    } else {
        collect(m, &d);
        if (d.n_removed || d.n_added) {
            send_delta(m, &d);
            if (any_legacy(m))
                skv__mgr_net_broadcast(m);    /* agents without deltas */
        }
    }
    skv__free(d.removed);
    skv__free(d.added);
    skv__free(d.old);
}
