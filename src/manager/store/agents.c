/* Agent rows: what each agent registered (devices with their slots), its
 * status (alive / lost) and its last heartbeat. The manager's live view
 * (mgr_agents.c) is rebuilt from them on open.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "dispatch_cache.h"
#include "store_int.h"

static int agent_row(skv__db *db, const skv_proto_agent_register *r,
                     int64_t now_ms, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db,
        "INSERT INTO agents(id,resource_group,architecture,address,status,"
        "registered_ms,last_heartbeat_ms) VALUES(?,?,?,?,'alive',?,?)"
        " ON CONFLICT(id) DO UPDATE SET resource_group=excluded.resource_group,"
        " architecture=excluded.architecture, address=excluded.address,"
        " status='alive', registered_ms=excluded.registered_ms,"
        " last_heartbeat_ms=excluded.last_heartbeat_ms", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, r->agent_id);
    skv__db_bind_text(st, 2, r->resource_group);
    skv__db_bind_text(st, 3, r->architecture);
    skv__db_bind_text(st, 4, r->address);
    skv__db_bind_int64(st, 5, now_ms);
    skv__db_bind_int64(st, 6, now_ms);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    if (!rc)
        skv__mgr_store_dc_agent_note(db, r->agent_id, r->address);
    return rc;
}

static int device_rows(skv__db *db, const skv_proto_agent_register *r,
                       skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db,
        "INSERT INTO agent_devices(agent_id,idx,device_id,kind,numa_node,"
        "slots,model,bus_id) VALUES(?,?,?,?,?,?,?,?)", &st, err);
    for (size_t i = 0; !rc && i < r->n_devices; i++) {
        const skv_proto_device *d = &r->devices[i];
        skv__db_reset(st);
        skv__db_bind_text(st, 1, r->agent_id);
        skv__db_bind_int64(st, 2, (int64_t)i);
        skv__db_bind_text(st, 3, d->id);
        skv__db_bind_text(st, 4, d->kind);
        skv__db_bind_int64(st, 5, d->numa_node);
        rc = skv__mgr_store_bind_slots(st, 6, d->slots, err);
        skv__db_bind_text(st, 7, d->model);
        skv__db_bind_text(st, 8, d->bus_id);
        if (!rc)
            rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    return rc;
}

/* What an agent registered: its row and its devices (replaced whole).
 * Inside the caller's transaction. */
int skv__mgr_store_agent_put(skv__db *db, const skv_proto_agent_register *r,
                             int64_t now_ms, skv_error *err)
{
    int rc = agent_row(db, r, now_ms, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "DELETE FROM agent_devices WHERE "
                                      "agent_id=?", SKV__ARGS(r->agent_id),
                                      NULL, err);
    if (!rc)
        rc = device_rows(db, r, err);
    return rc;
}

/* "alive" also refreshes the last heartbeat. */
int skv__mgr_store_agent_status(skv__db *db, const char *id,
                                const char *status, int64_t now_ms,
                                skv_error *err)
{
    skv__db_stmt *st;
    bool alive = !strcmp(status, "alive");
    int rc = skv__db_prepare(db, alive
        ? "UPDATE agents SET status=?, last_heartbeat_ms=? WHERE id=?"
        : "UPDATE agents SET status=? WHERE id=?", &st, err);
    if (rc)
        return rc;
    int p = 1;
    skv__db_bind_text(st, p++, status);
    if (alive)
        skv__db_bind_int64(st, p++, now_ms);
    skv__db_bind_text(st, p, id);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

void skv__mgr_store_devices_free(skv_proto_device *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        skv__free(d[i].id);
        skv__free(d[i].kind);
        skv__free(d[i].model);
        skv__free(d[i].bus_id);
        skv_slots_free(d[i].slots);
    }
    skv__free(d);
}

int skv__mgr_store_devices(skv__db *db, const char *id,
                           skv_proto_device **out, size_t *n_out,
                           skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db,
        "SELECT device_id,kind,numa_node,slots,model,bus_id FROM agent_devices"
        " WHERE agent_id=? ORDER BY idx", &st, err);
    skv_proto_device *d = NULL;
    size_t n = 0;
    if (!rc)
        skv__db_bind_text(st, 1, id);
    while (!rc && skv__db_step(st, NULL) == SKV__DB_ROW) {
        skv_proto_device *nd = skv__reallocarray(d, n + 1, sizeof *nd);
        if (!nd) {
            rc = skv__err(err, SKV_ENOMEM, "manager: out of memory");
            break;
        }
        d = nd;
        memset(&d[n], 0, sizeof d[n]);
        d[n].id = skv__mgr_store_col_dup(st, 0);
        d[n].kind = skv__mgr_store_col_dup(st, 1);
        d[n].numa_node = (int32_t)skv__db_column_int64(st, 2);
        d[n].model = skv__mgr_store_col_dup(st, 4);
        d[n].bus_id = skv__mgr_store_col_dup(st, 5);
        rc = skv__mgr_store_col_slots(&d[n++].slots, st, 3, err);
    }
    skv__db_done(st);
    if (rc) {
        skv__mgr_store_devices_free(d, n);
        return rc;
    }
    *out = d;
    *n_out = n;
    return 0;
}

/* The agents recorded alive: (id, group, architecture, address) to fn. */
int skv__mgr_store_agents_alive(skv__db *db,
                                int (*fn)(void *arg,
                                          const skv__mgr_store_agent *a),
                                void *arg, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT id,resource_group,architecture,"
                             "address FROM agents WHERE status='alive' ORDER "
                             "BY id", &st, err);
    if (rc)
        return rc;
    int step = 0;
    while (!rc && (step = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_agent a = {
            skv__db_column_text(st, 0), skv__db_column_text(st, 1),
            skv__db_column_text(st, 2), skv__db_column_text(st, 3)};
        skv__mgr_store_dc_agent_note(db, a.id, a.address);
        rc = fn(arg, &a);
    }
    skv__db_done(st);
    return rc ? rc : step < 0 ? step : 0;
}
