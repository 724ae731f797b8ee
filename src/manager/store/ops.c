/* Operations state (component "ops"): an agent's administrative state
 * (cordoned or draining; no row: schedulable), kept so that a restarted
 * manager does not place work on an agent an operator took out, and a
 * resource group's operations policy (what a drain and a device fault do
 * to its sessions, whether fractional shares that cannot be enforced may
 * start; no row: the defaults). Tables of their own, so the admin and core
 * components' steps stay as they are.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_cache.h"
#include "migrate.h"
#include "store_int.h"

static const char ops_v1_sqlite[] =
    "CREATE TABLE IF NOT EXISTS agent_ops(agent_id TEXT PRIMARY KEY,"
    " state TEXT NOT NULL, drain_deadline_ms INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS group_ops(name TEXT PRIMARY KEY,"
    " drain_action TEXT NOT NULL, drain_grace_ms INTEGER NOT NULL,"
    " fault_action TEXT NOT NULL, allow_unenforced INTEGER NOT NULL);";

static const char ops_v1_pg[] =
    "CREATE TABLE IF NOT EXISTS agent_ops(agent_id TEXT PRIMARY KEY,"
    " state TEXT NOT NULL, drain_deadline_ms BIGINT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS group_ops(name TEXT PRIMARY KEY,"
    " drain_action TEXT NOT NULL, drain_grace_ms BIGINT NOT NULL,"
    " fault_action TEXT NOT NULL, allow_unenforced BIGINT NOT NULL);";

/* Step 2: each agent's unhealthy devices as it last reported them
 * (health.c), so that a restarted manager keeps them out of the capacity
 * until the agent says otherwise. The same text on both engines. */
static const char ops_v2[] =
    "CREATE TABLE IF NOT EXISTS agent_health(agent_id TEXT NOT NULL,"
    " device_id TEXT NOT NULL, reason TEXT NOT NULL,"
    " PRIMARY KEY(agent_id, device_id));";

static const skv__mgr_migration ops[] = {
    {1, ops_v1_sqlite, ops_v1_pg},
    {2, ops_v2, ops_v2},
};

int skv__mgr_store_ops_schema(skv__db *db, skv_error *err)
{
    return skv__mgr_store_migrate(db, "ops", ops, sizeof ops / sizeof ops[0],
                                  err);
}

int skv__mgr_store_agent_ops_set(skv__db *db, const char *agent,
                                 const char *state, int64_t deadline_ms,
                                 skv_error *err)
{
    if (!state || !state[0])
        return skv__mgr_store_exec_text(db, "DELETE FROM agent_ops WHERE "
                                        "agent_id=?", SKV__ARGS(agent), NULL,
                                        err);
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO agent_ops(agent_id, state,"
        " drain_deadline_ms) VALUES(?,?,?) ON CONFLICT(agent_id) DO UPDATE"
        " SET state=excluded.state,"
        " drain_deadline_ms=excluded.drain_deadline_ms", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    skv__db_bind_text(st, 2, state);
    skv__db_bind_int64(st, 3, deadline_ms);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_agent_ops(skv__db *db, const char *agent, char *state,
                             size_t cap, int64_t *deadline_ms, skv_error *err)
{
    skv__db_stmt *st;
    state[0] = '\0';
    *deadline_ms = 0;
    int rc = skv__db_prepare(db, "SELECT state, drain_deadline_ms FROM"
                             " agent_ops WHERE agent_id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *s = skv__db_column_text(st, 0);
        snprintf(state, cap, "%s", s ? s : "");
        *deadline_ms = skv__db_column_int64(st, 1);
        rc = 1;
    }
    skv__db_done(st);
    return rc;
}

void skv__mgr_store_gops_default(skv__mgr_store_gops *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->drain_action, sizeof g->drain_action, "requeue");
    snprintf(g->fault_action, sizeof g->fault_action, "requeue");
}

int skv__mgr_store_group_ops_set(skv__db *db, const char *name,
                                 const skv__mgr_store_gops *g, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO group_ops(name, drain_action,"
        " drain_grace_ms, fault_action, allow_unenforced) VALUES(?,?,?,?,?)"
        " ON CONFLICT(name) DO UPDATE SET drain_action=excluded.drain_action,"
        " drain_grace_ms=excluded.drain_grace_ms,"
        " fault_action=excluded.fault_action,"
        " allow_unenforced=excluded.allow_unenforced", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, g->drain_action);
    skv__db_bind_int64(st, 3, g->drain_grace_ms);
    skv__db_bind_text(st, 4, g->fault_action);
    skv__db_bind_int64(st, 5, g->allow_unenforced ? 1 : 0);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    /* Only admin/groups.c writes, inside an admin transaction whose end
     * forgets the cached policies anyway; this covers any other caller. */
    skv__mgr_store_admin_cache_forget(db);
    return rc;
}

int skv__mgr_store_group_ops_delete(skv__db *db, const char *name,
                                    skv_error *err)
{
    skv__mgr_store_admin_cache_forget(db);
    return skv__mgr_store_exec_text(db, "DELETE FROM group_ops WHERE name=?",
                                    SKV__ARGS(name), NULL, err);
}

/* The admin cache's key of name's policy ("O", then the name): false when
 * it does not fit (then it is not cached). */
static bool gops_key(char *k, size_t cap, const char *name)
{
    int n = snprintf(k, cap, "O\x1f%s", name);
    return n > 0 && (size_t)n < cap;
}

/* Asked for every kernel.create (mgr_create.c): a group's policy is an
 * admin row, cached and forgotten as the submit path's (admin_cache.h). */
int skv__mgr_store_group_ops(skv__db *db, const char *name,
                             skv__mgr_store_gops *out, skv_error *err)
{
    char key[SKV__ADMIN_CACHE_KEY];
    bool keyed = gops_key(key, sizeof key, name);
    if (keyed && skv__mgr_store_admin_cache_get(db, key, out, sizeof *out))
        return 0;
    int rc = skv__mgr_store_group_ops_read(db, name, out, err);
    if (!rc && keyed)
        skv__mgr_store_admin_cache_put(db, key, out, sizeof *out);
    return rc;
}

int skv__mgr_store_group_ops_read(skv__db *db, const char *name,
                                  skv__mgr_store_gops *out, skv_error *err)
{
    skv__db_stmt *st;
    skv__mgr_store_gops_default(out);
    int rc = skv__db_prepare(db, "SELECT drain_action, drain_grace_ms,"
        " fault_action, allow_unenforced FROM group_ops WHERE name=?", &st,
        err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *d = skv__db_column_text(st, 0);
        const char *f = skv__db_column_text(st, 2);
        snprintf(out->drain_action, sizeof out->drain_action, "%s",
                 d ? d : "requeue");
        out->drain_grace_ms = skv__db_column_int64(st, 1);
        snprintf(out->fault_action, sizeof out->fault_action, "%s",
                 f ? f : "requeue");
        out->allow_unenforced = skv__db_column_int64(st, 3) != 0;
        rc = 1;
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* Live sessions with a kernel on agent holding some of device. */
int skv__mgr_store_sessions_on_device(skv__db *db, const char *agent,
                                      const char *device, char ***out,
                                      size_t *n, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT DISTINCT k.session_id FROM kernels k"
        " JOIN kernel_alloc a ON a.kernel_id=k.id"
        " JOIN sessions s ON s.id=k.session_id WHERE k.agent_id=? AND"
        " k.live=1 AND"
        " a.device_id=? AND"
        " k.status IN ('SCHEDULED','PREPARING','RUNNING','TERMINATING') AND"
        " s.status NOT IN ('PENDING','TERMINATED','CANCELLED','ERROR')", &st,
        err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    skv__db_bind_text(st, 2, device);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}
