/* Rows of resource_groups (and their place in domain_groups).
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

static int pending_check(const skv__mgr_store_admin_group *g, skv_error *err)
{
    if (g->pending_timeout_ms > (uint64_t)INT64_MAX)
        return skv__err(err, SKV_ERANGE, "resource group '%s': "
                        "pending_timeout_ms too large", g->name);
    return 0;
}

int skv__mgr_store_admin_group_insert(skv__db *db,
                                      const skv__mgr_store_admin_group *g,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = pending_check(g, err);
    if (!rc)
        rc = skv__db_prepare(db, "INSERT INTO resource_groups (name,"
            " description, scheduler, selector, lost_batch_policy,"
            " pending_timeout_ms, session_types, active)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1)", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, g->name);
    skv__db_bind_text(st, 2, g->description);
    skv__db_bind_text(st, 3, g->scheduler);
    skv__db_bind_text(st, 4, g->selector);
    skv__db_bind_text(st, 5, g->lost_batch_policy ? g->lost_batch_policy
                                                  : "requeue");
    skv__db_bind_int64(st, 6, (int64_t)g->pending_timeout_ms);
    skv__db_bind_text(st, 7, g->session_types ? g->session_types : "");
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_group_update(skv__db *db,
                                      const skv__mgr_store_admin_group *g,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = pending_check(g, err);
    if (!rc)
        rc = skv__db_prepare(db, "UPDATE resource_groups SET"
            " description=COALESCE(?, description), scheduler=?, selector=?,"
            " lost_batch_policy=COALESCE(?, lost_batch_policy),"
            " pending_timeout_ms=?,"
            " session_types=COALESCE(?, session_types), active=?"
            " WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, g->description);
    skv__db_bind_text(st, 2, g->scheduler);
    skv__db_bind_text(st, 3, g->selector);
    skv__db_bind_text(st, 4, g->lost_batch_policy);
    skv__db_bind_int64(st, 5, (int64_t)g->pending_timeout_ms);
    skv__db_bind_text(st, 6, g->session_types);
    skv__db_bind_int64(st, 7, g->active ? 1 : 0);
    skv__db_bind_text(st, 8, g->name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_group_delete(skv__db *db, const char *name,
                                      skv_error *err)
{
    int rc = skv__mgr_store_admin_put(db, "DELETE FROM domain_groups WHERE"
                                      " resource_group=?", 1, name, NULL, err);
    return rc ? rc : skv__mgr_store_admin_put(db, "DELETE FROM"
        " resource_groups WHERE name=?", 1, name, NULL, err);
}

static int group_row(skv_proto_admin_resource_group_reply *rp,
                     skv__db_stmt *st, skv_error *err)
{
    skv_proto_resource_group *g = skv__mgr_store_admin_grow(
        (void **)&rp->groups, &rp->n_groups, sizeof *g);
    if (!g || !(g->name = skv__mgr_store_admin_col_dup(st, 0)))
        return skv__mgr_store_admin_nomem(err);
    g->description = skv__mgr_store_admin_col_dup(st, 1);
    g->scheduler = skv__mgr_store_admin_col_dup(st, 2);
    g->lost_batch_policy = skv__mgr_store_admin_col_dup(st, 3);
    int64_t t = skv__db_column_int64(st, 4);
    g->pending_timeout_ms = t > 0 ? (uint64_t)t : 0;
    g->active = skv__db_column_int64(st, 6) != 0;
    g->selector = skv__mgr_store_admin_col_dup(st, 7);
    g->preemption = skv__strdup(skv__db_column_int64(st, 8) ? "on" : "off");
    g->preempt_min_runtime_ms = skv__db_column_int64(st, 9);
    g->preempt_mode = skv__mgr_store_admin_col_dup(st, 10);
    g->idle_timeout_ms = skv__db_column_int64(st, 11);
    g->max_lifetime_ms = skv__db_column_int64(st, 12);
    g->preempt_order = skv__mgr_store_admin_col_dup(st, 13);
    if (!g->preemption)
        return skv__mgr_store_admin_nomem(err);
    const char *types = skv__db_column_text(st, 5);
    return skv__mgr_store_admin_split(&g->session_types, &g->n_session_types,
                                      types ? types : "", err);
}

int skv__mgr_store_admin_group_read(skv__db *db,
                                    skv_proto_admin_resource_group_reply *rp,
                                    const char *name, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT name, description, scheduler,"
        " lost_batch_policy, pending_timeout_ms, session_types, active,"
        " selector, preemption, preempt_min_runtime_ms, preempt_mode,"
        " idle_timeout_ms, max_lifetime_ms, preempt_order FROM resource_groups"
        " WHERE (CAST(? AS TEXT) IS NULL OR name=?) ORDER BY name", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, name);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = group_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_group_sched(skv__db *db, const char *name,
                                     char *sched, size_t schedsz, char *sel,
                                     size_t selsz, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT scheduler, selector FROM"
                             " resource_groups WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        skv__mgr_store_admin_col_copy(st, 0, sched, schedsz);
        skv__mgr_store_admin_col_copy(st, 1, sel, selsz);
    }
    skv__db_done(st);
    return rc;
}

/* Copied out first: fn may run statements of its own. */
int skv__mgr_store_admin_group_each(skv__db *db,
                                    skv__mgr_store_admin_group_fn fn,
                                    void *arg, skv_error *err)
{
    char **v;
    size_t n;
    int rc = skv__mgr_store_admin_names(db, SKV__MGR_STORE_ADMIN_GROUPS, &v,
                                        &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        char sched[SKV__MGR_STORE_ADMIN_NAME_MAX];
        char sel[SKV__MGR_STORE_ADMIN_NAME_MAX];
        rc = skv__mgr_store_admin_group_sched(db, v[i], sched, sizeof sched,
                                              sel, sizeof sel, err);
        if (rc > 0)
            rc = fn(arg, v[i], sched, sel, err);
    }
    skv__mgr_store_admin_strv_free(v, n);
    return rc;
}

int skv__mgr_store_admin_group_admits(skv__db *db, const char *name,
                                      bool *active, char *types,
                                      size_t typesz, skv_error *err)
{
    skv__db_stmt *st;
    *active = false;
    int rc = skv__db_prepare(db, "SELECT active, session_types FROM"
                             " resource_groups WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        *active = skv__db_column_int64(st, 0) != 0;
        skv__mgr_store_admin_col_copy(st, 1, types, typesz);
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_group_info(skv__db *db, const char *name,
                                    char *lost, size_t lostsz,
                                    uint64_t *pending_timeout_ms,
                                    skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT lost_batch_policy,"
        " pending_timeout_ms FROM resource_groups WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        skv__mgr_store_admin_col_copy(st, 0, lost, lostsz);
        int64_t t = skv__db_column_int64(st, 1);
        *pending_timeout_ms = t > 0 ? (uint64_t)t : 0;
    }
    skv__db_done(st);
    return rc;
}
