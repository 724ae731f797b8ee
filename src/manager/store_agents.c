/* Agent rows: what each agent registered (devices with their slots), its
 * status (alive / lost) and its last heartbeat.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int agent_row(skv_manager *m, const skv_proto_agent_register *r,
                     int64_t now_ms, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "INSERT INTO agents(id,resource_group,architecture,address,status,"
        "registered_ms,last_heartbeat_ms) VALUES(?1,?2,?3,?4,'alive',?5,?5)"
        " ON CONFLICT(id) DO UPDATE SET resource_group=?2, architecture=?3,"
        " address=?4, status='alive', registered_ms=?5,"
        " last_heartbeat_ms=?5", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, r->agent_id);
    skv__mgr_bind_text(st, 2, r->resource_group);
    skv__mgr_bind_text(st, 3, r->architecture);
    skv__mgr_bind_text(st, 4, r->address);
    sqlite3_bind_int64(st, 5, now_ms);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "agent");
    skv__mgr_db_done(m, st);
    return rc;
}

static int device_rows(skv_manager *m, const skv_proto_agent_register *r,
                       skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "INSERT INTO agent_devices(agent_id,idx,device_id,kind,numa_node,"
        "slots,model,bus_id) VALUES(?,?,?,?,?,?,?,?)", err);
    for (size_t i = 0; !rc && i < r->n_devices; i++) {
        const skv_proto_device *d = &r->devices[i];
        sqlite3_reset(st);
        skv__mgr_bind_text(st, 1, r->agent_id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        skv__mgr_bind_text(st, 3, d->id);
        skv__mgr_bind_text(st, 4, d->kind);
        sqlite3_bind_int(st, 5, d->numa_node);
        rc = skv__mgr_bind_slots(st, 6, d->slots, err);
        skv__mgr_bind_text(st, 7, d->model);
        skv__mgr_bind_text(st, 8, d->bus_id);
        if (!rc && sqlite3_step(st) != SQLITE_DONE)
            rc = skv__mgr_db_err(m, err, "agent device");
    }
    skv__mgr_db_done(m, st);
    return rc;
}

/* Inside the caller's transaction. */
int skv__mgr_store_agent(skv_manager *m, const skv_proto_agent_register *r,
                         int64_t now_ms, skv_error *err)
{
    int rc = agent_row(m, r, now_ms, err);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st,
                                 "DELETE FROM agent_devices WHERE agent_id=?",
                                 err);
    if (!rc) {
        skv__mgr_bind_text(st, 1, r->agent_id);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = skv__mgr_db_err(m, err, "agent devices");
        skv__mgr_db_done(m, st);
    }
    if (!rc)
        rc = device_rows(m, r, err);
    return rc;
}

int skv__mgr_store_agent_status(skv_manager *m, const char *id,
                                const char *status, int64_t now_ms,
                                skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "UPDATE agents SET status=?1, last_heartbeat_ms=CASE WHEN ?1='alive'"
        " THEN ?2 ELSE last_heartbeat_ms END WHERE id=?3", err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, status);
    sqlite3_bind_int64(st, 2, now_ms);
    skv__mgr_bind_text(st, 3, id);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : skv__mgr_db_err(m, err, "agent");
    skv__mgr_db_done(m, st);
    return rc;
}

void skv__mgr_devices_free(skv_proto_device *d, size_t n)
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

int skv__mgr_devices_load(skv_manager *m, const char *id,
                          skv_proto_device **out, size_t *n_out,
                          skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "SELECT device_id,kind,numa_node,slots,model,bus_id FROM agent_devices"
        " WHERE agent_id=? ORDER BY idx", err);
    skv_proto_device *d = NULL;
    size_t n = 0;
    if (!rc)
        skv__mgr_bind_text(st, 1, id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        skv_proto_device *nd = skv__reallocarray(d, n + 1, sizeof *nd);
        if (!nd) {
            rc = skv__err(err, SKV_ENOMEM, "manager: out of memory");
            break;
        }
        d = nd;
        memset(&d[n], 0, sizeof d[n]);
        d[n].id = skv__mgr_col_dup(st, 0);
        d[n].kind = skv__mgr_col_dup(st, 1);
        d[n].numa_node = sqlite3_column_int(st, 2);
        d[n].model = skv__mgr_col_dup(st, 4);
        d[n].bus_id = skv__mgr_col_dup(st, 5);
        rc = skv__mgr_col_slots(&d[n++].slots, st, 3, err);
    }
    skv__mgr_db_done(m, st);
    if (rc) {
        skv__mgr_devices_free(d, n);
        return rc;
    }
    *out = d;
    *n_out = n;
    return 0;
}

static int restore_one(skv_manager *m, sqlite3_stmt *st, int64_t now_ms,
                       skv_error *err)
{
    const char *id = (const char *)sqlite3_column_text(st, 0);
    skv__mgr_agent *a = skv__mgr_agent_slot(m, id);
    if (!a)
        return skv__err(err, SKV_ENOMEM, "manager: out of memory");
    const unsigned char *addr = sqlite3_column_text(st, 3);
    snprintf(a->address, sizeof a->address, "%s", addr ? (const char *)addr : "");
    a->state = SKV__AGENT_KNOWN;
    a->last_hb_ms = now_ms;   /* it gets a full timeout to come back */
    skv_proto_device *d = NULL;
    size_t n = 0;
    int rc = skv__mgr_devices_load(m, id, &d, &n, err);
    if (!rc)
        rc = skv__mgr_agent_spec(m, a, (const char *)sqlite3_column_text(st, 1),
                                 (const char *)sqlite3_column_text(st, 2), d,
                                 n, NULL, 0, false, err);
    skv__mgr_devices_free(d, n);
    return rc;
}

/* Alive agents of the database come back as known but not schedulable
 * until they register again. */
int skv__mgr_agents_restore(skv_manager *m, int64_t now_ms, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "SELECT id,resource_group,architecture,address FROM agents"
        " WHERE status='alive' ORDER BY id", err);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        skv_error e = SKV_ERROR_INIT;
        if (restore_one(m, st, now_ms, &e) == 0)
            continue;
        /* not fatal: its sessions are requeued or failed on restore */
        skv__log(SKV_LOG_WARN, "manager", "agent %s not restored: %s",
                 sqlite3_column_text(st, 0), e.message);
        skv__mgr_agent *a = skv__mgr_agent_find(
            m, (const char *)sqlite3_column_text(st, 0));
        if (a)
            a->state = SKV__AGENT_LOST;
        rc = e.code == SKV_ENOMEM ? e.code : 0;
        if (rc && err)
            *err = e;
    }
    skv__mgr_db_done(m, st);
    return rc;
}
