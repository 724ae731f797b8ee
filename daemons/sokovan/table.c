/* Aligned text tables: columns padded to their widest cell (counted in
 * characters, not bytes, so UTF-8 names line up), two spaces apart.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_table_init(cli_table *t, size_t ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    cli_table_row(t, header);
}

void cli_table_row(cli_table *t, const char *const *cells)
{
    char **c = realloc(t->cells, (t->nrows + 1) * t->ncols * sizeof *c);
    if (!c) {
        cli_fail("out of memory");
        exit(CLI_FAIL);
    }
    t->cells = c;
    for (size_t i = 0; i < t->ncols; i++) {
        /* one row per line, and nothing a terminal would obey */
        c[t->nrows * t->ncols + i] =
            cli_clean_dup(cells[i] && cells[i][0] ? cells[i] : "-");
    }
    t->nrows++;
}

static size_t width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    return n;
}

void cli_table_print(const cli_table *t, FILE *f)
{
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w)
        return;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t i = 0; i < t->ncols; i++) {
            size_t n = width(t->cells[r * t->ncols + i]);
            if (n > w[i])
                w[i] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t i = 0; i < t->ncols; i++) {
            const char *s = t->cells[r * t->ncols + i];
            fputs(s, f);
            if (i + 1 < t->ncols)
                fprintf(f, "%*s", (int)(w[i] - width(s) + 2), "");
        }
        fputc('\n', f);
    }
    free(w);
}

void cli_table_free(cli_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
