/* Agents' device health (agent_health, ops schema step 2): the set of
 * unhealthy devices each agent last reported, replaced whole at each
 * report. A restarted manager loads it before the agents come back, so a
 * device that failed stays out of the capacity until its agent reports it
 * healthy again (ops.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "store_int.h"

static int insert_rows(skv__db *db, const char *agent,
                       const skv_proto_device_fault *v, size_t n,
                       skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO agent_health(agent_id,"
                             "device_id,reason) VALUES(?,?,?)", &st, err);
    for (size_t i = 0; !rc && i < n; i++) {
        skv__db_reset(st);
        skv__db_bind_text(st, 1, agent);
        skv__db_bind_text(st, 2, v[i].device_id);
        skv__db_bind_text(st, 3, v[i].reason ? v[i].reason : "");
        rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_health_set(skv__db *db, const char *agent,
                              const skv_proto_device_fault *v, size_t n,
                              skv_error *err)
{
    if (!agent || (n && !v))
        return skv__err(err, SKV_EINVAL, "device health: no agent or set");
    for (size_t i = 0; i < n; i++)
        if (!v[i].device_id || !v[i].device_id[0])
            return skv__err(err, SKV_EINVAL, "device health of agent '%s': "
                            "a device without an id", agent);
    int rc = skv__mgr_store_exec_text(db, "DELETE FROM agent_health WHERE "
                                      "agent_id=?", SKV__ARGS(agent), NULL,
                                      err);
    return rc ? rc : insert_rows(db, agent, v, n, err);
}

void skv__mgr_store_health_free(skv_proto_device_fault *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        skv__free(v[i].device_id);
        skv__free(v[i].reason);
    }
    skv__free(v);
}

/* One more row on *v; an id or reason that cannot be copied is ENOMEM. */
static int add_row(skv__db_stmt *st, skv_proto_device_fault **v, size_t *n,
                   skv_error *err)
{
    skv_proto_device_fault *p = skv__reallocarray(*v, *n + 1, sizeof **v);
    if (!p)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *v = p;
    p[*n].device_id = skv__mgr_store_col_dup(st, 0);
    p[*n].reason = skv__mgr_store_col_dup(st, 1);
    (*n)++;
    if (!p[*n - 1].device_id || !p[*n - 1].reason)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    return 0;
}

int skv__mgr_store_health(skv__db *db, const char *agent,
                          skv_proto_device_fault **out, size_t *n,
                          skv_error *err)
{
    *out = NULL;
    *n = 0;
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "SELECT device_id, reason FROM agent_health"
                             " WHERE agent_id=? ORDER BY device_id", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    while (!rc && (rc = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = add_row(st, out, n, err);
    skv__db_done(st);
    if (rc < 0) {
        skv__mgr_store_health_free(*out, *n);
        *out = NULL;
        *n = 0;
        return rc;
    }
    return 0;
}
