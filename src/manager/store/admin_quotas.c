/* Rows of quotas (admin schema step 3): one owner's guarantee, hard limit
 * and borrow limit in one resource group. Vectors are stored as their
 * msgpack encoding (kinds preserved exactly), NULL when none; the column
 * for the limit is hard_limit (LIMIT is a keyword).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_sql.h"

static int slots_col(skv_slots **out, skv__db_stmt *st, int i,
                     skv_error *err)
{
    size_t n = 0;
    const void *b = skv__db_column_blob(st, i, &n);
    *out = NULL;
    return b && n > 0 ? skv_slots_decode(out, b, n, NULL, err) : 0;
}

static int quota_row(skv_proto_admin_quota_reply *rp, skv__db_stmt *st,
                     skv_error *err)
{
    skv_proto_quota *q = skv__mgr_store_admin_grow(
        (void **)&rp->quotas, &rp->n_quotas, sizeof *q);
    if (!q || !(q->scope = skv__mgr_store_admin_col_dup(st, 0)) ||
        !(q->owner = skv__mgr_store_admin_col_dup(st, 1)) ||
        !(q->resource_group = skv__mgr_store_admin_col_dup(st, 2)))
        return skv__mgr_store_admin_nomem(err);
    int rc = slots_col(&q->guaranteed, st, 3, err);
    if (!rc)
        rc = slots_col(&q->limit, st, 4, err);
    if (!rc)
        rc = slots_col(&q->borrow_limit, st, 5, err);
    return rc;
}

int skv__mgr_store_admin_quota_read(skv__db *db,
                                    skv_proto_admin_quota_reply *rp,
                                    const char *scope, const char *owner,
                                    const char *group, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT scope, owner, resource_group,"
        " guaranteed, hard_limit, borrow_limit FROM quotas"
        " WHERE (CAST(? AS TEXT) IS NULL OR scope=?)"
        " AND (CAST(? AS TEXT) IS NULL OR owner=?)"
        " AND (CAST(? AS TEXT) IS NULL OR resource_group=?)"
        " ORDER BY resource_group, scope, owner", &st, err);
    if (rc)
        return rc;
    const char *v[3] = {scope, owner, group};
    for (int i = 0; i < 3; i++) {
        skv__db_bind_text(st, 2 * i + 1, v[i]);
        skv__db_bind_text(st, 2 * i + 2, v[i]);
    }
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = quota_row(rp, st, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    return rc;
}

/* A vector's encoding; NULL (and len 0) for none or an empty one. */
static int encode(void **buf, size_t *len, const skv_slots *v,
                  skv_error *err)
{
    *buf = NULL;
    *len = 0;
    return v && skv_slots_count(v) > 0 ? skv_slots_encode(buf, len, v, err)
                                       : 0;
}

int skv__mgr_store_admin_quota_put(skv__db *db, const skv_proto_quota *q,
                                   bool insert, skv_error *err)
{
    void *b[3] = {NULL, NULL, NULL};
    size_t n[3];
    const skv_slots *v[3] = {q->guaranteed, q->limit, q->borrow_limit};
    int rc = 0;
    for (int i = 0; !rc && i < 3; i++)
        rc = encode(&b[i], &n[i], v[i], err);
    skv__db_stmt *st = NULL;
    if (!rc)
        rc = skv__db_prepare(db, insert
            ? "INSERT INTO quotas (guaranteed, hard_limit, borrow_limit,"
              " scope, owner, resource_group) VALUES (?, ?, ?, ?, ?, ?)"
            : "UPDATE quotas SET guaranteed=?, hard_limit=?, borrow_limit=?"
              " WHERE scope=? AND owner=? AND resource_group=?", &st, err);
    if (!rc) {
        for (int i = 0; i < 3; i++)
            skv__db_bind_blob(st, i + 1, b[i], n[i]); /* NULL binds NULL */
        skv__db_bind_text(st, 4, q->scope);
        skv__db_bind_text(st, 5, q->owner);
        skv__db_bind_text(st, 6, q->resource_group);
        rc = skv__mgr_store_admin_finish(st, err);
    }
    for (int i = 0; i < 3; i++)
        skv_free(b[i]);
    return rc;
}

int skv__mgr_store_admin_quota_delete(skv__db *db, const char *scope,
                                      const char *owner, const char *group,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "DELETE FROM quotas WHERE scope=? AND"
                             " owner=? AND resource_group=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, scope);
    skv__db_bind_text(st, 2, owner);
    skv__db_bind_text(st, 3, group);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_quota_of(skv__db *db, const char *scope,
                                  const char *owner, char *buf, size_t bufsz,
                                  skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT resource_group"
        " FROM quotas WHERE scope=? AND owner=? ORDER BY resource_group"
        " LIMIT 1", 2, scope, owner, err);
}

int skv__mgr_store_admin_quota_in_group(skv__db *db, const char *group,
                                        char *buf, size_t bufsz,
                                        skv_error *err)
{
    return skv__mgr_store_admin_get(db, buf, bufsz, "SELECT owner FROM quotas"
        " WHERE resource_group=? ORDER BY scope, owner LIMIT 1", 1, group,
        NULL, err);
}
