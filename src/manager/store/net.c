/* The cluster network's rows (mgr_net.c says how subnets are handed out):
 * agent_net (an agent's subnet), session_net (a session's subnet on an
 * agent), session_ssh (its SSH key seed), kernel_net (what an agent
 * reported of a kernel's address and published ports).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "store_int.h"

int skv__mgr_store_agent_subnets(skv__db *db,
                                 void (*fn)(void *arg, const char *agent,
                                            const char *subnet),
                                 void *arg, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT agent_id, subnet FROM agent_net",
                             &st, err);
    if (rc)
        return rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW)
        fn(arg, skv__db_column_text(st, 0), skv__db_column_text(st, 1));
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* 1 with the subnet, 0 when the agent has none yet. */
int skv__mgr_store_agent_subnet(skv__db *db, const char *agent, char *buf,
                                size_t cap, skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT subnet FROM agent_net WHERE "
                                  "agent_id=?", SKV__ARGS(agent), buf, cap,
                                  err);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}

int skv__mgr_store_agent_subnet_put(skv__db *db, const char *agent,
                                    const char *subnet, skv_error *err)
{
    return skv__mgr_store_exec_text(db, "INSERT INTO agent_net(agent_id, "
                                    "subnet) VALUES(?,?)",
                                    SKV__ARGS(agent, subnet), NULL, err);
}

/* Every agent with a subnet and an address: (agent, subnet, address). */
int skv__mgr_store_routes(skv__db *db, skv_proto_route **out, size_t *n,
                          skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, "SELECT n.agent_id, n.subnet, a.address "
                             "FROM agent_net n JOIN agents a ON "
                             "a.id=n.agent_id WHERE a.address IS NOT NULL "
                             "AND a.address<>'' AND a.status<>'lost' "
                             "ORDER BY n.agent_id", &st,
                             err);
    if (rc)
        return rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv_proto_route *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        v->agent_id = skv__mgr_store_col_dup(st, 0);
        v->subnet = skv__mgr_store_col_dup(st, 1);
        v->via = skv__mgr_store_col_dup(st, 2);
        if (!v->agent_id || !v->subnet || !v->via) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* 1 with sid's subnet on agent, 0 when it has none there yet. */
int skv__mgr_store_session_subnet(skv__db *db, const char *sid,
                                  const char *agent, char *buf, size_t cap,
                                  skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT subnet FROM session_net WHERE "
                                  "session_id=? AND agent_id=?",
                                  SKV__ARGS(sid, agent), buf, cap, err);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}

/* Subnets on agent held by sessions not ended (ended ones are reused). */
int skv__mgr_store_live_subnets(skv__db *db, const char *agent,
                                void (*fn)(void *arg, const char *subnet),
                                void *arg, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT n.subnet FROM session_net n JOIN "
                             "sessions s ON s.id=n.session_id WHERE "
                             "n.agent_id=? AND s.live=1 AND s.status NOT IN "
                             "('TERMINATED','CANCELLED','ERROR')", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW)
        fn(arg, skv__db_column_text(st, 0));
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_session_subnet_put(skv__db *db, const char *sid,
                                      const char *agent, const char *subnet,
                                      skv_error *err)
{
    return skv__mgr_store_exec_text(db, "INSERT INTO session_net(session_id,"
                                    " agent_id, subnet) VALUES(?,?,?) ON "
                                    "CONFLICT (session_id, agent_id) DO "
                                    "UPDATE SET subnet=excluded.subnet",
                                    SKV__ARGS(sid, agent, subnet), NULL, err);
}

/* How many of sid's kernels on agent come before idx. */
int skv__mgr_store_kernel_rank(skv__db *db, const char *sid,
                               const char *agent, uint32_t idx,
                               unsigned *out, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT count(*) FROM kernels WHERE "
                             "session_id=? AND agent_id=? AND idx<?", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    skv__db_bind_text(st, 2, agent);
    skv__db_bind_int64(st, 3, idx);
    rc = skv__db_step(st, err);
    *out = rc == SKV__DB_ROW ? (unsigned)skv__db_column_int64(st, 0) : 0;
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* 1 with the seed (len bytes), 0 when sid has none. */
int skv__mgr_store_session_seed(skv__db *db, const char *sid, uint8_t *seed,
                                size_t len, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT seed FROM session_ssh WHERE "
                             "session_id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    rc = skv__db_step(st, err);
    bool found = false;
    if (rc == SKV__DB_ROW) {
        size_t n = 0;
        const void *b = skv__db_column_blob(st, 0, &n);
        if ((found = b && n == len))
            memcpy(seed, b, len);
    }
    skv__db_done(st);
    return rc < 0 ? rc : found;
}

int skv__mgr_store_session_seed_put(skv__db *db, const char *sid,
                                    const uint8_t *seed, size_t len,
                                    skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO session_ssh(session_id, seed) "
                             "VALUES(?,?) ON CONFLICT (session_id) DO UPDATE"
                             " SET seed=excluded.seed", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    skv__db_bind_blob(st, 2, seed, len);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_kernel_net_put(skv__db *db, const char *kid,
                                  const char *address, const char *published,
                                  skv_error *err)
{
    return skv__mgr_store_exec_text(db, "INSERT INTO kernel_net(kernel_id, "
                                    "address, published) VALUES(?,?,?) ON "
                                    "CONFLICT (kernel_id) DO UPDATE SET "
                                    "address=excluded.address, "
                                    "published=excluded.published",
                                    SKV__ARGS(kid, address, published), NULL,
                                    err);
}

/* 1 with address and published ("a,b"; either may be NULL), 0 none. */
int skv__mgr_store_kernel_net(skv__db *db, const char *kid, char **address,
                              char **published, skv_error *err)
{
    skv__db_stmt *st;
    *address = *published = NULL;
    int rc = skv__db_prepare(db, "SELECT address, published FROM kernel_net "
                             "WHERE kernel_id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        *address = skv__mgr_store_col_dup(st, 0);
        *published = skv__mgr_store_col_dup(st, 1);
    }
    skv__db_done(st);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}
