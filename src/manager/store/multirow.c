/* Multi-row INSERT texts: one statement (one step, one round trip) for a
 * batch's rows instead of one per row. Both engines take
 * INSERT ... VALUES (..),(..); chunks stay far below SQLite's bound
 * parameter limit (999 before 3.32) and PostgreSQL's 65535.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "history_buf.h"
#include "skv_internal.h"

size_t skv__db_chunk(size_t n)
{
    size_t c = SKV__DB_CHUNK_MAX;
    while (c > n)
        c /= 2;
    return c;
}

/* Appends len bytes at *w if they fit with the NUL after them; a text
 * that does not fit sets *w to cap, which stays "full" from then on. */
static void put(char *buf, size_t cap, size_t *w, const char *s, size_t len)
{
    if (*w >= cap || len >= cap - *w) {
        *w = cap;
        return;
    }
    memcpy(buf + *w, s, len);
    *w += len;
}

/* One row's "(?,?,..)" into row (room for 2 * cols + 1 bytes). */
static size_t row_text(char *row, int cols)
{
    size_t n = 0;
    row[n++] = '(';
    for (int c = 0; c < cols; c++) {
        if (c)
            row[n++] = ',';
        row[n++] = '?';
    }
    row[n++] = ')';
    return n;
}

/* Built by copying: it runs for every multi-row INSERT of a batch (the
 * history, nonces, allocations), and one snprintf per '?' was ~2 % of
 * the manager's CPU at 1,000 agents. */
int skv__db_values_sql(char *buf, size_t cap, const char *head, int cols,
                       size_t rows, const char *tail, skv_error *err)
{
    char row[2 + 2 * SKV__DB_COLS_MAX];
    size_t w = 0;
    if (cols < 1 || cols > SKV__DB_COLS_MAX)
        return skv__err(err, SKV_EINVAL, "manager database: %d columns in "
                        "one row", cols);
    size_t rl = row_text(row, cols);
    put(buf, cap, &w, head, strlen(head));
    put(buf, cap, &w, " ", 1);
    for (size_t r = 0; r < rows && w < cap; r++) {
        if (r)
            put(buf, cap, &w, ",", 1);
        put(buf, cap, &w, row, rl);
    }
    put(buf, cap, &w, tail, strlen(tail));
    if (w >= cap)
        return skv__err(err, SKV_EINVAL, "manager database: %zu rows do "
                        "not fit one statement", rows);
    buf[w] = '\0';
    return 0;
}
