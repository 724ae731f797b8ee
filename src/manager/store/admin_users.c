/* Rows of users and user_projects (project memberships).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_sql.h"

static int user_row(skv_proto_admin_user_reply *rp, skv__db_stmt *st,
                    skv_error *err)
{
    skv_proto_user *u = skv__mgr_store_admin_grow((void **)&rp->users,
                                                  &rp->n_users, sizeof *u);
    if (!u)
        return skv__mgr_store_admin_nomem(err);
    u->name = skv__mgr_store_admin_col_dup(st, 0);
    u->email = skv__mgr_store_admin_col_dup(st, 1);
    u->role = skv__mgr_store_admin_col_dup(st, 2);
    u->domain = skv__mgr_store_admin_col_dup(st, 3);
    u->resource_policy = skv__mgr_store_admin_col_dup(st, 4);
    u->description = skv__mgr_store_admin_col_dup(st, 5);
    u->active = skv__db_column_int64(st, 6) != 0;
    return u->name && u->role && u->domain
               ? 0 : skv__mgr_store_admin_nomem(err);
}

/* The users first, then each one's projects: one statement at a time. */
int skv__mgr_store_admin_user_read(skv__db *db,
                                   skv_proto_admin_user_reply *rp,
                                   const char *name, const char *domain,
                                   skv_error *err)
{
    skv__db_stmt *st;
    size_t first = rp->n_users;
    int rc = skv__db_prepare(db, "SELECT name, email, role, domain,"
        " resource_policy, description, active FROM users"
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
        rc = user_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    for (size_t i = first; !rc && i < rp->n_users; i++) {
        skv_proto_user *u = &rp->users[i];
        rc = skv__mgr_store_admin_texts(db, &u->projects, &u->n_projects,
            "SELECT project FROM user_projects WHERE \"user\"=?"
            " ORDER BY project", 1, u->name, err);
    }
    return rc;
}

int skv__mgr_store_admin_user_insert(skv__db *db, const skv_proto_user *u,
                                     skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO users (name, email, role,"
        " domain, resource_policy, description, active) VALUES (?, ?,"
        " COALESCE(?, 'user'), COALESCE(?, 'default'), NULLIF(?, ''), ?, 1)",
        &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, u->name);
    skv__db_bind_text(st, 2, u->email);
    skv__db_bind_text(st, 3, u->role);
    skv__db_bind_text(st, 4, u->domain);
    skv__db_bind_text(st, 5, u->resource_policy);
    skv__db_bind_text(st, 6, u->description);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_user_update(skv__db *db, const skv_proto_user *u,
                                     skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE users SET email=COALESCE(?, email),"
        " role=COALESCE(?, role), domain=COALESCE(?, domain),"
        " resource_policy=CASE WHEN CAST(? AS TEXT) IS NULL"
        " THEN resource_policy ELSE NULLIF(?, '') END,"
        " description=COALESCE(?, description), active=? WHERE name=?",
        &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, u->email);
    skv__db_bind_text(st, 2, u->role);
    skv__db_bind_text(st, 3, u->domain);
    skv__db_bind_text(st, 4, u->resource_policy);
    skv__db_bind_text(st, 5, u->resource_policy);
    skv__db_bind_text(st, 6, u->description);
    skv__db_bind_int64(st, 7, u->active ? 1 : 0);
    skv__db_bind_text(st, 8, u->name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_user_add(skv__db *db, const char *name,
                                  const char *role, const char *description,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO users (name, role, domain,"
        " description, active) VALUES (?, ?, 'default', ?, 1)", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, role);
    skv__db_bind_text(st, 3, description);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_user_delete(skv__db *db, const char *name,
                                     skv_error *err)
{
    static const char *const sql[] = {
        "DELETE FROM keypairs WHERE \"user\"=?",
        "DELETE FROM user_projects WHERE \"user\"=?",
        "DELETE FROM users WHERE name=?",
    };
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof sql / sizeof sql[0]; i++)
        rc = skv__mgr_store_admin_put(db, sql[i], 1, name, NULL, err);
    return rc;
}

int skv__mgr_store_admin_user_set_projects(skv__db *db, const char *name,
                                           char *const *projects, size_t n,
                                           skv_error *err)
{
    int rc = skv__mgr_store_admin_put(db, "DELETE FROM user_projects WHERE"
                                      " \"user\"=?", 1, name, NULL, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_store_admin_put(db, "INSERT INTO user_projects"
            " (\"user\", project) VALUES (?, ?)"
            " ON CONFLICT (\"user\", project) DO NOTHING", 2, name,
            projects[i], err);
    return rc;
}

int skv__mgr_store_admin_user_get(skv__db *db, const char *name,
                                  skv__mgr_store_admin_user_row *out,
                                  skv_error *err)
{
    memset(out, 0, sizeof *out);
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT domain, role, active FROM users"
                             " WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        skv__mgr_store_admin_col_copy(st, 0, out->domain, sizeof out->domain);
        skv__mgr_store_admin_col_copy(st, 1, out->role, sizeof out->role);
        out->active = skv__db_column_int64(st, 2) != 0;
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_user_any_admin(skv__db *db, skv_error *err)
{
    return skv__mgr_store_admin_get(db, NULL, 0, "SELECT 1 FROM users WHERE"
                                    " role='admin' LIMIT 1", 0, NULL, NULL,
                                    err);
}

int skv__mgr_store_admin_user_project_outside(skv__db *db, const char *user,
                                              const char *domain, char *buf,
                                              size_t bufsz, skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT p.name FROM"
        " user_projects up JOIN projects p ON p.name=up.project WHERE"
        " up.\"user\"=? AND p.domain<>? ORDER BY p.name LIMIT 1", 2, user,
        domain, err);
}

int skv__mgr_store_admin_user_member(skv__db *db, const char *user,
                                     const char *project, skv_error *err)
{
    return skv__mgr_store_admin_get(db, NULL, 0, "SELECT 1 FROM user_projects"
        " WHERE \"user\"=? AND project=?", 2, user, project, err);
}

int skv__mgr_store_admin_user_policy(skv__db *db, const char *user,
                                     char *buf, size_t bufsz, skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT resource_policy"
        " FROM users WHERE name=? AND resource_policy IS NOT NULL"
        " AND resource_policy<>''", 1, user, NULL, err);
}
