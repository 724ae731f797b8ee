/* Small helpers the store's files share: running a statement, slot
 * vectors as blobs, columns as strings.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "store_int.h"

int skv__mgr_store_run(skv__db_stmt *st, skv_error *err)
{
    int rc = skv__db_step(st, err);
    return rc < 0 ? rc : 0;
}

static void bind_texts(skv__db_stmt *st, size_t n, const char *const *args)
{
    for (size_t i = 0; i < n; i++)
        skv__db_bind_text(st, (int)i + 1, args[i]);
}

int skv__mgr_store_exec_text(skv__db *db, const char *sql, size_t n,
                             const char *const *args, int64_t *changes,
                             skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_texts(st, n, args);
    rc = skv__mgr_store_run(st, err);
    if (!rc && changes)
        *changes = skv__db_changes(st);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_text1(skv__db *db, const char *sql, size_t n,
                         const char *const *args, char *buf, size_t cap,
                         skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_texts(st, n, args);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *t = skv__db_column_text(st, 0);
        snprintf(buf, cap, "%s", t ? t : "");
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_int1(skv__db *db, const char *sql, size_t n,
                        const char *const *args, int64_t *out,
                        skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, sql, &st, err);
    if (rc)
        return rc;
    bind_texts(st, n, args);
    rc = skv__db_step(st, err);
    *out = rc == SKV__DB_ROW ? skv__db_column_int64(st, 0) : 0;
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_bind_slots(skv__db_stmt *st, int i, const skv_slots *s,
                              skv_error *err)
{
    if (!s) {
        skv__db_bind_null(st, i);
        return 0;
    }
    void *buf = NULL;
    size_t len = 0;
    int rc = skv_slots_encode(&buf, &len, s, err);
    if (rc)
        return rc;
    skv__db_bind_blob(st, i, buf, len);
    skv_free(buf);
    return 0;
}

int skv__mgr_store_col_slots(skv_slots **out, skv__db_stmt *st, int i,
                             skv_error *err)
{
    size_t n = 0;
    const void *b = skv__db_column_blob(st, i, &n);
    if (!b || !n)
        return skv_slots_new(out, err);
    return skv_slots_decode(out, b, n, NULL, err);
}

char *skv__mgr_store_col_dup(skv__db_stmt *st, int i)
{
    const char *t = skv__db_column_text(st, i);
    return t ? skv__strdup(t) : NULL;
}

int skv__mgr_store_col_list(skv__db_stmt *st, int i, char ***out,
                            size_t *n, skv_error *err)
{
    *out = NULL;
    *n = 0;
    int rc;
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        char **v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (v)
            *out = v;
        if (!v || !(v[*n] = skv__mgr_store_col_dup(st, i))) {
            skv__mgr_store_ids_free(*out, *n);
            *out = NULL;
            *n = 0;
            return skv__err(err, SKV_ENOMEM, "out of memory");
        }
        (*n)++;
    }
    if (rc < 0) {
        skv__mgr_store_ids_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}

void skv__mgr_store_ids_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv__free(v[i]);
    skv__free(v);
}
