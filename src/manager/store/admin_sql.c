/* Statement helpers of the admin store: most admin lookups take one or two
 * names and want one text back.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_sql.h"

int skv__mgr_store_admin_nomem(skv_error *err)
{
    return skv__err(err, SKV_ENOMEM, "admin store: out of memory");
}

static void bind_args(skv__db_stmt *st, int n, const char *a, const char *b)
{
    if (n >= 1)
        skv__db_bind_text(st, 1, a);
    if (n >= 2)
        skv__db_bind_text(st, 2, b);
}

int skv__mgr_store_admin_get(skv__db *db, char *buf, size_t bufsz,
                             const char *sql, int n, const char *a,
                             const char *b, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_args(st, n, a, b);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW && buf && bufsz)
        skv__mgr_store_admin_col_copy(st, 0, buf, bufsz);
    skv__db_done(st);
    return rc;    /* SKV__DB_ROW is 1, SKV__DB_DONE 0 */
}

int skv__mgr_store_admin_flag(skv__db *db, const char *sql, const char *a,
                              bool *flag, skv_error *err)
{
    *flag = false;
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, a);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        *flag = skv__db_column_int64(st, 0) != 0;
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_admin_finish(skv__db_stmt *st, skv_error *err)
{
    int rc = skv__db_step(st, err);
    skv__db_done(st);
    if (rc == SKV__DB_ROW)    /* a write returns no rows */
        rc = skv__err(err, SKV_EIO, "admin store: a write returned a row");
    return rc;
}

int skv__mgr_store_admin_put(skv__db *db, const char *sql, int n,
                             const char *a, const char *b, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_args(st, n, a, b);
    return skv__mgr_store_admin_finish(st, err);
}

int skv__mgr_store_admin_texts(skv__db *db, char ***v, size_t *n,
                               const char *sql, int nargs, const char *a,
                               skv_error *err)
{
    *v = NULL;
    *n = 0;
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_args(st, nargs, a, NULL);
    int s = SKV__DB_DONE;
    while (!rc && (s = skv__db_step(st, err)) == SKV__DB_ROW)
        rc = skv__mgr_store_admin_push_col(v, n, st, 0, err);
    if (!rc && s < 0)
        rc = s;
    skv__db_done(st);
    if (rc) {
        skv__mgr_store_admin_strv_free(*v, *n);
        *v = NULL;
        *n = 0;
    }
    return rc;
}

char *skv__mgr_store_admin_col_dup(skv__db_stmt *st, int i)
{
    const char *t = skv__db_column_text(st, i);
    return t ? skv__strdup(t) : NULL;
}

void skv__mgr_store_admin_col_copy(skv__db_stmt *st, int i, char *buf,
                                   size_t bufsz)
{
    const char *t = skv__db_column_text(st, i);
    snprintf(buf, bufsz, "%s", t ? t : "");
}

void *skv__mgr_store_admin_grow(void **arr, size_t *n, size_t elem)
{
    char *p = skv__reallocarray(*arr, *n + 1, elem);
    if (!p)
        return NULL;
    *arr = p;
    memset(p + *n * elem, 0, elem);
    return p + (*n)++ * elem;
}

int skv__mgr_store_admin_push_col(char ***v, size_t *n, skv__db_stmt *st,
                                  int i, skv_error *err)
{
    char **slot = skv__mgr_store_admin_grow((void **)v, n, sizeof(char *));
    if (slot && (*slot = skv__mgr_store_admin_col_dup(st, i)))
        return 0;
    if (slot)
        (*n)--;    /* an empty slot is not handed back */
    return skv__mgr_store_admin_nomem(err);
}

void skv__mgr_store_admin_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        skv__free(v[i]);
    skv__free(v);
}

int skv__mgr_store_admin_split(char ***out, size_t *n, const char *csv,
                               skv_error *err)
{
    *out = NULL;
    *n = 0;
    for (const char *s = csv; s && *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char **slot = skv__mgr_store_admin_grow((void **)out, n,
                                                sizeof(char *));
        if (!slot || !(*slot = skv__strndup(s, len))) {
            if (slot)
                (*n)--;
            skv__mgr_store_admin_strv_free(*out, *n);
            *out = NULL;
            *n = 0;
            return skv__mgr_store_admin_nomem(err);
        }
        s = e ? e + 1 : s + len;
    }
    return 0;
}

/* Fixed statements per table: names never reach SQL text. */
static const struct {
    const char *exists, *names;
} tables[] = {
    [SKV__MGR_STORE_ADMIN_DOMAINS] = {
        "SELECT 1 FROM domains WHERE name=?",
        "SELECT name FROM domains ORDER BY name"},
    [SKV__MGR_STORE_ADMIN_PROJECTS] = {
        "SELECT 1 FROM projects WHERE name=?",
        "SELECT name FROM projects ORDER BY name"},
    [SKV__MGR_STORE_ADMIN_USERS] = {
        "SELECT 1 FROM users WHERE name=?",
        "SELECT name FROM users ORDER BY name"},
    [SKV__MGR_STORE_ADMIN_POLICIES] = {
        "SELECT 1 FROM resource_policies WHERE name=?",
        "SELECT name FROM resource_policies ORDER BY name"},
    [SKV__MGR_STORE_ADMIN_GROUPS] = {
        "SELECT 1 FROM resource_groups WHERE name=?",
        "SELECT name FROM resource_groups ORDER BY name"},
};

static int table_check(skv__mgr_store_admin_table t, skv_error *err)
{
    if ((unsigned)t >= sizeof tables / sizeof tables[0])
        return skv__err(err, SKV_EINVAL, "admin store: no table %d", (int)t);
    return 0;
}

int skv__mgr_store_admin_exists(skv__db *db, skv__mgr_store_admin_table t,
                                const char *name, skv_error *err)
{
    int rc = table_check(t, err);
    return rc ? rc : skv__mgr_store_admin_get(db, NULL, 0, tables[t].exists,
                                              1, name, NULL, err);
}

int skv__mgr_store_admin_names(skv__db *db, skv__mgr_store_admin_table t,
                               char ***v, size_t *n, skv_error *err)
{
    *v = NULL;
    *n = 0;
    int rc = table_check(t, err);
    return rc ? rc : skv__mgr_store_admin_texts(db, v, n, tables[t].names, 0,
                                                NULL, err);
}
