/* Cluster networking on the manager: each agent gets a /20 of the cluster
 * CIDR (table agent_net, stable across restarts), and every multi-kernel
 * session a /27 inside the subnet of each agent it runs on (session_net;
 * the subnets of ended sessions are handed out again). Kernel addresses
 * follow from them: the k-th kernel of the session on an agent (by index)
 * has address index k + 2. A random 32-byte SSH key seed per session
 * (session_ssh) goes to every agent of the session. Agents learn their
 * subnet and the routes to the others in agent.register.reply, and the
 * new set in an agent.routes event whenever an agent registers. Kernel
 * addresses and published ports from the create replies are kept in
 * kernel_net for session.show.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"
#include "sokovan/net.h"
#include "sokovan/sshkey.h"

#define AGENT_PREFIX 20
#define SESSION_PREFIX 27
#define DEFAULT_CIDR "10.128.0.0/9"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS agent_net(agent_id TEXT PRIMARY KEY,"
    " subnet TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS session_net(session_id TEXT NOT NULL,"
    " agent_id TEXT NOT NULL, subnet TEXT NOT NULL,"
    " PRIMARY KEY(session_id, agent_id));"
    "CREATE TABLE IF NOT EXISTS session_ssh(session_id TEXT PRIMARY KEY,"
    " seed BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS kernel_net(kernel_id TEXT PRIMARY KEY,"
    " address TEXT, published TEXT);";

/* Run one statement with up to three text parameters; SQLITE_DONE. */
static int exec3(skv_manager *m, const char *sql, const char *a,
                 const char *b, const char *c, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, sql, err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, a);
    if (b)
        skv__mgr_bind_text(st, 2, b);
    if (c)
        skv__mgr_bind_text(st, 3, c);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = skv__mgr_db_err(m, err, "network tables");
    skv__mgr_db_done(m, st);
    return rc;
}

/* First column of the first row as text into buf; 1 found, 0 not. */
static int query1(skv_manager *m, const char *sql, const char *a,
                  const char *b, char *buf, size_t n, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, sql, err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, a);
    if (b)
        skv__mgr_bind_text(st, 2, b);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        snprintf(buf, n, "%s", t ? t : "");
        rc = 1;
    }
    skv__mgr_db_done(m, st);
    return rc;
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
    rc = skv__mgr_db_exec(m, schema, err);
    sqlite3_stmt *st;
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st, "SELECT agent_id, subnet FROM "
                                 "agent_net", err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 1);
        /* A subnet outside a changed cluster_cidr is kept for its agent. */
        if (skv_net_pool_reserve(m->agent_pool, s, &e) != 0)
            skv__log(SKV_LOG_WARN, "manager", "agent %s subnet %s: %s",
                     (const char *)sqlite3_column_text(st, 0), s, e.message);
    }
    if (!rc)
        skv__mgr_db_done(m, st);
    return rc;
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
    int rc = query1(m, "SELECT subnet FROM agent_net WHERE agent_id=?", id,
                    NULL, buf, n, err);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv_net_pool_alloc(m->agent_pool, buf, n, err);
    if (!rc && (rc = exec3(m, "INSERT INTO agent_net(agent_id, subnet) "
                           "VALUES(?,?)", id, buf, NULL, err)) != 0)
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
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT n.agent_id, n.subnet, "
                                 "a.address FROM agent_net n JOIN agents a "
                                 "ON a.id=n.agent_id WHERE a.address IS NOT "
                                 "NULL AND a.address<>'' ORDER BY n.agent_id",
                                 err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        skv_proto_route *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        v->agent_id = skv__mgr_col_dup(st, 0);
        v->subnet = skv__mgr_col_dup(st, 1);
        v->via = skv__mgr_col_dup(st, 2);
        if (!v->agent_id || !v->subnet || !v->via)
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
        /* "10.0.0.5:6001": the host part is the gateway. */
        char *colon = v->via ? strchr(v->via, ':') : NULL;
        if (colon && !strchr(colon + 1, ':'))
            *colon = '\0';
    }
    if (st)
        skv__mgr_db_done(m, st);
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
        if (!a->conn || a->state != SKV__AGENT_ALIVE)
            continue;
        if (skv_proto_message_encode(&frame, &len, SKV_PROTO_EVENT, 0,
                                     SKV_PROTO_AGENT_ROUTES, &ev, 0, NULL,
                                     &e) == 0)
            skv__mgr_send_frame(m, a->conn, frame, len);
    }
    routes_free(ev.routes, ev.n_routes);
}

/* The session's /27 on an agent, allocated on first use. */
static int session_subnet(skv_manager *m, const char *sid,
                          const char *agent_id, char *buf, size_t n,
                          skv_error *err)
{
    int rc = query1(m, "SELECT subnet FROM session_net WHERE session_id=? "
                    "AND agent_id=?", sid, agent_id, buf, n, err);
    if (rc)
        return rc < 0 ? rc : 0;
    char asub[SKV_NET_ADDR_MAX];
    skv_net_pool *pool = NULL;
    sqlite3_stmt *st = NULL;
    rc = agent_subnet(m, agent_id, asub, sizeof asub, err);
    if (!rc)
        rc = skv_net_pool_new(&pool, asub, SESSION_PREFIX, err);
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st, "SELECT n.subnet FROM session_net "
                                 "n JOIN sessions s ON s.id=n.session_id "
                                 "WHERE n.agent_id=? AND s.status NOT IN "
                                 "('TERMINATED','CANCELLED','ERROR')", err);
    if (!rc) {
        skv__mgr_bind_text(st, 1, agent_id);
        while (sqlite3_step(st) == SQLITE_ROW)
            skv_net_pool_reserve(pool, (const char *)sqlite3_column_text(st,
                                                                         0),
                                 NULL);
        skv__mgr_db_done(m, st);
        rc = skv_net_pool_alloc(pool, buf, n, err);
    }
    if (!rc)
        rc = exec3(m, "INSERT OR REPLACE INTO session_net(session_id, "
                   "agent_id, subnet) VALUES(?,?,?)", sid, agent_id, buf,
                   err);
    skv_net_pool_free(pool);
    return rc;
}

/* How many of the session's kernels on the agent come before idx. */
static int rank_of(skv_manager *m, const char *sid, const char *agent_id,
                   uint32_t idx, unsigned *out, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st, "SELECT COUNT(*) FROM kernels "
                                 "WHERE session_id=? AND agent_id=? AND "
                                 "idx<?", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    skv__mgr_bind_text(st, 2, agent_id);
    sqlite3_bind_int64(st, 3, idx);
    *out = sqlite3_step(st) == SQLITE_ROW
               ? (unsigned)sqlite3_column_int(st, 0) : 0;
    skv__mgr_db_done(m, st);
    return 0;
}

int skv__mgr_net_kernel(skv_manager *m, const char *sid,
                        const char *agent_id, uint32_t idx, char *subnet,
                        char *address, skv_error *err)
{
    unsigned k = 0, b[4], plen;
    int rc = session_subnet(m, sid, agent_id, subnet, SKV_NET_ADDR_MAX,
                            err);
    if (!rc)
        rc = rank_of(m, sid, agent_id, idx, &k, err);
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
