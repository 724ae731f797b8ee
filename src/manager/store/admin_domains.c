/* Rows of domains and domain_groups (the resource groups a domain's users
 * may use).
 * SPDX-License-Identifier: Apache-2.0 */
#include "admin_sql.h"

static int domain_groups(skv__db *db, skv_proto_domain *d, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT resource_group FROM domain_groups"
                             " WHERE domain=? ORDER BY resource_group", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, d->name);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = skv__mgr_store_admin_push_col(&d->resource_groups,
                                           &d->n_resource_groups, st, 0, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

static int domain_row(skv_proto_admin_domain_reply *rp, skv__db_stmt *st,
                      skv_error *err)
{
    skv_proto_domain *d = skv__mgr_store_admin_grow((void **)&rp->domains,
                                                    &rp->n_domains,
                                                    sizeof *d);
    if (!d || !(d->name = skv__mgr_store_admin_col_dup(st, 0)))
        return skv__mgr_store_admin_nomem(err);
    d->description = skv__mgr_store_admin_col_dup(st, 1);
    d->active = skv__db_column_int64(st, 2) != 0;
    return 0;
}

/* The domains first, then each one's groups: one statement at a time. */
int skv__mgr_store_admin_domain_read(skv__db *db,
                                     skv_proto_admin_domain_reply *rp,
                                     const char *name, skv_error *err)
{
    skv__db_stmt *st;
    size_t first = rp->n_domains;
    int rc = skv__db_prepare(db, "SELECT name, description, active FROM"
        " domains WHERE (CAST(? AS TEXT) IS NULL OR name=?) ORDER BY name",
        &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, name);
    skv__db_bind_text(st, 2, name);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = domain_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    for (size_t i = first; !rc && i < rp->n_domains; i++)
        rc = domain_groups(db, &rp->domains[i], err);
    return rc;
}

int skv__mgr_store_admin_domain_insert(skv__db *db, const char *name,
                                       const char *description,
                                       skv_error *err)
{
    return skv__mgr_store_admin_put(db, "INSERT INTO domains (name,"
        " description, active) VALUES (?, ?, 1)", 2, name, description, err);
}

int skv__mgr_store_admin_domain_update(skv__db *db, const char *name,
                                       const char *description, bool active,
                                       skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "UPDATE domains SET description="
        "COALESCE(?, description), active=? WHERE name=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, description);
    skv__db_bind_int64(st, 2, active ? 1 : 0);
    skv__db_bind_text(st, 3, name);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_domain_ensure(skv__db *db, const char *name,
                                       const char *description,
                                       skv_error *err)
{
    return skv__mgr_store_admin_put(db, "INSERT INTO domains (name,"
        " description, active) VALUES (?, ?, 1)"
        " ON CONFLICT (name) DO NOTHING", 2, name, description, err);
}

int skv__mgr_store_admin_domain_delete(skv__db *db, const char *name,
                                       skv_error *err)
{
    int rc = skv__mgr_store_admin_put(db, "DELETE FROM domain_groups WHERE"
                                      " domain=?", 1, name, NULL, err);
    return rc ? rc : skv__mgr_store_admin_put(db, "DELETE FROM domains WHERE"
                                              " name=?", 1, name, NULL, err);
}

int skv__mgr_store_admin_domain_add_group(skv__db *db, const char *domain,
                                          const char *group, skv_error *err)
{
    return skv__mgr_store_admin_put(db, "INSERT INTO domain_groups (domain,"
        " resource_group) VALUES (?, ?)"
        " ON CONFLICT (domain, resource_group) DO NOTHING", 2, domain, group,
        err);
}

int skv__mgr_store_admin_domain_set_groups(skv__db *db, const char *name,
                                           char *const *groups, size_t n,
                                           skv_error *err)
{
    int rc = skv__mgr_store_admin_put(db, "DELETE FROM domain_groups WHERE"
                                      " domain=?", 1, name, NULL, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv__mgr_store_admin_domain_add_group(db, name, groups[i], err);
    return rc;
}

int skv__mgr_store_admin_domain_user(skv__db *db, const char *domain,
                                     char *buf, size_t bufsz, skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT name FROM users"
        " WHERE domain=? ORDER BY name LIMIT 1", 1, domain, NULL, err);
}

int skv__mgr_store_admin_domain_project(skv__db *db, const char *domain,
                                        char *buf, size_t bufsz,
                                        skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT name FROM"
        " projects WHERE domain=? ORDER BY name LIMIT 1", 1, domain, NULL,
        err);
}

int skv__mgr_store_admin_domain_active(skv__db *db, const char *name,
                                       bool *active, skv_error *err)
{
    return skv__mgr_store_admin_flag(db, "SELECT active FROM domains WHERE"
                                     " name=?", name, active, err);
}

int skv__mgr_store_admin_domain_has_group(skv__db *db, const char *domain,
                                          const char *group, skv_error *err)
{
    return skv__mgr_store_admin_get(db, NULL, 0, "SELECT 1 FROM domain_groups"
        " WHERE domain=? AND resource_group=?", 2, domain, group, err);
}
