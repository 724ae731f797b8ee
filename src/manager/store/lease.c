/* Leader election (advisory lock) and fencing (epoch row); see lease.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "lease.h"
#include "migrate.h"
#include "skv_internal.h"

/* The same text on both engines. */
static const char ha_v1[] =
    "CREATE TABLE IF NOT EXISTS ha_lease ("
    " name TEXT PRIMARY KEY, epoch BIGINT NOT NULL,"
    " holder TEXT, since_ms BIGINT)";

static const skv__mgr_migration ha[] = {
    {1, ha_v1, ha_v1},
};

int skv__mgr_store_lease_schema(skv__db *db, skv_error *err)
{
    return skv__mgr_store_migrate(db, "ha", ha, 1, err);
}

static bool pg(skv__db *db)
{
    return skv__db_kind_of(db) == SKV__DB_POSTGRES;
}

/* One-row, one-column query with an optional int64 parameter. */
static int scalar(skv__db *db, const char *sql, const int64_t *arg,
                  int64_t *out, skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    if (arg)
        skv__db_bind_int64(st, 1, *arg);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        *out = skv__db_column_int64(st, 0);
        rc = 0;
    } else if (rc == SKV__DB_DONE) {
        rc = skv__err(err, SKV_ENOENT, "manager lease: no row for %.60s",
                      sql);
    }
    skv__db_done(st);
    return rc;
}

/* Elected: the epoch goes up by one in its own transaction. */
static int bump(skv__db *db, const char *holder, int64_t now_ms,
                int64_t *epoch, skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_begin(db, err);
    if (!rc)
        rc = skv__db_prepare(db, "INSERT INTO ha_lease (name, epoch, holder,"
                             " since_ms) VALUES ('manager', 1, ?, ?)"
                             " ON CONFLICT (name) DO UPDATE SET"
                             " epoch = ha_lease.epoch + 1,"
                             " holder = excluded.holder,"
                             " since_ms = excluded.since_ms"
                             " RETURNING epoch", &st, err);
    if (!rc) {
        skv__db_bind_text(st, 1, holder);
        skv__db_bind_int64(st, 2, now_ms);
        rc = skv__db_step(st, err);
        *epoch = rc == SKV__DB_ROW ? skv__db_column_int64(st, 0) : 0;
        rc = rc == SKV__DB_ROW ? 0 : rc < 0 ? rc : SKV_EIO;
        skv__db_done(st);
    }
    if (!rc)
        return skv__db_commit(db, err);
    skv__db_rollback(db);
    return rc;
}

int skv__mgr_store_lease_try(skv__db *db, const char *holder, int64_t now_ms,
                             int64_t *epoch, skv_error *err)
{
    *epoch = 0;
    if (!holder || !*holder || strlen(holder) > 127)
        return skv__err(err, SKV_EINVAL, "manager lease: holder must be 1 "
                        "to 127 bytes");
    int rc = skv__mgr_store_lease_schema(db, err);
    if (rc)
        return rc;
    int64_t got = 1;
    const int64_t key = SKV__MGR_LEASE_KEY;
    if (pg(db) && (rc = scalar(db, "SELECT pg_try_advisory_lock(?)", &key,
                               &got, err)))
        return rc;
    if (!got)
        return 0;
    if ((rc = bump(db, holder, now_ms, epoch, err))) {
        skv__mgr_store_lease_release(db);
        return rc;
    }
    return 1;
}

/* The check raises its own failure: a leader that sends it without
 * waiting (a batch's pipeline, db_pg_pipe.c) learns of it at its next
 * answer or at COMMIT, which then fails and rolls back. The row is read
 * FOR SHARE, so a new leader's increment waits for this transaction to
 * end; a missing row fails the check too. The failed cast of the message
 * is how plain SQL raises an error of its choosing; its operand reads
 * the row, so the planner cannot fold it into an error of every run, and
 * db_pg.c reports it as SKV_ESTATE "deposed: ...". */
static const char check_sql[] =
    "SELECT CASE WHEN e = ? THEN 0 ELSE CAST('deposed: this manager led at"
    " epoch ' || CAST(? AS bigint) || ', another manager leads at epoch '"
    " || COALESCE(CAST(e AS text), 'none (no lease row)') AS bigint) END"
    " FROM (SELECT (SELECT epoch FROM ha_lease WHERE name = 'manager'"
    " FOR SHARE) AS e) AS l";

int skv__mgr_store_lease_check(skv__db *db, int64_t epoch, skv_error *err)
{
    if (!pg(db))
        return 0;
    if (!skv__db_in_transaction(db))
        return skv__err(err, SKV_ESTATE, "manager lease: the check belongs "
                        "inside the write transaction");
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, check_sql, &st, err);
    if (rc)
        return rc;
    skv__db_bind_int64(st, 1, epoch);
    skv__db_bind_int64(st, 2, epoch);
    skv__db_rows_unread(st);
    rc = skv__db_step(st, err);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

void skv__mgr_store_lease_release(skv__db *db)
{
    if (!db || !pg(db))
        return;
    int64_t done = 0;
    const int64_t key = SKV__MGR_LEASE_KEY;
    scalar(db, "SELECT pg_advisory_unlock(?)", &key, &done, NULL);
}

int skv__mgr_store_lease_read(skv__db *db, int64_t *epoch, char *holder,
                              skv_error *err)
{
    skv__db_stmt *st = NULL;
    *epoch = 0;
    holder[0] = '\0';
    int rc = skv__db_prepare(db, "SELECT epoch, holder FROM ha_lease"
                             " WHERE name = 'manager'", &st, err);
    if (rc)
        return rc;
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        *epoch = skv__db_column_int64(st, 0);
        const char *h = skv__db_column_text(st, 1);
        snprintf(holder, 128, "%s", h ? h : "");
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* SET takes no parameters: the number is formatted, never text. */
static int set_ms(skv__db *db, const char *name, uint32_t ms, skv_error *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SET %s = %u", name, (unsigned)ms);
    int rc = skv__db_exec(db, sql, err);
    if (rc && err)
        skv__err(err, rc, "manager lease: %s (PostgreSQL 14 or newer is "
                 "needed for standby managers): %s", name, err->message);
    return rc;
}

int skv__mgr_store_lease_hold(skv__db *db, uint32_t lease_ms, skv_error *err)
{
    return pg(db) ? set_ms(db, "idle_session_timeout", lease_ms, err) : 0;
}

int skv__mgr_store_lease_renew(skv__db *db, int64_t epoch, skv_error *err)
{
    if (!pg(db))
        return 0;
    int64_t now = 0;
    int rc = scalar(db, "SELECT epoch FROM ha_lease WHERE name = 'manager'",
                    NULL, &now, err);
    if (!rc && now != epoch)
        rc = skv__err(err, SKV_ESTATE, "deposed: this manager led at epoch "
                      "%lld, another manager leads at epoch %lld",
                      (long long)epoch, (long long)now);
    return rc;
}

static int fence_hook(skv__db *db, void *arg, skv_error *err)
{
    return skv__mgr_store_lease_check(db, *(const int64_t *)arg, err);
}

int skv__mgr_store_lease_fence(skv__db *db, const int64_t *epoch,
                               uint32_t lease_ms, skv_error *err)
{
    if (!pg(db))
        return 0;
    int rc = set_ms(db, "idle_in_transaction_session_timeout", lease_ms, err);
    if (rc)
        return rc;
    skv__db_on_begin(db, fence_hook, (void *)epoch);
    if ((rc = skv__db_begin(db, err)))   /* runs the check */
        return rc;
    return skv__db_commit(db, err);
}
