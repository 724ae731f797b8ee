/* Rows of projects.
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

static int project_row(skv_proto_admin_project_reply *rp, skv__db_stmt *st,
                       skv_error *err)
{
    skv_proto_project *p = skv__mgr_store_admin_grow((void **)&rp->projects,
                                                     &rp->n_projects,
                                                     sizeof *p);
    if (!p)
        return skv__mgr_store_admin_nomem(err);
    p->name = skv__mgr_store_admin_col_dup(st, 0);
    p->domain = skv__mgr_store_admin_col_dup(st, 1);
    p->description = skv__mgr_store_admin_col_dup(st, 2);
    p->resource_policy = skv__mgr_store_admin_col_dup(st, 3);
    p->active = skv__db_column_int64(st, 4) != 0;
    return p->name && p->domain ? 0 : skv__mgr_store_admin_nomem(err);
}

int skv__mgr_store_admin_project_read(skv__db *db,
                                      skv_proto_admin_project_reply *rp,
                                      const char *name, const char *domain,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT name, domain, description,"
        " resource_policy, active FROM projects"
        " WHERE (CAST(? AS TEXT) IS NULL OR name=?)"
        " AND (CAST(? AS TEXT) IS NULL OR domain=?) ORDER BY name", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, name);
    skv__db_bind_text(st, 3, domain);
    skv__db_bind_text(st, 4, domain);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = project_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_project_insert(skv__db *db,
                                        const skv_proto_project *p,
                                        skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO projects (name, domain,"
        " description, resource_policy, active) VALUES (?,"
        " COALESCE(?, 'default'), ?, NULLIF(?, ''), 1)", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, p->name);
    skv__db_bind_text(st, 2, p->domain);
    skv__db_bind_text(st, 3, p->description);
    skv__db_bind_text(st, 4, p->resource_policy);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_project_update(skv__db *db,
                                        const skv_proto_project *p,
                                        skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE projects SET"
        " domain=COALESCE(?, domain), description=COALESCE(?, description),"
        " resource_policy=CASE WHEN CAST(? AS TEXT) IS NULL"
        " THEN resource_policy ELSE NULLIF(?, '') END, active=?"
        " WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, p->domain);
    skv__db_bind_text(st, 2, p->description);
    skv__db_bind_text(st, 3, p->resource_policy);
    skv__db_bind_text(st, 4, p->resource_policy);
    skv__db_bind_int64(st, 5, p->active ? 1 : 0);
    skv__db_bind_text(st, 6, p->name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_project_ensure(skv__db *db, const char *name,
                                        const char *domain,
                                        const char *description,
                                        skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO projects (name, domain,"
        " description, active) VALUES (?, ?, ?, 1)"
        " ON CONFLICT (name) DO NOTHING", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, domain);
    skv__db_bind_text(st, 3, description);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_project_delete(skv__db *db, const char *name,
                                        skv_error *err)
{
    return skv__mgr_store_admin_put(db, "DELETE FROM projects WHERE name=?",
                                    1, name, NULL, err);
}

int skv__mgr_store_admin_project_member(skv__db *db, const char *project,
                                        char *buf, size_t bufsz,
                                        skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT \"user\" FROM"
        " user_projects WHERE project=? ORDER BY \"user\" LIMIT 1", 1,
        project, NULL, err);
}

int skv__mgr_store_admin_project_outsiders(skv__db *db, const char *project,
                                           const char *domain,
                                           skv_error *err)
{
    return skv__mgr_store_admin_get(db, NULL, 0, "SELECT 1 FROM"
        " user_projects up JOIN users u ON u.name=up.\"user\" WHERE"
        " up.project=? AND u.domain<>?", 2, project, domain, err);
}

int skv__mgr_store_admin_project_domain(skv__db *db, const char *name,
                                        char *buf, size_t bufsz,
                                        skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT domain FROM"
        " projects WHERE name=?", 1, name, NULL, err);
}

int skv__mgr_store_admin_project_policy(skv__db *db, const char *name,
                                        char *buf, size_t bufsz,
                                        skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT resource_policy"
        " FROM projects WHERE name=? AND resource_policy IS NOT NULL", 1,
        name, NULL, err);
}

int skv__mgr_store_admin_project_active(skv__db *db, const char *name,
                                        bool *active, skv_error *err)
{
    return skv__mgr_store_admin_flag(db, "SELECT active FROM projects WHERE"
                                     " name=?", name, active, err);
}
