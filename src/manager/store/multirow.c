/* Multi-row INSERT texts: one statement (one step, one round trip) for a
 * batch's rows instead of one per row. Both engines take
 * INSERT ... VALUES (..),(..); chunks stay far below SQLite's bound
 * parameter limit (999 before 3.32) and PostgreSQL's 65535.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
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

int skv__db_values_sql(char *buf, size_t cap, const char *head, int cols,
                       size_t rows, const char *tail, skv_error *err)
{
    size_t w = (size_t)snprintf(buf, cap, "%s ", head);
    for (size_t r = 0; r < rows && w < cap; r++) {
        w += (size_t)snprintf(buf + w, cap - w, "%s(", r ? "," : "");
        for (int c = 0; c < cols && w < cap; c++)
            w += (size_t)snprintf(buf + w, cap - w, "%s?", c ? "," : "");
        if (w < cap)
            w += (size_t)snprintf(buf + w, cap - w, ")");
    }
    if (w < cap)
        w += (size_t)snprintf(buf + w, cap - w, "%s", tail);
    if (w >= cap)
        return skv__err(err, SKV_EINVAL, "manager database: %zu rows do "
                        "not fit one statement", rows);
    return 0;
}
