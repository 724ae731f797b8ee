/* db.h's values on PostgreSQL: parameters go as text (the server parses
 * them into the column's type) except blobs, which go binary so no byte
 * needs escaping; results come as text and are decoded by column type
 * (integers, floats, numeric, bool, text, bytea).
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_pg_int.h"
#include "skv_internal.h"

/* pg_type OIDs (catalog constants, stable across versions). */
enum { BOOLOID = 16, BYTEAOID = 17, INT8OID = 20, INT2OID = 21,
       INT4OID = 23, TEXTOID = 25, FLOAT4OID = 700, FLOAT8OID = 701,
       NUMERICOID = 1700 };

void skv__pg_clear_binds(pg_stmt *s)
{
    for (int i = 0; i < s->nparams; i++) {
        skv__free(s->values[i]);
        s->values[i] = NULL;
        s->lengths[i] = 0;
        s->formats[i] = 0;
        s->types[i] = 0;
    }
}

void skv__pg_clear_row(pg_stmt *s)
{
    if (!s->blobs || !s->res)
        return;
    for (int c = 0; c < PQnfields(s->res); c++) {
        PQfreemem(s->blobs[c]);
        s->blobs[c] = NULL;
    }
}

/* Keep a copy of n bytes as parameter i (1-based); a bad index or no
 * memory is remembered for the next step (db.c). */
static void keep(skv__db_stmt *st, int i, const void *p, size_t n,
                 int format, Oid type)
{
    pg_stmt *s = skv__pg_stmt(st);
    if (i < 1 || i > s->nparams || n > INT32_MAX) {
        if (!st->bind_rc)
            st->bind_rc = SKV_EINVAL;
        return;
    }
    char *v = NULL;
    if (p && !(v = skv__malloc(n + 1))) {
        if (!st->bind_rc)
            st->bind_rc = SKV_ENOMEM;
        return;
    }
    if (v) {
        memcpy(v, p, n);
        v[n] = '\0';
    }
    skv__free(s->values[i - 1]);
    s->values[i - 1] = v;
    s->lengths[i - 1] = (int)n;
    s->formats[i - 1] = format;
    s->types[i - 1] = type;
}

void skv__pg_bind_int64(skv__db_stmt *st, int i, int64_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)v);
    keep(st, i, buf, (size_t)n, 0, INT8OID);
}

void skv__pg_bind_double(skv__db_stmt *st, int i, double v)
{
    char buf[32];
    int n = isnan(v)   ? snprintf(buf, sizeof(buf), "NaN")
            : isinf(v) ? snprintf(buf, sizeof(buf), v > 0 ? "Infinity"
                                                          : "-Infinity")
                       : snprintf(buf, sizeof(buf), "%.17g", v);
    keep(st, i, buf, (size_t)n, 0, FLOAT8OID);
}

void skv__pg_bind_text(skv__db_stmt *st, int i, const char *s)
{
    keep(st, i, s, strlen(s), 0, TEXTOID);
}

/* A zero-length blob is an empty bytea, not NULL: point at a dummy. */
void skv__pg_bind_blob(skv__db_stmt *st, int i, const void *p, size_t n)
{
    keep(st, i, n ? p : "", n, 1, BYTEAOID);
}

void skv__pg_bind_null(skv__db_stmt *st, int i)
{
    keep(st, i, NULL, 0, 0, 0);
}

/* The current row's cell as text, or NULL (SQL NULL, no row, bad col). */
static const char *cell(pg_stmt *s, int col)
{
    if (!s->res || s->row < 0 || s->row >= PQntuples(s->res) || col < 0 ||
        col >= PQnfields(s->res) || PQgetisnull(s->res, s->row, col))
        return NULL;
    return PQgetvalue(s->res, s->row, col);
}

int64_t skv__pg_column_int64(skv__db_stmt *st, int col)
{
    pg_stmt *s = skv__pg_stmt(st);
    const char *v = cell(s, col);
    if (!v)
        return 0;
    switch (PQftype(s->res, col)) {
    case BOOLOID:
        return v[0] == 't';
    case FLOAT4OID:
    case FLOAT8OID:
    case NUMERICOID:
        return (int64_t)strtod(v, NULL);
    default:
        return strtoll(v, NULL, 10);
    }
}

double skv__pg_column_double(skv__db_stmt *st, int col)
{
    pg_stmt *s = skv__pg_stmt(st);
    const char *v = cell(s, col);
    if (!v)
        return 0;
    return PQftype(s->res, col) == BOOLOID ? (v[0] == 't') : strtod(v, NULL);
}

/* Text as the server sent it; a bool reads "1"/"0" as SQLite would hold
 * it, so a caller never sees PostgreSQL's "t"/"f". */
const char *skv__pg_column_text(skv__db_stmt *st, int col)
{
    pg_stmt *s = skv__pg_stmt(st);
    const char *v = cell(s, col);
    if (v && PQftype(s->res, col) == BOOLOID)
        return v[0] == 't' ? "1" : "0";
    return v;
}

/* bytea arrives hex-escaped: decoded once per row and column, freed at
 * the next step, reset or done. Other types give their text's bytes. */
const void *skv__pg_column_blob(skv__db_stmt *st, int col, size_t *len)
{
    pg_stmt *s = skv__pg_stmt(st);
    const char *v = cell(s, col);
    *len = 0;
    if (!v)
        return NULL;
    if (PQftype(s->res, col) != BYTEAOID) {
        *len = (size_t)PQgetlength(s->res, s->row, col);
        return v;
    }
    if (!s->blobs &&
        !(s->blobs = skv__calloc((size_t)PQnfields(s->res),
                                 sizeof(*s->blobs) + sizeof(size_t))))
        return NULL;
    size_t *lens = (size_t *)(s->blobs + PQnfields(s->res));
    if (!s->blobs[col])
        s->blobs[col] = PQunescapeBytea((const unsigned char *)v, &lens[col]);
    *len = s->blobs[col] ? lens[col] : 0;
    return s->blobs[col];
}

bool skv__pg_column_is_null(skv__db_stmt *st, int col)
{
    return cell(skv__pg_stmt(st), col) == NULL;
}
